// Receiving and checking responses: TLS reads (and the ciphertext held
// while the output area has no room), each response checked, counted and
// timed.

#include "client/load/session.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::client {

void Connection::on_response(const http::ResponseHead& head) { session->on_response(*this, head); }

void LoadSession::arm_recv(Connection& conn) {
  assert(connected(conn));
  io_->arm_receive(conn);
}

void LoadSession::count_received(std::int32_t bytes) {
  if (measuring_ && !stopping_) stats_.bytes_received += std::uint32_t(bytes);
}

// A bundle's pieces (one buffer each) come in order, as separate receives.
// Nothing points into the buffer once this returns: the parser and OpenSSL
// copy what they keep (a record cut short), and so does the session for
// ciphertext it could not read yet, so the worker gives it back at once.
void LoadSession::on_received_piece(Connection& conn, const char* data, std::uint32_t len) {
  if (connected(conn)) consume(conn, data, len);
}

void LoadSession::after_receive(Connection& conn, io::Received::Kind kind) {
  switch (kind) {
    case io::Received::Kind::data:
      // A single-shot receive (a fallback) is re-armed after each delivery.
      if (connected(conn) && !conn.recv_armed) arm_recv(conn);
      break;
    case io::Received::Kind::eof:
      // Behind held ciphertext, the end waits until that is read.
      if (conn.tls_held_len > 0) {
        conn.tls_held_eof = true;
      } else {
        on_eof(conn);
      }
      break;
    // Not an end of stream when the buffer ring ran dry (-ENOBUFS): the
    // engine re-arms after the batch or on the tick.
    case io::Received::Kind::rearm:
    case io::Received::Kind::rearm_on_tick:
    case io::Received::Kind::cancelled: break;
    case io::Received::Kind::peer_gone:
      if (connected(conn)) fail(conn, ErrorClass::read);
      break;
  }
  if (conn.state == ConnState::closing) dirty_->mark(conn);  // to be closed
}

void LoadSession::consume(Connection& conn, const char* data, std::uint32_t len) {
  if (tls_ == nullptr) return consume_plaintext(conn, data, len);
  // Ciphertext behind held ciphertext must wait for it.
  if (conn.tls_held_len > 0) return hold_ciphertext(conn, data, len);
  // Read in place, from the receive buffer.
  std::size_t left = len;
  read_tls(conn, data, left);
  if (!connected(conn)) return;
  pump_tls(conn);  // what reading wrote: handshake messages, a key update's answer, an alert
  // Reading stopped for room in the outbox: the rest waits for its send.
  if (left > 0) hold_ciphertext(conn, data, left);
}

// https: reads the records [in, in + in_len) holds (the handshake's first,
// while it lasts) and hands their plaintext to the parser, until the
// session wants more ciphertext or room in the outbox, or the connection
// ends; `in` is advanced past what was read (core/tls/stream.hpp).
void LoadSession::read_tls(Connection& conn, const char*& in, std::size_t& in_len) {
  const tls::ReadEnd end = tls::read_records(
      conn.tls, conn.tls_box, in, in_len, plaintext_,
      [&] {
        // Open before the plaintext that may have come with the last flight.
        if (conn.state == ConnState::handshake) handshake_done(conn);
        return connected(conn);
      },
      [&](const char* plaintext, std::size_t n) {
        consume_plaintext(conn, plaintext, std::uint32_t(n));
        return connected(conn);
      });
  switch (end) {
    case tls::ReadEnd::drained:
    case tls::ReadEnd::no_room:
    case tls::ReadEnd::stopped: return;
    case tls::ReadEnd::closed: return on_peer_closed(conn);
    case tls::ReadEnd::error:
      if (conn.state == ConnState::handshake) return handshake_failed(conn, conn.tls.error_reason());
      return fail(conn, ErrorClass::tls);
  }
}

