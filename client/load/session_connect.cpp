// A load connection's socket: connect, and over https the TLS handshake;
// a failure retried after a back-off, and given up after too many in a row.

#include "client/load/session.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::client {

void LoadSession::connect(Connection& conn) {
  assert(conn.state == ConnState::idle);
  if (options_.requests_per_connection > 0) {
    // The socket's quota: what it sends before its Connection: close. With
    // -n, only what no other socket was promised; none left: no socket.
    std::uint64_t quota = options_.requests_per_connection;
    if (plan_.requests > 0) quota = std::min(quota, plan_.requests - requests_reserved_);
    if (quota == 0) return;
    conn.socket_quota = std::uint32_t(quota);
    if (plan_.requests > 0) requests_reserved_ += quota;
  }
  const net::Address& address = options_.target.addresses[conn.address_index];
  const int fd = io_->open_socket(address, conn);
  if (fd < 0) {
    // Out of descriptors or memory: a connect error, retried after a pause.
    give_back_quota(conn);
    count_error(ErrorClass::connect);
    conn.connect_failed = true;
    conn.reconnect_at_ns = now_ns_ + connect_backoff_ns;
    return;
  }
  conn.state = ConnState::connecting;
  conn.deadline_ns = now_ns_ + options_.connect_timeout_ns;
  conn.outstanding = 0;
  conn.sent_on_socket = 0;
  conn.then_len = 0;
  conn.peer_closing = conn.unsolicited = false;
  ++open_sockets_;
  io_->connect(conn, fd, address);
}

void LoadSession::on_connected(Connection& conn, std::int32_t res) {
  if (conn.state != ConnState::connecting) return dirty_->mark(conn);  // closing: to be closed
  if (res < 0) {
    // Refused, unreachable, or out of ports or descriptors: a connect error,
    // retried.
    conn.connect_failed = true;
    // The next attempt tries the target's next address.
    conn.address_index = std::uint32_t((conn.address_index + 1) % options_.target.addresses.size());
    if (++connect_failures_in_a_row_ >= connect_failures_in_a_row_max && gave_up_.empty()) {
      gave_up_ = std::to_string(connect_failures_in_a_row_) +
                 " connects in a row failed, the last with: " + std::strerror(-res);
      fail(conn, ErrorClass::connect);
      begin_stop();
      return;
    }
    return fail(conn, ErrorClass::connect);
  }
  if (tls_ == nullptr) {
    connect_failures_in_a_row_ = 0;
    conn.connect_failed = false;
    become_open(conn);
    arm_recv(conn);
    maybe_send(conn);
    return;
  }
  // https: the handshake first, within the connect's deadline; the first
  // request's clock starts after it.
  std::string error;
  if (!tls_->start(conn.tls, options_.target.host, error)) return handshake_failed(conn, error);
  conn.state = ConnState::handshake;
  arm_recv(conn);
  start_handshake(conn);
}

void LoadSession::become_open(Connection& conn) {
  conn.state = ConnState::open;
  if (conn.was_open && measuring_ && !stopping_) ++stats_.reconnects;
  conn.was_open = true;
  if (conn.h2 != nullptr) return h2_open(conn);
  http::ResponseParser::Config config = parser_config_;
  config.events = &conn;
  conn.parser.reset(config);
}

// The ClientHello goes out; reads drive the rest of the handshake.
void LoadSession::start_handshake(Connection& conn) {
  assert(conn.tls_box.empty() && conn.tls_held_len == 0);
  if (tls::handshake(conn.tls, conn.tls_box) == tls::Session::Status::error) {
    return handshake_failed(conn, conn.tls.error_reason());
  }
  pump_tls(conn);
}

void LoadSession::handshake_done(Connection& conn) {
  // A connection is made once its handshake is done.
  connect_failures_in_a_row_ = 0;
  conn.connect_failed = false;
  if (measuring_ && !stopping_) {
    ++stats_.tls_handshakes;
    if (conn.tls.resumed()) ++stats_.tls_resumed;
  }
  if (tls_protocol_.empty()) {
    tls_protocol_ = conn.tls.protocol();
    tls_cipher_ = conn.tls.cipher();
  }
  if (conn.h2 != nullptr && !h2_alpn_chosen(conn)) return;
  become_open(conn);
  maybe_send(conn);  // the request leaves with the handshake's last flight
}

// A handshake that fails is a tls error, retried after the connect back-off;
// after as many failures in a row as failed connects would take, the worker
// gives up and the report says why.
void LoadSession::handshake_failed(Connection& conn, const std::string& reason) {
  conn.connect_failed = true;
  if (++connect_failures_in_a_row_ >= connect_failures_in_a_row_max && gave_up_.empty()) {
    gave_up_ = std::to_string(connect_failures_in_a_row_) + " TLS handshakes in a row failed, the last with: " +
               (reason.empty() ? std::string("the server closed the connection") : reason);
    fail(conn, ErrorClass::tls);
    begin_stop();
    return;
  }
  fail(conn, ErrorClass::tls);
}

}  // namespace ringhttp::client
