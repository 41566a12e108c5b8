// Closing a connection: gracefully (answer what is queued, half-close,
// linger reading until the peer's FIN) or at once (cancel every operation
// in flight); a slot is released only when none is left. And the deadline
// of every state, checked on the tick, and the reclaim of an idle
// connection when the table is full.

#include "server/http1/session.hpp"

#include <cassert>

#include "core/io/errno_class.hpp"
#include "server/reclaim_order.hpp"

namespace ringhttp::server::http1 {

void Session::begin_drain(Connection& conn) {
  if (conn.state != ConnState::open) return;
  conn.state = ConnState::draining;
  drop_held(conn);  // held input will never be parsed now
  conn.input_paused = false;
}

void Session::maybe_finish_drain(Connection& conn) {
  if (conn.state != ConnState::draining || conn.send_inflight || !conn.output_empty()) return;
  if (conn.peer_eof) {
    abort(conn);
    return;
  }
  // HTTPS: a close_notify first (as nginx sends), then the FIN once it is sent.
  if (tls_close_notify(conn)) return;
  // Half-close, then keep reading (and discarding) until the peer closes:
  // closing at once with unread input would send a reset that can destroy
  // the response before the peer reads it.
  conn.state = ConnState::lingering;
  conn.linger_deadline_ms = now_ms_ + linger_ms;
  io_.shutdown_write(conn);
  if (!conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
}

void Session::on_shutdown(Connection& conn, std::int32_t res) {
  // ENOTCONN: the peer reset first.
  if (res < 0) abort(conn);
  if (conn.state == ConnState::closing) dirty_.mark(conn);  // to be freed
}

void Session::abort(Connection& conn) {
  if (conn.state == ConnState::closing || conn.state == ConnState::free) return;
  conn.state = ConnState::closing;
  counters_.cancellations.add(io_.cancel_all(conn));
  // Freed after the batch once nothing of it is in flight (maybe_release),
  // at once if nothing was.
  dirty_.mark(conn);
}

void Session::maybe_release(Connection& conn) {
  // Pending zero-copy notifications count as in flight: their bytes may
  // still be read by the kernel until then, and some live in this slot.
  if (conn.state != ConnState::closing || !io::closed(conn)) return;
  drop_held(conn);
  tls_release(conn);
  conn.written_responses = 0;
  output_pool_.stop_waiting(conn);
  return_output(conn);
  conn.state = ConnState::free;
  conn.metrics_queued = false;
  counters_.connections_closed.add();
  io_.release(conn);
}

// Every state has a deadline. Lingering: the peer's FIN within linger_ms.
// Open or draining with output unsent: progress within --send-timeout-ms
// (a peer that stops reading, half-closed or not, cannot hold its slot).
// Open: a header section within --header-timeout-ms of its first byte, a
// body at --body-min-rate after --body-timeout-ms, and otherwise another
// request within --idle-timeout-ms.
void Session::check_timeouts(Connection& conn) {
  switch (conn.state) {
    case ConnState::lingering:
      if (now_ms_ >= conn.linger_deadline_ms) abort(conn);
      return;
    case ConnState::open:
    case ConnState::draining: break;
    default: return;
  }
  if (conn.send_inflight && now_ms_ - conn.send_progress_ms >= options_.send_timeout_ms) {
    counters_.timeouts_send.add();
    abort(conn);
    return;
  }
  if (conn.state != ConnState::open) return;
  if (conn.tls.started() && !conn.tls.handshake_done()) {
    // The handshake has its own deadline, from accept.
    if (now_ms_ >= conn.header_deadline_ms) {
      tls_release(conn, tls_timeout);
      abort(conn);
    }
    return;
  }
  if (conn.waiting_output) {
    // Every block stayed lent for as long as a header section may take: the
    // request cannot be answered in time, and there is no block to say so.
    if (now_ms_ - conn.waiting_since_ms >= options_.header_timeout_ms) {
      counters_.output_block_refusals.add();
      abort(conn);
    }
    return;
  }
  if (conn.parser.in_header_section() && !conn.input_paused) {
    if (now_ms_ >= conn.header_deadline_ms) {
      // Slowloris protection: a header section must arrive in time.
      counters_.timeouts_header.add();
      queue_error(conn, 408);
    }
    return;
  }
  if (conn.parser.in_body() && !conn.input_paused) {
    // A body may take longer the more of it arrives, but not forever: one
    // trickled a byte at a time is cut (Apache's RequestReadTimeout body=).
    const std::uint64_t allowed_ms =
        options_.body_timeout_ms + conn.parser.body_bytes() * 1000 / options_.body_min_rate;
    if (now_ms_ - conn.body_start_ms >= allowed_ms) {
      counters_.timeouts_body.add();
      queue_error(conn, 408);
    }
    return;
  }
  // Idle means nothing to do either way: a connection with output unsent
  // (a slow reader of a long response) is the send timeout's to judge.
  const bool output_pending = conn.send_inflight || !conn.output_empty();
  if (!output_pending && now_ms_ - conn.last_activity_ms >= options_.idle_timeout_ms) {
    counters_.timeouts_idle.add();
    abort(conn);
  }
}

// A slot closing already (its peer left, or a deadline passed) is freed
// after the batch, before any newcomer is opened (Shard::open_pending): as
// long as there are more of those than newcomers waiting, none is closed.
// Otherwise the oldest open connection with nothing in progress (no request
// begun, nothing queued or being sent) is closed to make room, in the order
// of reclaim_order.hpp. A scan of the table: it runs only when the table is
// full, once per newcomer.
bool Session::make_room(std::size_t promised) {
  std::size_t closing = 0;
  Connection* oldest = nullptr;
  for (std::uint32_t i = 0; i < table_.constructed(); ++i) {
    Connection& c = table_[i];
    if (c.state == ConnState::closing) ++closing;
    const bool idle = c.state == ConnState::open && !c.parser.in_message() && c.output_empty() && !c.send_inflight &&
                      c.held_empty();
    if (idle && (oldest == nullptr || reclaimed_before(c, *oldest))) oldest = &c;
  }
  // Each newcomer waiting was promised a closing slot (this function made
  // it one, or found one): there are never fewer.
  assert(closing >= promised);
  if (closing > promised) return true;
  if (oldest == nullptr) return false;
  counters_.connections_reclaimed.add();
  abort(*oldest);
  return true;
}

}  // namespace ringhttp::server::http1