// https: keeps ciphertext the session cannot read yet, behind what is held
// already, until the outbox's send is done (read_held). Copied, so
// that the receive buffer goes back to the pool at once.
void LoadSession::hold_ciphertext(Connection& conn, const char* data, std::size_t len) {
  // Only room makes the session stop with ciphertext left, and room comes
  // back when the send in flight is done.
  assert(conn.send_inflight);
  if (len > tls_held_bytes_max - conn.tls_held_len) return fail(conn, ErrorClass::tls);
  // Once per slot at most, and only for a server that writes much during
  // our reads (key updates): no connection that does not needs it.
  if (conn.tls_held == nullptr) conn.tls_held = std::make_unique_for_overwrite<char[]>(tls_held_bytes_max);
  std::memcpy(conn.tls_held.get() + conn.tls_held_len, data, len);
  conn.tls_held_len += std::uint32_t(len);
}

// https: the outbox's send is done, so the held ciphertext has room to
// be read; what it still cannot read moves to the front for the next time.
void LoadSession::read_held(Connection& conn) {
  const char* in = conn.tls_held.get();
  std::size_t left = conn.tls_held_len;
  read_tls(conn, in, left);
  if (!connected(conn)) return;  // the held bytes go with the socket (maybe_release)
  std::memmove(conn.tls_held.get(), in, left);
  conn.tls_held_len = std::uint32_t(left);
  if (left == 0 && conn.tls_held_eof) {
    conn.tls_held_eof = false;
    on_eof(conn);
  }
}

void LoadSession::consume_plaintext(Connection& conn, const char* data, std::uint32_t len) {
  if (conn.h2 != nullptr) return h2_receive(conn, data, len);
  if (conn.parser.feed(data, len) != http::ResponseParser::Status::ok || conn.unsolicited) {
    return fail(conn, ErrorClass::parse);
  }
  if (conn.peer_closing) {
    // The server said it closes after that response: requests sent after it
    // will never be answered.
    if (conn.outstanding > 0) return fail(conn, ErrorClass::closed);
    return abort(conn);
  }
  maybe_send(conn);
}

// The peer's FIN, once everything received before it is read.
void LoadSession::on_eof(Connection& conn) {
  if (conn.state == ConnState::handshake) {
    handshake_failed(conn, "the server closed the connection in the handshake");
  } else if (conn.state == ConnState::open) {
    on_peer_closed(conn);
  }
}

void LoadSession::on_peer_closed(Connection& conn) {
  // The end of the stream completes a close-delimited response; anything
  // else still expected was cut off.
  if (conn.h2 != nullptr) return h2_peer_closed(conn);
  if (conn.parser.finish() != http::ResponseParser::Status::ok || conn.outstanding > 0) {
    return fail(conn, ErrorClass::closed);
  }
  abort(conn);
}

void LoadSession::on_response(Connection& conn, const http::ResponseHead& head) {
  if (conn.outstanding == 0) {
    conn.unsolicited = true;
    return;
  }
  --conn.outstanding;
  finish_requests(1);
  // The next response answers the next request of the batch: its own body.
  if (varying_bodies_) {
    if (++conn.expect_index == request_.distinct()) conn.expect_index = 0;
    if (conn.outstanding > 0) conn.parser.expect_body(request_.expected_body(conn.expect_index));
  }
  if (!head.keep_alive) conn.peer_closing = true;
  batch_wait_.observe(now_ns_ - conn.sent_at_ns);
  if (!measuring_ || stopping_) return;
  record_latency(conn.sent_at_ns, conn.intended_ns);
  count_response(head.status, head.body_matches);
}

void LoadSession::close_interval(std::uint64_t end_ns) {
  // Once a second, not per request: the sparse copy may allocate.
  stats_.intervals.push_back({interval_index_, end_ns, interval_->sparse()});
  interval_->reset();
  ++interval_index_;
  interval_end_ns_ += log_interval_ns;
}

}  // namespace ringhttp::client
