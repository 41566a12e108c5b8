#include "support/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>
#include <utility>

#include "core/tls/session.hpp"
#include "support/http_reader.hpp"
#include "support/suite_tls.hpp"
#include "support/tls_channel.hpp"

namespace socket_test {
namespace {

namespace tls = ringhttp::tls;

constexpr std::size_t compact_bytes_min = 1 << 20;
// Ciphertext gathered before a send, for a long send_all() over TLS.
constexpr std::size_t tls_send_bytes_max = 1 << 20;

// ClientContext::start is not safe from several threads at once.
std::mutex tls_start_mutex;

std::runtime_error errno_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

template <typename T>
void set_option(int fd, int level, int name, const T& value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) throw errno_error(what);
}

timeval to_timeval(std::chrono::milliseconds ms) {
  return timeval{static_cast<time_t>(ms.count() / 1000), static_cast<suseconds_t>(ms.count() % 1000 * 1000)};
}

std::string printable(std::string_view bytes, std::size_t max = 200) {
  std::string out;
  for (char c : bytes.substr(0, max)) {
    if (c == '\r')
      out += "\\r";
    else if (c == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      out += '.';
    else
      out += c;
  }
  if (bytes.size() > max) out += "...";
  return out;
}

}  // namespace

struct Connection::Tls {
  TlsChannel channel;
  std::vector<char> plain = std::vector<char>(tls::record_plaintext_bytes_max);
  bool answered = false;  // the server has sent something (its part of the handshake)
  bool closed = false;    // the server's close_notify, its FIN or a reset arrived
  std::string closed_how;
};

Connection::Connection(std::uint16_t port, ConnectOptions options) {
  sockaddr_storage address{};
  socklen_t address_len = 0;
  if (auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
      ::inet_pton(AF_INET, options.address.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    address_len = sizeof *v4;
  } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
             ::inet_pton(AF_INET6, options.address.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    address_len = sizeof *v6;
  } else {
    throw std::runtime_error("not an IP address: " + options.address);
  }
  fd_ = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw errno_error("socket");
  try {
    if (options.receive_buffer_bytes) {
      set_option(fd_, SOL_SOCKET, SO_RCVBUF, *options.receive_buffer_bytes, "SO_RCVBUF");
    }
    if (options.no_delay) set_option(fd_, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
    if (options.max_segment_bytes) set_option(fd_, IPPROTO_TCP, TCP_MAXSEG, *options.max_segment_bytes, "TCP_MAXSEG");
    set_timeout(options.timeout);
    if (!options.source_address.empty()) {
      set_option(fd_, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1, "IP_BIND_ADDRESS_NO_PORT");
      sockaddr_in source{};
      source.sin_family = AF_INET;
      if (::inet_pton(AF_INET, options.source_address.c_str(), &source.sin_addr) != 1) {
        throw std::runtime_error("not an IPv4 address: " + options.source_address);
      }
      if (::bind(fd_, reinterpret_cast<const sockaddr*>(&source), sizeof source) != 0) {
        throw errno_error("bind to " + options.source_address);
      }
    }
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), address_len) != 0) {
      throw errno_error("connect to " + options.address + " port " + std::to_string(port));
    }
    if (options.tls.value_or(is_tls_port(port))) {
      start_tls();
      if (!options.defer_tls_handshake) finish_handshake();
    }
  } catch (...) {
    close();
    throw;
  }
}

Connection::~Connection() { close(); }

Connection::Connection(Connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      timeout_(other.timeout_),
      buffer_(std::move(other.buffer_)),
      consumed_(std::exchange(other.consumed_, 0)),
      tls_(std::move(other.tls_)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    timeout_ = other.timeout_;
    buffer_ = std::move(other.buffer_);
    consumed_ = std::exchange(other.consumed_, 0);
    tls_ = std::move(other.tls_);
  }
  return *this;
}

void Connection::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  const timeval tv = to_timeval(timeout);
  set_option(fd_, SOL_SOCKET, SO_RCVTIMEO, tv, "SO_RCVTIMEO");
  set_option(fd_, SOL_SOCKET, SO_SNDTIMEO, tv, "SO_SNDTIMEO");
}

void Connection::send_raw(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      throw std::runtime_error("send timed out after " + std::to_string(timeout_.count()) + " ms with " +
                               std::to_string(bytes.size()) + " bytes unsent");
    }
    if (n < 0) throw errno_error("send");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string Connection::wire_bytes(std::string_view plaintext) {
  if (tls_ == nullptr) return std::string(plaintext);
  finish_handshake();
  if (tls_->closed) throw std::runtime_error("the server closed the connection (" + tls_->closed_how + ")");
  for (std::size_t at = 0; at < plaintext.size(); at += tls::record_plaintext_bytes_max) {
    if (!tls_->channel.seal(plaintext.substr(at, tls::record_plaintext_bytes_max))) {
      throw std::runtime_error("TLS write failed: " + tls_->channel.session().error_reason());
    }
  }
  std::string ciphertext(tls_->channel.pending());
  tls_->channel.drop_pending();
  return ciphertext;
}

