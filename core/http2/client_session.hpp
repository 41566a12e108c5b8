#pragma once
// An HTTP/2 client connection over memory: libnghttp2 does the framing,
// HPACK and flow control; this class gives it the bytes a connection
// received and takes the bytes it has to send, and never touches a socket.
// Each stream's response is read as the HTTP/1.1 ResponseParser reads one:
// the status, the body counted and, when an expected body is given,
// compared piece by piece as it arrives and never kept. A stream ends
// whole, reset by the server (RST_STREAM and its code), refused (a
// GOAWAY that did not cover it, or REFUSED_STREAM), or with the
// connection's protocol error.

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/http/response_parser.hpp"

namespace ringhttp::http2 {

// How a stream ended.
enum class StreamEnd : std::uint8_t {
  complete,  // a whole final response
  reset,     // the server reset it (RST_STREAM with a code other than REFUSED_STREAM)
  refused,   // REFUSED_STREAM, or after a GOAWAY whose last stream is below it: safe to send again
  broken,    // the connection failed (a protocol or compression error) or closed under it
};

struct StreamResult {
  http::ResponseHead head;  // status, body bytes, body compared
  StreamEnd end = StreamEnd::complete;
  std::uint32_t error_code = 0;  // RST_STREAM's code (RFC 9113 section 7), 0 when complete
};

class ClientEvents {
 public:
  // A stream submitted with `user` is over; the caller may reuse `user`.
  virtual void on_stream_done(void* user, const StreamResult& result) = 0;
  // The server sent GOAWAY: no stream above last_stream_id will be answered.
  virtual void on_goaway(std::int32_t last_stream_id, std::uint32_t error_code) = 0;

 protected:
  ~ClientEvents() = default;
};

// The SETTINGS and windows a load generator asks for.
struct ClientSettings {
  // Streams this side lets the server open: none, since push is off.
  // Windows: large, so flow control never paces a load test (h2load's
  // defaults: 2^30 - 1 per stream and per connection); the received bytes
  // are acknowledged as they are read.
  std::uint32_t stream_window_bytes = (1u << 30) - 1;
  std::uint32_t connection_window_bytes = (1u << 30) - 1;
  // The most streams open at once from this side (-m); the server's own
  // SETTINGS_MAX_CONCURRENT_STREAMS can lower it.
  std::uint32_t max_streams = 1;
};

// One request: its header fields (pseudo-headers first), which must
// outlive every stream they are submitted on (they are not copied), and
// its body.
struct ClientRequest {
  std::span<const nghttp2_nv> headers;
  std::string_view body;
  std::string_view expected_body;  // compared with each response body when check_body
  bool check_body = false;
};

class ClientSession {
 public:
  enum class Status : std::uint8_t { ok, error };

  ClientSession() = default;
  ~ClientSession();
  ClientSession(const ClientSession&) = delete;
  ClientSession& operator=(const ClientSession&) = delete;

  // Starts a connection: the client preface and SETTINGS are queued for
  // output. False when nghttp2 cannot (out of memory).
  bool start(ClientEvents* events, const ClientSettings& settings);
  // Drops the connection's state. Every stream still open ends broken,
  // or refused if a GOAWAY's last stream is below it.
  void close();

  // Submits a request on a new stream; `user` comes back with its result.
  // False when no stream may open now (see can_submit) or the
  // connection is going away.
  bool submit(const ClientRequest& request, void* user);
  // A stream may open now: fewer open than both sides allow, no GOAWAY.
  bool can_submit() const;
  std::uint32_t open_streams() const { return open_; }
  // The server's SETTINGS_MAX_CONCURRENT_STREAMS (unbounded until it says).
  std::uint32_t server_max_streams() const;

  // Reads received bytes. Error: the connection broke (a protocol,
  // framing or compression error), or had broken before.
  Status receive(const char* data, std::size_t len);
  // nghttp2 ended the connection for an error in what it read: it queued
  // a GOAWAY with `broken_code()` and read no more. Known once that
  // GOAWAY is taken (take_output); send it, then close.
  bool broken() const { return broken_; }
  std::uint32_t broken_code() const { return broken_code_; }

  // Ends the connection from this side, with no stream open: queues a
  // GOAWAY(NO_ERROR) saying no stream of the server's was processed (RFC
  // 9113 section 6.8); send it, then close. False when nghttp2 cannot.
  bool leave();

  // Copies up to `room` bytes of output into `out`; returns how many.
  // What does not fit stays for the next call.
  std::size_t take_output(char* out, std::size_t room);
  bool has_output() const;
  // Neither side has anything more to say: close the connection.
  bool finished() const;

 private:
  // A stream's state, from its submit to its end.
  struct Stream {
    StreamResult result;
    void* user = nullptr;
    std::string_view body;  // the request body still to send
    std::string_view expected_body;
    bool check_body = false;
    bool in_use = false;
    bool complete = false;       // END_STREAM arrived on a final response
    bool reset_by_peer = false;  // an RST_STREAM frame arrived for it
    std::uint32_t index = 0;     // in streams_
    std::int32_t id = 0;         // its stream id, given at submit
  };
  friend struct Callbacks;

  // Ends a stream: frees its place and reports its result.
  void finish(Stream& s);

  nghttp2_session* session_ = nullptr;
  ClientEvents* events_ = nullptr;
  std::uint32_t max_streams_ = 0;
  std::uint32_t open_ = 0;
  bool goaway_ = false;  // the server's GOAWAY arrived
  std::int32_t goaway_last_id_ = 0;  // ... and the last stream it covers
  bool broken_ = false;
  std::uint32_t broken_code_ = 0;
  bool leaving_ = false;  // leave() queued this side's GOAWAY(NO_ERROR)
  // Streams' state, one per stream allowed at once, and the free ones.
  std::vector<Stream> streams_;
  std::vector<std::uint32_t> free_;
  // nghttp2's last output not yet taken: valid until its next mem_send.
  const std::uint8_t* pending_ = nullptr;
  std::size_t pending_len_ = 0;
};

}  // namespace ringhttp::http2
