#pragma once
// One client connection: a slot in its shard's preallocated table. The slot
// holds what an idle keep-alive connection needs (its state, descriptor,
// generation, deadlines and the parser's own state: 488 bytes, asserted
// below); what a busy one needs more is lent by the shard from pools and given back when
// it is done with it (OutputBlock: the parser's buffers for a request in
// progress, the response queue and the send's iovecs; HeldBlock: the
// received chunks held while its input is paused).
//
// Lifetime: a slot is handed out at accept with a new generation, and freed
// only when the connection is closing and its in-flight operation count is
// zero, so no completion can arrive for a freed slot (the generation check
// in the shard catches it if one ever did, and counts it).

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <string>

#include "core/http/request_parser.hpp"
#include "core/io/engine.hpp"
#include "core/tls/session.hpp"
#include "core/tls/stream.hpp"
#include "server/held_input.hpp"
#include "server/middleware/client_key.hpp"
#include "server/response.hpp"

namespace ringhttp::server {

namespace http1 {
class Session;
}
struct OutputBlock;
struct HeldBlock;

enum class ConnState : std::uint8_t {
  free,       // slot unused
  open,       // reading requests and answering them
  draining,   // answering what is queued, input discarded; then shutdown(SHUT_WR)
  lingering,  // FIN sent; reading and discarding until the peer closes (so our
              // last response is not destroyed by a reset) or the linger time ends
  closing,    // every in-flight operation cancelled; freed when none is left
};

// No slot: the end of a list threaded through the table.
inline constexpr std::uint32_t no_slot = UINT32_MAX;

// Buffer ids from here on name a shard's spill blocks, not provided buffers.
inline constexpr std::int32_t spill_id_base = 1 << 20;

// Received bytes not yet parsed because the connection's input is paused.
struct InputChunk {
  const char* data = nullptr;
  std::uint32_t len = 0;
  std::int32_t buffer_id = -1;  // provided-buffer id, ReceiveBuffers::own_buffer, or a spill block (spill_id_base + n)
  bool decrypted = false;       // HTTPS: plaintext the session has read (else ciphertext still to read)
};

// The engine's part (slot, generation, socket, operations in flight,
// receive arming, the send's cursor) is the io::Link it derives from.
struct Connection final : io::Link, http::RequestEvents {
  // Responses queued per connection: bounds memory for a client that
  // pipelines without reading; with iovecs_per_response_max each they fit
  // one sendmsg (iovecs_max, below).
  static constexpr std::size_t responses_max = 32;
  // What one request may add to the queue: a 100 Continue and its final
  // response (or the error that ends it). A request is parsed only while
  // this much room is free, so no response ever finds the queue full.
  static constexpr std::size_t responses_per_request_max = 2;
  static_assert(responses_max >= responses_per_request_max);
  // Receive completions that may arrive between pausing input and the
  // cancel of the multishot receive taking effect (the kernel posts up to 32
  // per wake-up); more than this closes the connection.
  static constexpr std::size_t held_chunks_max = 64;
  // Of those, provided receive buffers a connection may keep: its share of
  // the shard's pool. Input beyond it is copied into the shard's spill
  // blocks and the buffer goes back at once, so clients that pipeline
  // without reading cannot take the buffers every other client is served
  // from (1,024 per shard: 128 such clients hold at most half).
  static constexpr std::uint8_t held_buffers_max = 4;
  // A stream chunk per send: a few iovecs over the shared pattern block.
  static constexpr std::size_t stream_iovecs_max = 4;
  // head, Date, middleware's header blocks and formatted headers, tail, body
  static constexpr std::size_t iovecs_per_response_max = 4 + PendingResponse::header_blocks_max + 1;
  static constexpr std::size_t iovecs_max = responses_max * iovecs_per_response_max + stream_iovecs_max;
  static_assert(iovecs_max <= 1024, "one sendmsg takes at most IOV_MAX (1024) iovecs");

  http1::Session* session = nullptr;  // the parser's callbacks go to it
  ClientKey peer;  // the peer's address, for the rate limiter
  ConnState state = ConnState::free;
  // The connection has pipelined far enough ahead to pause its input once:
  // from then on it receives one buffer per receive, so a pause no longer
  // lets a multishot receive fill buffers until its cancel lands.
  bool single_shot = false;
  bool input_paused = false;    // parser paused or queue full: no parsing, no reading
  bool peer_eof = false;        // the peer half-closed; answer what we have, then close
  bool metrics_queued = false;  // the output block's metrics_text is referenced by a queued response

  std::uint64_t last_activity_ms = 0;
  std::uint64_t header_deadline_ms = 0;
  std::uint64_t body_start_ms = 0;     // when the body being read began (its deadline grows with its bytes)
  std::uint64_t send_progress_ms = 0;  // when the send in flight last made progress
  std::uint64_t linger_deadline_ms = 0;
  std::uint64_t requests_done = 0;

