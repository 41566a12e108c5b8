#include "support/tls_connection.hpp"

#include <algorithm>
#include <stdexcept>

namespace socket_test {

namespace tls = ringhttp::tls;

std::unique_ptr<tls::ClientContext> make_tls_client(const std::string& ca_file, const std::string& alpn) {
  tls::ClientConfig config;
  config.ca_file = ca_file;
  config.alpn = alpn;
  std::string error;
  std::unique_ptr<tls::ClientContext> context = tls::ClientContext::make(config, error);
  if (context == nullptr) throw std::runtime_error("TLS client context: " + error);
  return context;
}

TlsConnection::TlsConnection(std::uint16_t port, tls::ClientContext& context, std::string host)
    : tcp_(port, ConnectOptions{.tls = false}) {
  // The ClientHello stays pending until handshake(): a test may first do
  // other things on the bare connection.
  std::string error;
  if (!channel_.start(context, host, error)) throw std::runtime_error("TLS session: " + error);
}

void TlsConnection::send_pending() {
  if (!channel_.pending().empty()) tcp_.send_all(channel_.pending());
  channel_.drop_pending();
}

testing::AssertionResult TlsConnection::handshake() {
  while (true) {
    send_pending();
    if (channel_.handshake_done()) return testing::AssertionSuccess();
    const std::string more = tcp_.read_some();
    if (more.empty()) return testing::AssertionFailure() << "closed";
    channel_.received(more);
    const TlsChannel::Status status = channel_.handshake();
    if (status == TlsChannel::Status::error || status == TlsChannel::Status::closed) {
      send_pending();  // the alert, if any
      return testing::AssertionFailure() << channel_.session().error_reason();
    }
  }
}

void TlsConnection::send(std::string_view plaintext, std::size_t record_bytes) {
  for (std::size_t at = 0; at < plaintext.size(); at += record_bytes) {
    if (!channel_.seal(plaintext.substr(at, record_bytes))) {
      throw std::runtime_error("TLS write failed: " + channel_.session().error_reason());
    }
  }
  send_pending();  // every record in one send
}

void TlsConnection::send_close_notify() {
  channel_.close();
  send_pending();
}

std::string TlsConnection::read_some() {
  while (true) {
    std::size_t n = 0;
    const TlsChannel::Status status = channel_.read(plain_.data(), plain_.size(), n);
    send_pending();
    switch (status) {
      case TlsChannel::Status::done: return std::string(plain_.data(), n);
      case TlsChannel::Status::closed: closed_by_notify_ = true; return {};
      case TlsChannel::Status::error:
        throw std::runtime_error("TLS read failed: " + channel_.session().error_reason());
      case TlsChannel::Status::want_io: break;
    }
    const std::string more = tcp_.read_some();
    if (more.empty()) return {};
    channel_.received(more);
  }
}

std::string TlsConnection::read_until_count(std::string_view needle, std::size_t count) {
  std::string all;
  std::size_t seen = 0;
  std::size_t from = 0;
  while (seen < count) {
    const std::string some = read_some();
    if (some.empty()) {
      throw std::runtime_error("closed after " + std::to_string(seen) + " of " + std::to_string(count) + " \"" +
                               std::string(needle) + "\"");
    }
    all += some;
    for (std::size_t at; (at = all.find(needle, from)) != std::string::npos;) {
      ++seen;
      from = at + needle.size();
    }
    // A needle split across two reads is found on the next pass.
    if (all.size() >= needle.size()) from = std::max(from, all.size() - needle.size() + 1);
  }
  return all;
}

}  // namespace socket_test
