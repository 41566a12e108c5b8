#pragma once
// A response waiting in a connection's output queue, described by where its
// bytes already live: the status line and fixed headers are static, the Date
// line is the shard's cache, headers added by middleware are static blocks
// built at start-up or a few formatted bytes in the slot, the framing tail (Content-Length digits and the
// Connection header) is the shard's framing cache or, for the rare cases it
// does not hold, the slot itself; a small serialized body is in the slot,
// large bodies are static or produced on demand (the stream).

#include <array>
#include <cassert>
#include <cstdint>
#include <string_view>

namespace ringhttp::server {

enum class BodySource : std::uint8_t {
  none,     // HEAD, interim 100, or empty
  fixed,    // `body` points at bytes that outlive the response (static data)
  scratch,  // `body` points into the slot's own `scratch`
  metrics,  // `body` points into the connection's metrics text
  stream,   // produced chunk by chunk from the pattern block as the socket drains
  deferred, // not yet known: a database query's result fills it (nothing
            // after it in the queue is sent before it)
};

struct PendingResponse {
  static constexpr std::size_t tail_bytes_max = 96;
  // A serialized body: the largest is POST /echo's answer to a 100-character
  // name that is all control characters (6 bytes each escaped) or
  // GET /profile's to a 128-byte subject likewise, under 800 bytes; the slot
  // is touched only as far as a body reaches.
  static constexpr std::size_t scratch_bytes_max = 1024;
  // Header blocks, as many as one route's chain adds plus the router's:
  // security headers, CORS, the rate limiter's policy, an Allow line.
  static constexpr std::size_t header_blocks_max = 4;
  // Headers formatted per response: the rate limiter's four lines
  // ("RateLimit-Policy: 10000000;w=3600" and kin) and a Retry-After.
  static constexpr std::size_t header_bytes_max = 192;

  std::string_view head;               // status line and fixed headers (static)
  std::string_view body;               // for fixed, scratch and metrics sources
  std::uint64_t stream_offset = 0;     // next stream byte to produce
  std::uint64_t stream_remaining = 0;  // stream bytes not yet sent
  std::string_view tail;               // Content-Length and Connection framing: the shard's cache or tail_bytes
  std::array<std::string_view, header_blocks_max> header_blocks{};  // static bytes (built at start-up)
  std::string_view header_text;                                     // points into header_bytes
  std::uint16_t status = 0;
  BodySource source = BodySource::none;
  bool interim = false;      // a 100 Continue: head only, no Date, no tail
  bool close_after = false;  // the connection closes once this is sent
  bool head_sent = false;    // headers already on the wire (a stream in progress)
  bool no_content = false;   // a 204: no body and no Content-Length
  // Kept for a deferred response, framed when its result comes.
  bool head_only = false;          // a HEAD request: the body's length, not its bytes
  bool http10_keep_alive = false;  // says Connection: keep-alive
  // The slot's own bytes, kept apart from the fields above (see
  // OutputQueue) and set once when the queue is built.
  char* tail_bytes = nullptr;    // tail_bytes_max
  char* header_bytes = nullptr;  // header_bytes_max
  char* scratch = nullptr;       // scratch_bytes_max

  // Ready for reuse. The byte arrays are not cleared: tail and body say
  // how much of them is meaningful, and zeroing them per request would cost
  // more than the rest of the reset.
  void reset() {
    head = {};
    body = {};
    stream_offset = 0;
    stream_remaining = 0;
    tail = {};
    header_blocks = {};
    header_text = {};
    status = 0;
    source = BodySource::none;
    interim = false;
    close_after = false;
    head_sent = false;
    no_content = false;
    head_only = false;
    http10_keep_alive = false;
  }
};

// A bounded FIFO of responses. Bounded so that a client pipelining without
// reading cannot make the server grow: when it is full, the connection stops
// parsing (and reading) until a send completes.
template <std::size_t Capacity>
class OutputQueue {
 public:
  static_assert((Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");
  static constexpr std::size_t capacity = Capacity;

  // Each slot's byte arrays live in bytes_, away from the slots' fields,
  // and are never initialized: a connection's pages are touched only as
  // far as its responses really write (an idle connection that answered one
  // small request touches the first), not the whole queue's 40 KiB.
  OutputQueue() {
    for (std::size_t i = 0; i < Capacity; ++i) {
      slots_[i].tail_bytes = bytes_[i].tail;
      slots_[i].header_bytes = bytes_[i].headers;
      slots_[i].scratch = bytes_[i].scratch;
    }
  }
  OutputQueue(const OutputQueue&) = delete;
  OutputQueue& operator=(const OutputQueue&) = delete;

  bool empty() const { return head_ == tail_; }
  bool full() const { return tail_ - head_ == Capacity; }
  std::size_t size() const { return tail_ - head_; }

  PendingResponse& push() {
    assert(!full());
    PendingResponse& r = slots_[tail_++ % Capacity];
    return r;
  }
  PendingResponse& at(std::size_t i) {
    assert(i < size());
    return slots_[(head_ + i) % Capacity];
  }
  const PendingResponse& at(std::size_t i) const {
    assert(i < size());
    return slots_[(head_ + i) % Capacity];
  }
  PendingResponse& front() { return at(0); }
  void pop() {
    assert(!empty());
    ++head_;
  }
  void clear() { head_ = tail_ = 0; }

 private:
  struct SlotBytes {
    char tail[PendingResponse::tail_bytes_max];
    char headers[PendingResponse::header_bytes_max];
    char scratch[PendingResponse::scratch_bytes_max];
  };
  std::array<PendingResponse, Capacity> slots_;
  std::array<SlotBytes, Capacity> bytes_;  // deliberately left uninitialized
  std::size_t head_ = 0;
  std::size_t tail_ = 0;
};

}  // namespace ringhttp::server