  // The send batch in progress (its msghdr and iovecs are the output
  // block's; what it has left is the Link's send_left): what it retires once
  // written. The bytes the iovecs point at must stay unchanged until a
  // zero-copy send's notification too, so written responses stay queued
  // (`written_responses`) until no notification is pending (zc_pending).
  std::uint32_t send_retires = 0;       // whole responses the send carries
  std::uint64_t send_stream_bytes = 0;  // bytes of a stream left in progress at its end
  std::uint32_t written_responses = 0;  // at the front of `out`: written, not yet released

  // Chunks held while input is paused: a ring lent by the shard on the
  // first chunk held and given back when the last is taken. Null while none.
  HeldBlock* held = nullptr;
  std::uint8_t held_buffers = 0;  // held chunks that are provided buffers

  // HTTPS: the connection's TLS session, started at accept; empty on a
  // plain HTTP listener. Its ciphertext goes out from the output block.
  tls::Session tls;

  // The parser's buffers, the response queue and the send's iovecs, lent by
  // the session (Session::lend_output) while the connection has a request in
  // progress, a response queued or a send (or a zero-copy notification)
  // pending, and given back when it has none: an idle connection holds
  // none. Null while none is lent.
  OutputBlock* output = nullptr;
  bool waiting_output = false;  // on the shard's list for a block, input paused
  bool output_granted = false;  // handed a block off that list: resume its input after the batch
  std::uint64_t waiting_since_ms = 0;  // a waiter is closed after --header-timeout-ms of waiting
  std::uint32_t wait_prev = no_slot;  // neighbours on the shard's list of waiters
  std::uint32_t wait_next = no_slot;

  bool output_empty() const;
  std::size_t output_size() const;
  bool held_empty() const;

  // Its state only: its buffers are the output block's.
  http::RequestParser parser;

  void on_request_headers(const http::RequestHead& head) override;
  bool on_request(const http::RequestHead& head) override;
};

// What a busy connection borrows from its shard's pool (a SlotTable:
// constructed on first use, reused warmest first, touched only as far as
// requests and responses reach).
struct OutputBlock {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  // The send batch in flight: a cursor over `iov`, advanced by short
  // writes. The kernel has consumed the msghdr and iovecs by the time a
  // send's SQE is consumed (IORING_FEAT_SUBMIT_STABLE); they are left alone
  // until its result.
  msghdr msg;
  // A request in progress: the head, target, kept headers and small body
  // the parser keeps (RequestParser::Buffers).
  http::RequestParser::Buffers request;
  // The queue's slot fields first, then its byte arrays (touched only as
  // far as bodies reach), then the iovecs (filled by each flush, never
  // zeroed).
  OutputQueue<Connection::responses_max> out;
  std::array<iovec, Connection::iovecs_max> iov;
  // The small pieces of the send in flight, copied one after another
  // (send_batch.hpp): a batch of 32 small responses fits.
  std::array<char, 16 * 1024> staging;

  // HTTPS: the ciphertext the session wrote, in `tls_out` (core/tls/
  // stream.hpp). Room for four full records: a batch of up to 64 KiB of
  // plaintext (a stream's chunk) leaves in one send. Untouched on plain
  // HTTP.
  static constexpr std::size_t tls_out_bytes = 4 * tls::wire_out_record_bytes;
  tls::Outbox tls_box;
  // That send, as a message: a sendmsg honours the socket's O_NONBLOCK,
  // where io_uring's plain send does not (one a worker thread takes would
  // wait there while the peer reads nothing).
  iovec tls_iov{};
  msghdr tls_msg{};
  // The batch being encrypted: its plaintext is `msg`'s iovecs, of which
  // this much is not encrypted yet (advanced as a send cursor is).
  std::uint64_t tls_plain_left = 0;
  bool tls_batch = false;  // a batch of responses is being encrypted and sent
  // The body of a /metrics response queued (Connection::metrics_queued):
  // grown on a block's first /metrics, reused after.
  std::string metrics_text;
  std::array<char, tls_out_bytes> tls_out;
};

// The received chunks a paused connection holds, from a pool of its own:
// a waiter for an output block holds input but no block.
struct HeldBlock {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  HeldInput<InputChunk, Connection::held_chunks_max> chunks;
};

// What every connection costs while idle (docs/ARCHITECTURE.md, "Small
// slots, lent memory"): grow it only knowingly.
static_assert(sizeof(Connection) <= 488, "an idle connection's slot");

inline bool Connection::output_empty() const {
  return output == nullptr || (output->out.empty() && output->tls_box.empty());
}
inline std::size_t Connection::output_size() const { return output == nullptr ? 0 : output->out.size(); }
inline bool Connection::held_empty() const { return held == nullptr || held->chunks.empty(); }

}  // namespace ringhttp::server
