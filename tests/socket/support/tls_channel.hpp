// A test client's TLS: one connection's session (core/tls) with the
// ciphertext it has received and not yet read, and the ciphertext it has
// written and not yet sent. It never touches the socket: the caller feeds
// it what recv() returned and sends what pending() holds, so a short send()
// on a nonblocking socket only leaves more pending. The hostile driver
// (nonblocking) and Connection (blocking, support/connection.hpp) use it.
//
// Each seal() is exactly one record, so that a script's pieces reach the
// server as records split where the script splits them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/tls/context.hpp"
#include "core/tls/session.hpp"

namespace socket_test {

class TlsChannel {
 public:
  using Status = ringhttp::tls::Session::Status;

  // Starts the client side of a connection to `host`, with its first flight
  // (the ClientHello) pending. False and `error` set when it cannot.
  bool start(ringhttp::tls::ClientContext& context, std::string_view host, std::string& error);

  // Ciphertext from the socket, for the next handshake() or read().
  void received(std::string_view ciphertext) { in_.append(ciphertext); }

  // Drives the handshake over what was received: done, want_io or error.
  // Its messages are pending after the call (the client's Finished too,
  // when it returns done).
  Status handshake();
  bool handshake_done() const { return session_.handshake_done(); }

  // Decrypts the next record into `out` (cap: record_plaintext_bytes_max):
  // done with n > 0, want_io when no whole record is left, closed on the
  // server's close_notify, error when the server's records fail.
  Status read(char* out, std::size_t cap, std::size_t& n);

  // Encrypts `plaintext` (1 to record_plaintext_bytes_max bytes) as one
  // record and makes it pending. False when the session has failed.
  bool seal(std::string_view plaintext);

  // Makes a close_notify pending; after it, seal() must not be called.
  void close();

  // Ciphertext to send: send a prefix of it, then say how much with sent().
  std::string_view pending() const { return std::string_view(out_).substr(out_at_); }
  void sent(std::size_t n);
  void drop_pending();

  // Received ciphertext not yet taken by OpenSSL (it keeps a partial
  // record inside, so this is empty after a read that returned want_io).
  std::size_t unread() const { return in_.size() - in_at_; }

  const ringhttp::tls::Session& session() const { return session_; }

 private:
  // A Wire over the unread ciphertext, with `room` bytes of space at the
  // end of `out_`; take() then keeps what the call read and wrote.
  ringhttp::tls::Wire wire(std::size_t room);
  void take(const ringhttp::tls::Wire& wire, std::size_t room);
  // handshake() or read() again while a call stopped for room in `wire.out`.
  template <typename Call>
  Status repeat(Call call);

  ringhttp::tls::Session session_;
  std::string in_;
  std::size_t in_at_ = 0;  // in_[in_at_, end) is unread
  std::string out_;
  std::size_t out_at_ = 0;  // out_[out_at_, end) is pending
};

}  // namespace socket_test
