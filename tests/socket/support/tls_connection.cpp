#include "support/tls_connection.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace socket_test {

namespace tls = ringhttp::tls;

namespace {

// Room for what one call may write: a few full records.
constexpr std::size_t out_bytes = 4 * tls::wire_out_record_bytes;

}  // namespace

std::unique_ptr<tls::ClientContext> make_tls_client(const std::string& ca_file, const std::string& alpn) {
  tls::ClientConfig config;
  config.ca_file = ca_file;
  config.alpn = alpn;
  std::string error;
  std::unique_ptr<tls::ClientContext> context = tls::ClientContext::make(config, error);
  if (context == nullptr) throw std::runtime_error("TLS client context: " + error);
  return context;
}

TlsConnection::TlsConnection(std::uint16_t port, tls::ClientContext& context, std::string host) : tcp_(port) {
  std::string error;
  if (!context.start(session_, host, error)) throw std::runtime_error("TLS session: " + error);
}

void TlsConnection::send_out(tls::Wire& wire) {
  if (wire.out_len > 0) tcp_.send_all(std::string_view(wire.out, wire.out_len));
  wire.out_len = 0;
}

testing::AssertionResult TlsConnection::handshake() {
  std::vector<char> out(out_bytes);
  while (true) {
    tls::Wire wire{in_.data(), in_.size(), out.data(), 0, out.size()};
    const tls::Session::Status status = session_.handshake(wire);
    in_.erase(0, in_.size() - wire.in_len);
    send_out(wire);
    switch (status) {
      case tls::Session::Status::done: return testing::AssertionSuccess();
      case tls::Session::Status::want_io: break;
      case tls::Session::Status::closed:
      case tls::Session::Status::error: return testing::AssertionFailure() << session_.error_reason();
    }
    if (!in_.empty()) continue;  // it stopped for room
    const std::string more = tcp_.read_some();
    if (more.empty()) return testing::AssertionFailure() << "closed";
    in_ += more;
  }
}

void TlsConnection::send(std::string_view plaintext, std::size_t record_bytes) {
  std::string wire_bytes;
  std::vector<char> out(out_bytes);
  while (!plaintext.empty()) {
    tls::Wire wire{nullptr, 0, out.data(), 0, out.size()};
    const std::string_view record = plaintext.substr(0, record_bytes);
    const std::size_t taken = session_.write(wire, record.data(), record.size());
    if (taken == 0) throw std::runtime_error("TLS write failed: " + session_.error_reason());
    wire_bytes.append(wire.out, wire.out_len);
    plaintext.remove_prefix(taken);
  }
  tcp_.send_all(wire_bytes);
}

void TlsConnection::send_close_notify() {
  std::vector<char> out(out_bytes);
  tls::Wire wire{nullptr, 0, out.data(), 0, out.size()};
  if (!session_.close(wire)) throw std::runtime_error("no room for a close_notify");
  send_out(wire);
}

std::string TlsConnection::read_some() {
  std::vector<char> out(out_bytes);
  while (true) {
    tls::Wire wire{in_.data(), in_.size(), out.data(), 0, out.size()};
    std::size_t n = 0;
    const tls::Session::Status status = session_.read(wire, plain_.data(), plain_.size(), n);
    in_.erase(0, in_.size() - wire.in_len);
    send_out(wire);
    switch (status) {
      case tls::Session::Status::done: return std::string(plain_.data(), n);
      case tls::Session::Status::closed: closed_by_notify_ = true; return {};
      case tls::Session::Status::error: throw std::runtime_error("TLS read failed: " + session_.error_reason());
      case tls::Session::Status::want_io: break;
    }
    if (!in_.empty()) continue;
    const std::string more = tcp_.read_some();
    if (more.empty()) return {};
    in_ += more;
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
