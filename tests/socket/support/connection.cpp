#include "support/connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "support/http_reader.hpp"

namespace socket_test {
namespace {

constexpr std::size_t compact_bytes_min = 1 << 20;

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

Connection::Connection(std::uint16_t port, ConnectOptions options) {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
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
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw errno_error("connect to 127.0.0.1:" + std::to_string(port));
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
      consumed_(std::exchange(other.consumed_, 0)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    timeout_ = other.timeout_;
    buffer_ = std::move(other.buffer_);
    consumed_ = std::exchange(other.consumed_, 0);
  }
  return *this;
}

void Connection::set_timeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  const timeval tv = to_timeval(timeout);
  set_option(fd_, SOL_SOCKET, SO_RCVTIMEO, tv, "SO_RCVTIMEO");
  set_option(fd_, SOL_SOCKET, SO_SNDTIMEO, tv, "SO_SNDTIMEO");
}

void Connection::send_all(std::string_view bytes) {
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

void Connection::send_byte_by_byte(std::string_view bytes) {
  for (std::size_t i = 0; i < bytes.size(); ++i) send_all(bytes.substr(i, 1));
}

std::size_t Connection::fill() {
  char chunk[64 * 1024];
  while (true) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n >= 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      return static_cast<std::size_t>(n);
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      throw std::runtime_error("recv timed out after " + std::to_string(timeout_.count()) + " ms; unread: \"" +
                               printable(std::string_view(buffer_).substr(consumed_)) + "\"");
    }
    throw errno_error("recv");
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
  char chunk[4096];
  while (true) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return testing::AssertionSuccess() << "closed (EOF)";
    if (n > 0) {
      return testing::AssertionFailure() << "expected the connection to be closed, received " << n << " more bytes: \""
                                         << printable({chunk, static_cast<std::size_t>(n)}) << "\"";
    }
    if (errno == EINTR) continue;
    if (errno == ECONNRESET) return testing::AssertionSuccess() << "closed (reset)";
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return testing::AssertionFailure() << "connection still open " << timeout_.count()
                                         << " ms later; expected the server to close it";
    }
    return testing::AssertionFailure() << "recv failed: " << std::strerror(errno);
  }
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
  buffer_.clear();
  consumed_ = 0;
}

}  // namespace socket_test
