// Sending: one send per request, or per pipelined batch, from the shared
// bytes (paced in the open model), and over https through the outbox.

#include "client/load/session.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::client {

void LoadSession::maybe_send(Connection& conn) {
  if (conn.h2 != nullptr) return h2_send(conn);
  if (conn.state != ConnState::open || conn.send_inflight || conn.outstanding > 0 || stopping_) return;
  if (!may_send_more()) return;
  if (options_.rate > 0) {
    const std::uint64_t due_ns = conn.pacing.next_ns();
    if (now_ns_ < due_ns) return;
    conn.intended_ns = due_ns;
    conn.pacing.advance();
  }
  std::uint64_t count = options_.pipeline;
  if (plan_.requests > 0) count = std::min<std::uint64_t>(count, plan_.requests - requests_sent_);
  // --requests-per-connection: the socket's last request says Connection:
  // close, and nothing is sent after it.
  const bool churn = options_.requests_per_connection > 0;
  if (churn) {
    if (conn.sent_on_socket >= conn.socket_quota) return;
    count = std::min<std::uint64_t>(count, conn.socket_quota - conn.sent_on_socket);
    conn.sent_on_socket += std::uint32_t(count);
  }
  const bool closing = churn && conn.sent_on_socket == conn.socket_quota;
  requests_sent_ += count;
  conn.outstanding = std::uint32_t(count);
  conn.sent_at_ns = now_ns_;
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
  const std::string_view batch = request_.batch(next_request_, closing ? count - 1 : count);
  conn.send_base = batch.data();
  conn.send_offset = 0;
  conn.send_end = std::uint32_t(batch.size());
  conn.then_len = 0;
  if (closing) {
    const std::string_view last = request_.closing((next_request_ + count - 1) % request_.distinct());
    if (batch.empty()) {
      conn.send_base = last.data();
      conn.send_end = std::uint32_t(last.size());
    } else {
      conn.then_base = last.data();
      conn.then_len = std::uint32_t(last.size());
    }
  }
  if (varying_bodies_) {
    conn.expect_index = std::uint32_t(next_request_);
    conn.parser.expect_body(request_.expected_body(conn.expect_index));
  }
  // Once per send, not per request; without a placeholder distinct() is 1.
  next_request_ = (next_request_ + count) % request_.distinct();
  if (tls_ != nullptr) return pump_tls(conn);
  submit_send(conn);
}

// The batch's second range (a closing batch's last request), once the first
// is sent or handed to TLS; false when there is none.
bool LoadSession::next_send_range(Connection& conn) {
  if (conn.h2 != nullptr) return h2_next_output(conn);
  if (conn.then_len == 0) return false;
  conn.send_base = conn.then_base;
  conn.send_offset = 0;
  conn.send_end = conn.then_len;
  conn.then_len = 0;
  return true;
}

// https: encrypts the batch's plaintext into the outbox as far as it has
// room, and sends the outbox. Nothing is encrypted while a send is in
// flight: it goes when that send is done, so that reads keep their room.
void LoadSession::pump_tls(Connection& conn) {
  if (conn.send_inflight || !connected(conn)) return;
  if (conn.state == ConnState::open) {
    while (conn.send_offset < conn.send_end || next_send_range(conn)) {
      const std::size_t n =
          tls::encrypt(conn.tls, conn.tls_box, conn.send_base + conn.send_offset, conn.send_end - conn.send_offset);
      conn.send_offset += std::uint32_t(n);
      if (conn.send_offset < conn.send_end) break;  // the outbox is full
    }
  }
  flush_tls(conn);
}

// https: sends what the outbox holds, one send at a time. What the session
// writes while it is in flight lies beyond the send's range.
void LoadSession::flush_tls(Connection& conn) {
  if (conn.send_inflight || conn.tls_box.empty()) return;
  assert(connected(conn));
  const std::span<const char> bytes = conn.tls_box.begin_send();
  io_->send(conn, bytes.data(), bytes.size());
}

// Sends the rest of the batch's range; send_offset counts what was handed
// to a send (the engine resumes a short one).
void LoadSession::submit_send(Connection& conn) {
  assert(conn.send_offset < conn.send_end);
  io_->send(conn, conn.send_base + conn.send_offset, conn.send_end - conn.send_offset);
  conn.send_offset = conn.send_end;
}

void LoadSession::on_sent(Connection& conn, const io::Sent& sent) {
  if (!connected(conn)) return dirty_->mark(conn);  // closing: to be closed
  if (sent.kind == io::Sent::Kind::failed) return fail(conn, ErrorClass::write);
  if (tls_ != nullptr) {
    // The engine resumes a short send; once it is done, the area has room
    // again: for held ciphertext to be read, then for the rest of the batch.
    if (sent.kind == io::Sent::Kind::written || sent.kind == io::Sent::Kind::again) return;
    conn.tls_box.sent();
    if (conn.tls_held_len > 0) {
      read_held(conn);
    } else if (conn.state == ConnState::handshake) {
      // A flight that stopped for room with nothing left to read goes on
      // only when the session is called again (with no input, this costs
      // OpenSSL one look); our flights fit the outbox, so this is a guard.
      const char* none = nullptr;
      std::size_t none_len = 0;
      read_tls(conn, none, none_len);
    }
    pump_tls(conn);
    if (!conn.send_inflight) maybe_send(conn);
    return;
  }
  // Only one send is ever in flight per connection, so bytes cannot be
  // reordered; a short one (or one that wrote nothing) was resumed by the
  // engine.
  if (sent.kind == io::Sent::Kind::written || sent.kind == io::Sent::Kind::again) return;
  if (next_send_range(conn)) return submit_send(conn);
  maybe_send(conn);
}

}  // namespace ringhttp::client
