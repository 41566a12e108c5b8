// Failing and closing: an error counted once, the requests it leaves
// unanswered finished as failures, every operation cancelled, and the
// socket closed once none is in flight.

#include "client/load/session.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::client {

void LoadSession::fail(Connection& conn, ErrorClass error) {
  count_error(error);
  // Requests that will never be answered are done, as failures.
  finish_requests(conn.outstanding);
  conn.outstanding = 0;
  abort(conn);
}

void LoadSession::abort(Connection& conn) {
  if (conn.state == ConnState::idle || conn.state == ConnState::closing) return;
  conn.state = ConnState::closing;
  io_->cancel_all(conn);
  // Closed after the batch once nothing of it is in flight (maybe_release),
  // at once if nothing was.
  dirty_->mark(conn);
}

// What a socket was promised and did not send goes back to the pool (-n
// with --requests-per-connection), for the slot's next socket or another's.
void LoadSession::give_back_quota(Connection& conn) {
  if (options_.requests_per_connection == 0 || plan_.requests == 0) return;
  assert(requests_reserved_ >= conn.socket_quota - conn.sent_on_socket);
  requests_reserved_ -= conn.socket_quota - conn.sent_on_socket;
  conn.socket_quota = conn.sent_on_socket = 0;
}

void LoadSession::maybe_release(Connection& conn) {
  if (conn.state != ConnState::closing || !io::closed(conn)) return;
  give_back_quota(conn);
  // The session and its bytes go with the socket; the buffers stay with
  // the slot.
  conn.tls.reset();
  conn.tls_box.clear();
  conn.tls_held_len = 0;
  conn.tls_held_eof = false;
  if (conn.h2 != nullptr) {
    conn.h2->session.close();  // its streams' ends are not counted: the socket is no longer open
    conn.h2->clear_streams();
  }
  io_->close(conn);
  conn.state = ConnState::idle;
  conn.outstanding = 0;
  assert(open_sockets_ > 0);
  --open_sockets_;
  conn.reconnect_at_ns = now_ns_ + (conn.connect_failed ? connect_backoff_ns : 0);
  dirty_->mark(conn);
}

}  // namespace ringhttp::client