void Connection::send_all(std::string_view bytes) {
  if (tls_ == nullptr) return send_raw(bytes);
  // In pieces, so that a long send does not hold all its ciphertext at once.
  while (!bytes.empty()) {
    const std::string_view piece = bytes.substr(0, tls_send_bytes_max);
    send_raw(wire_bytes(piece));
    bytes.remove_prefix(piece.size());
  }
}

void Connection::start_tls() {
  tls_ = std::make_unique<Tls>();
  std::string error;
  bool started = false;
  {
    const std::lock_guard lock(tls_start_mutex);
    started = tls_->channel.start(suite_tls_client(), "localhost", error);
  }
  if (!started) throw std::runtime_error("TLS session: " + error);
  send_pending_handshake();  // the ClientHello leaves now
}

void Connection::send_pending_handshake() {
  std::string_view bytes = tls_->channel.pending();
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
      // The server closed at once (a full table refuses newcomers so): the
      // connection reads as closed, as a plain one would.
      tls_->closed = true;
      tls_->closed_how = std::string("during the TLS handshake: ") + std::strerror(errno);
      break;
    }
    if (n < 0) send_raw(bytes);  // reports the error
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  tls_->channel.drop_pending();
}

void Connection::received(const char* bytes, std::size_t n) {
  tls_->channel.received({bytes, n});
  tls_->answered = true;
}

void Connection::finish_handshake() {
  char chunk[16 * 1024];
  while (true) {
    // What has arrived first (input_ready() may have taken the server's
    // flight already), then more from the socket.
    const TlsChannel::Status status = tls_->channel.handshake();
    send_pending_handshake();
    if (status == TlsChannel::Status::error || status == TlsChannel::Status::closed) {
      throw std::runtime_error("TLS handshake failed: " + tls_->channel.session().error_reason());
    }
    if (tls_->channel.handshake_done() || tls_->closed) return;
    const ssize_t n = recv_raw(chunk, sizeof chunk);
    if (n == -EAGAIN) throw_recv_error(EAGAIN);
    if (n <= 0) {
      tls_->closed = true;
      tls_->closed_how = n == 0 ? "EOF during the TLS handshake" : "reset during the TLS handshake";
      return;
    }
    received(chunk, static_cast<std::size_t>(n));
  }
}

void Connection::send_byte_by_byte(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) send_all(bytes.substr(i, 1));
}

ssize_t Connection::recv_raw(char* into, std::size_t max) {
  while (true) {
    const ssize_t n = ::recv(fd_, into, max, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    return errno == EWOULDBLOCK ? -EAGAIN : -errno;
  }
}

void Connection::throw_recv_error(int error) const {
  if (error == EAGAIN) {
    throw std::runtime_error("recv timed out after " + std::to_string(timeout_.count()) + " ms; unread: \"" +
                             printable(std::string_view(buffer_).substr(consumed_)) + "\"");
  }
  errno = error;
  throw errno_error("recv");
}

Connection::Decrypted Connection::decrypt_received() {
  std::size_t n = 0;
  const TlsChannel::Status status = tls_->channel.read(tls_->plain.data(), tls_->plain.size(), n);
  if (!tls_->channel.pending().empty()) {  // a key update's answer
    send_raw(tls_->channel.pending());
    tls_->channel.drop_pending();
  }
  switch (status) {
    case TlsChannel::Status::done: buffer_.append(tls_->plain.data(), n); return Decrypted::plaintext;
    case TlsChannel::Status::closed:
      tls_->closed = true;
      tls_->closed_how = "close_notify";
      return Decrypted::closed;
    case TlsChannel::Status::error:
      throw std::runtime_error("TLS read failed: " + tls_->channel.session().error_reason());
    case TlsChannel::Status::want_io: break;
  }
  return Decrypted::need_more;
}

std::size_t Connection::fill() {
  char chunk[64 * 1024];
  if (tls_ == nullptr) {
    const ssize_t n = recv_raw(chunk, sizeof chunk);
    if (n < 0) throw_recv_error(int(-n));
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return static_cast<std::size_t>(n);
  }
  finish_handshake();
  while (!tls_->closed) {
    const std::size_t before = buffer_.size();
    if (decrypt_received() != Decrypted::need_more) return buffer_.size() - before;
    const ssize_t got = recv_raw(chunk, sizeof chunk);
    if (got < 0) throw_recv_error(int(-got));
    if (got == 0) {
      tls_->closed = true;
      tls_->closed_how = "EOF";
      return 0;
    }
    received(chunk, static_cast<std::size_t>(got));
  }
  return 0;
}

bool Connection::input_ready() {
  if (buffered() > 0) return true;
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (tls_ == nullptr) return ::poll(&p, 1, 0) > 0;
  if (tls_->closed) return true;
  // Over TLS only plaintext or the end counts: not a session ticket, nor
  // the server's part of the handshake (unless the handshake waits for a
  // read: then that the server has answered it).
  char chunk[16 * 1024];
  while (::poll(&p, 1, 0) > 0) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) return true;  // the end, or an error a read will report
    received(chunk, static_cast<std::size_t>(n));
  }
  if (!tls_->channel.handshake_done()) return tls_->answered;
  try {
    return decrypt_received() != Decrypted::need_more;
  } catch (const std::runtime_error&) {
    return true;  // a read will report it
  }
}

