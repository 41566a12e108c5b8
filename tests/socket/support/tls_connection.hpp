// An HTTPS client connection for tests, over a blocking socket
// (support/connection.hpp): the project's own TLS session (core/tls) drives
// the handshake and the records, so a test chooses exactly what goes on
// the wire: records of any size, half a request then an alert, a
// ClientHello offering only h2.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/tls/context.hpp"
#include "core/tls/session.hpp"
#include "support/connection.hpp"
#include "support/tls_channel.hpp"

namespace socket_test {

// A client context trusting `ca_file` and offering `alpn`; throws
// std::runtime_error when OpenSSL refuses the settings.
std::unique_ptr<ringhttp::tls::ClientContext> make_tls_client(const std::string& ca_file,
                                                              const std::string& alpn = "http/1.1");

class TlsConnection {
 public:
  // Connects to 127.0.0.1:port (TCP only); the session is for `host`.
  TlsConnection(std::uint16_t port, ringhttp::tls::ClientContext& context, std::string host = "localhost");

  // Runs the handshake: success, or OpenSSL's reason (the alert the server
  // sent, or "closed" when it closed first).
  testing::AssertionResult handshake();

  // Encrypts `plaintext` in records of at most `record_bytes` and sends
  // them, every record in one send.
  void send(std::string_view plaintext, std::size_t record_bytes = ringhttp::tls::record_plaintext_bytes_max);
  // Queues a close_notify and sends it.
  void send_close_notify();

  // The plaintext of the next record; empty when the server has closed
  // (closed_by_notify() says whether with a close_notify). Throws on
  // timeout or a TLS failure.
  std::string read_some();
  // Reads until `needle` has been seen `count` times; what was read. Throws
  // on timeout, or when the server closes first.
  std::string read_until_count(std::string_view needle, std::size_t count);
  bool closed_by_notify() const { return closed_by_notify_; }

  Connection& tcp() { return tcp_; }
  const ringhttp::tls::Session& session() const { return channel_.session(); }

 private:
  void send_pending();

  Connection tcp_;
  TlsChannel channel_;
  std::array<char, ringhttp::tls::record_plaintext_bytes_max> plain_{};
  bool closed_by_notify_ = false;
};

}  // namespace socket_test
