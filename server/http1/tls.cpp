// HTTPS: the connection's TLS session between the engine and the HTTP
// session, the same on both backends, through core/tls/stream.hpp as the
// client's is. Received ciphertext is read by OpenSSL straight from the
// receive buffer it arrived in; each record's plaintext goes to the parser
// at once, and what a paused parser leaves is held in spill blocks. A
// batch of responses is built as on plain HTTP (send_batch.hpp) and
// encrypted into the output block's outbox, which leaves in one send; a
// batch larger than the outbox goes out in as many sends, each started
// when the last is done. Nothing here allocates: OpenSSL's own record
// buffers come and go with SSL_MODE_RELEASE_BUFFERS.

#include "server/http1/session.hpp"

#include <cassert>
#include <cstring>

namespace ringhttp::server::http1 {
namespace tls_detail {

// The answer to a plain HTTP request on the HTTPS port, in plain HTTP (as
// nginx gives one), so that a user who typed http:// learns why.
inline constexpr std::string_view plain_http_body = "This port speaks HTTPS: use an https:// URL.\n";
inline constexpr std::string_view plain_http_answer =
    "HTTP/1.1 400 Bad Request\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 45\r\n"
    "Connection: close\r\n"
    "\r\n"
    "This port speaks HTTPS: use an https:// URL.\n";
static_assert(plain_http_body.size() == 45 && plain_http_answer.ends_with(plain_http_body));

}  // namespace tls_detail

void Session::tls_start(Connection& conn) {
  assert(tls_ != nullptr);
  std::string error;
  if (!tls_->start(conn.tls, error)) {
    // Out of memory: the connection cannot be served.
    counters_.tls_handshake_failures[std::size_t(tls::Failure::other)].add();
    abort(conn);
    return;
  }
  ++tls_handshakes_;
  counters_.tls_handshakes_inflight.set(tls_handshakes_);
  conn.header_deadline_ms = now_ms_ + options_.tls_handshake_timeout_ms;
}

// Reads what `chunk` holds: handshake messages, then records whose
// plaintext is parsed one at a time. The connection has its output block:
// what OpenSSL writes meanwhile (handshake messages, tickets, alerts) goes
// to its outbox, sent after the batch.
void Session::tls_consume(Connection& conn, InputChunk chunk) {
  assert(conn.output != nullptr && !chunk.decrypted);
  dirty_.mark(conn);
  const char* in = chunk.data;
  std::size_t in_len = chunk.len;
  Parsed parsed{};
  std::size_t plain_len = 0;
  const tls::ReadEnd end = tls::read_records(
      conn.tls, conn.output->tls_box, in, in_len, {tls_plain_.get(), tls::record_plaintext_bytes_max},
      [&] {
        tls_handshake_done(conn);
        return true;
      },
      [&](const char* plain, std::size_t n) {
        counters_.tls_plaintext_in.add(n);
        plain_len = n;
        parsed = parse(conn, plain, std::uint32_t(n));
        return !parsed.paused && conn.state == ConnState::open;
      });
  chunk.data = in;
  chunk.len = std::uint32_t(in_len);
  switch (end) {
    case tls::ReadEnd::drained: return release_chunk(chunk);
    case tls::ReadEnd::no_room:
      // The outbox is full: the rest is read once it is sent (its send's
      // completion resumes input).
      hold(conn, chunk, true);
      if (conn.state == ConnState::open) pause_input(conn);
      return;
    case tls::ReadEnd::stopped:
      if (!parsed.paused) {
        // The request was refused and the connection drains: the rest
        // means nothing.
        return release_chunk(chunk);
      }
      // The ciphertext not read yet waits behind the plaintext the parser
      // left: both at the front, in that order.
      if (conn.state != ConnState::open || chunk.len == 0) {
        release_chunk(chunk);
      } else {
        hold(conn, chunk, true);
      }
      if (conn.state == ConnState::open) {
        hold_decrypted(conn, tls_plain_.get() + parsed.consumed, std::uint32_t(plain_len) - parsed.consumed);
      }
      if (conn.state == ConnState::open) pause_input(conn);
      return;
    case tls::ReadEnd::closed:
      // The peer's close_notify: it sends nothing more. As for its FIN,
      // answer what is queued, then close.
      release_chunk(chunk);
      conn.peer_eof = true;
      if (!conn.output_empty() || conn.send_inflight) {
        begin_drain(conn);
      } else {
        abort(conn);
      }
      return;
    case tls::ReadEnd::error:
      release_chunk(chunk);
      return tls_failed(conn);
  }
}

// Holds plaintext the parser left, in front of what is held, copied into
// spill blocks (a record's plaintext may be four blocks' worth).
bool Session::hold_decrypted(Connection& conn, const char* data, std::uint32_t len) {
  const std::uint32_t pieces = (len + recv_buffer_bytes - 1) / recv_buffer_bytes;
  for (std::uint32_t i = pieces; i > 0; --i) {
    const std::uint32_t from = (i - 1) * recv_buffer_bytes;
    const std::uint32_t piece = std::min(len - from, recv_buffer_bytes);
    std::int32_t id = 0;
    char* to = take_spill_block(id);
    if (to == nullptr) {
      counters_.input_overflow.add();
      abort(conn);
      return false;
    }
    std::memcpy(to, data + from, piece);
    hold(conn, InputChunk{to, piece, id, true}, true);
    if (conn.state != ConnState::open) return false;
  }
  return true;
}

void Session::tls_handshake_done(Connection& conn) {
  assert(tls_handshakes_ > 0);
  counters_.tls_handshakes_inflight.set(--tls_handshakes_);
  if (conn.tls.resumed()) {
    counters_.tls_handshakes_resumed.add();
  } else {
    counters_.tls_handshakes_full.add();
  }
  // From here the connection is an HTTP one: its idle time starts now.
  conn.last_activity_ms = now_ms_;
}

// The session failed: counted by its reason. The alert OpenSSL wrote, if
// any, is sent, then the connection is closed (tls_on_sent); a plain HTTP
// request is answered 400 in plain HTTP instead.
void Session::tls_failed(Connection& conn) {
  if (conn.tls.handshake_done()) {
    counters_.tls_failures.add();
  } else {
    counters_.tls_handshake_failures[std::size_t(conn.tls.failure())].add();
    assert(tls_handshakes_ > 0);
    counters_.tls_handshakes_inflight.set(--tls_handshakes_);
    if (conn.tls.failure() == tls::Failure::plain_http && conn.output != nullptr && conn.output->tls_box.empty() &&
        !conn.send_inflight) {
      constexpr std::string_view answer = tls_detail::plain_http_answer;
      static_assert(answer.size() <= OutputBlock::tls_out_bytes);
      tls::Outbox& box = conn.output->tls_box;
      answer.copy(box.data, answer.size());
      box.len = std::uint32_t(answer.size());
      counters_.responses[status_index(400)].add();
    }
  }
  if (conn.output == nullptr || conn.output->tls_box.empty()) return abort(conn);
  begin_drain(conn);  // input discarded from here
  dirty_.mark(conn);
}

// Encrypts what is queued, after what the outbox holds already, and sends
// the outbox. Starts a batch when none is in progress.
void Session::tls_flush(Connection& conn) {
  assert(conn.output != nullptr && !conn.send_inflight);
  OutputBlock& out = *conn.output;
  tls::Outbox& box = out.tls_box;
  const bool can_write = conn.tls.handshake_done() && !conn.tls.failed() && !conn.tls.close_queued();
  if (!out.tls_batch && can_write && out.out.size() > conn.written_responses) {
    out.tls_plain_left = prepare_batch(conn);  // 0: the first unsent response waits for a database result
    out.tls_batch = out.tls_plain_left > 0;
  }
  if (can_write && out.tls_plain_left > 0) {
    const std::size_t taken = tls::encrypt(conn.tls, box, out.msg, out.tls_plain_left);
    counters_.tls_plaintext_out.add(taken);
    out.tls_plain_left -= taken;
    if (conn.tls.failed()) {
      out.tls_plain_left = 0;
      return tls_failed(conn);
    }
  }
  if (box.empty()) return;
  const std::span<const char> bytes = box.begin_send();
  out.tls_iov = {const_cast<char*>(bytes.data()), bytes.size()};
  out.tls_msg = msghdr{};
  out.tls_msg.msg_iov = &out.tls_iov;
  out.tls_msg.msg_iovlen = 1;
  io_.send_message(conn, &out.tls_msg, bytes.size());
  conn.send_progress_ms = now_ms_;
  counters_.sends.add();
}

// The outbox's send is done. True when a batch is complete (retire it);
// false when more of it was sent, or there was no batch.
bool Session::tls_on_sent(Connection& conn) {
  OutputBlock& out = *conn.output;
  tls::Outbox& box = out.tls_box;
  box.sent();
  if (conn.tls.failed() && box.empty()) {
    abort(conn);  // the alert has gone
    return false;
  }
  if (!conn.tls.handshake_done() && !conn.tls.failed()) {
    // A handshake flight larger than the outbox (a long certificate chain)
    // goes on now that there is room; OpenSSL kept the rest.
    const tls::Session::Status status = tls::handshake(conn.tls, box);
    if (status == tls::Session::Status::done) tls_handshake_done(conn);
    if (status == tls::Session::Status::error) {
      tls_failed(conn);
      if (conn.state == ConnState::closing || conn.state == ConnState::free) return false;
    }
  }
  if (out.tls_plain_left > 0 || !box.empty()) {
    tls_flush(conn);
    if (conn.send_inflight || conn.state == ConnState::closing || conn.state == ConnState::free) return false;
  }
  if (!out.tls_batch) {
    after_output_progress(conn);
    return false;
  }
  out.tls_batch = false;
  return true;
}

// Queues the close_notify before the FIN of a connection that has drained.
// True when it is being sent (the drain finishes after it).
bool Session::tls_close_notify(Connection& conn) {
  if (!conn.tls.started() || !conn.tls.handshake_done() || conn.tls.failed() || conn.tls.close_queued()) {
    return false;
  }
  // Without a block to write it in (every one is lent), the FIN goes alone.
  if (conn.output == nullptr && !lend_output(conn)) return false;
  tls::Outbox& box = conn.output->tls_box;
  if (!tls::queue_close(conn.tls, box) || box.empty()) return false;
  tls_flush(conn);
  return conn.send_inflight;
}

// The connection is over: its handshake, if still in progress, is counted
// as failed for `reason`, and its OpenSSL objects are freed.
void Session::tls_release(Connection& conn, std::size_t reason) {
  if (!conn.tls.started()) return;
  if (!conn.tls.handshake_done() && !conn.tls.failed()) {
    counters_.tls_handshake_failures[reason].add();
    assert(tls_handshakes_ > 0);
    counters_.tls_handshakes_inflight.set(--tls_handshakes_);
  }
  conn.tls.reset();
}

}  // namespace ringhttp::server::http1