std::string Connection::take(std::size_t n) {
  std::string out = buffer_.substr(consumed_, n);
  consumed_ += out.size();
  // Compact now and then so that a long pipelined exchange does not keep
  // every byte it ever received.
  if (consumed_ == buffer_.size() || consumed_ >= compact_bytes_min) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  return out;
}

std::string Connection::read_some(std::size_t max) {
  if (buffered() == 0 && fill() == 0) return {};
  return take(max);
}

std::string Connection::read_exact(std::size_t n) {
  while (buffered() < n) {
    if (fill() == 0) {
      throw std::runtime_error("connection closed after " + std::to_string(buffered()) + " of " + std::to_string(n) +
                               " expected bytes");
    }
  }
  return take(n);
}

std::string Connection::read_line() {
  std::size_t searched = consumed_;
  while (true) {
    const auto end = buffer_.find("\r\n", searched);
    if (end != std::string::npos) {
      std::string line = take(end - consumed_);
      take(2);
      return line;
    }
    searched = buffer_.empty() ? 0 : std::max(consumed_, buffer_.size() - 1);  // a CR may end the buffer
    if (fill() == 0) {
      throw std::runtime_error("connection closed in the middle of a line: \"" +
                               printable(std::string_view(buffer_).substr(consumed_)) + "\"");
    }
  }
}

std::string Connection::read_until_close() {
  while (fill() != 0) {
  }
  return take(buffered());
}

Response Connection::read_response(bool head) { return http_reader::read_response(*this, head); }

Response Connection::read_head() { return http_reader::read_head(*this); }

testing::AssertionResult Connection::expect_closed() {
  if (buffered() != 0) {
    return testing::AssertionFailure() << "unread bytes before close: \""
                                       << printable(std::string_view(buffer_).substr(consumed_)) << "\"";
  }
  if (tls_ != nullptr) {
    try {
      const std::size_t n = fill();
      if (n == 0) return testing::AssertionSuccess() << "closed (" << tls_->closed_how << ")";
      const std::string more = take(buffered());
      return testing::AssertionFailure() << "expected the connection to be closed, received " << n
                                         << " more bytes: \"" << printable(more) << "\"";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      if (what.find("timed out") != std::string::npos) {
        return testing::AssertionFailure() << "connection still open " << timeout_.count()
                                           << " ms later; expected the server to close it";
      }
      // A reset, or an alert that ends the session.
      return testing::AssertionSuccess() << "closed (" << what << ")";
    }
  }
  char chunk[4096];
  const ssize_t n = recv_raw(chunk, sizeof chunk);
  if (n == 0) return testing::AssertionSuccess() << "closed (EOF)";
  if (n > 0) {
    return testing::AssertionFailure() << "expected the connection to be closed, received " << n << " more bytes: \""
                                       << printable({chunk, static_cast<std::size_t>(n)}) << "\"";
  }
  if (n == -ECONNRESET) return testing::AssertionSuccess() << "closed (reset)";
  if (n == -EAGAIN) {
    return testing::AssertionFailure() << "connection still open " << timeout_.count()
                                       << " ms later; expected the server to close it";
  }
  return testing::AssertionFailure() << "recv failed: " << std::strerror(int(-n));
}

void Connection::reset() {
  if (fd_ < 0) return;
  const linger abortive{1, 0};
  set_option(fd_, SOL_SOCKET, SO_LINGER, abortive, "SO_LINGER");
  close();
}

void Connection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  tls_.reset();
  buffer_.clear();
  consumed_ = 0;
}

}  // namespace socket_test
