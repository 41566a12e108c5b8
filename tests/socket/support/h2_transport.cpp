#include "support/h2_transport.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace socket_test {
namespace {

constexpr int poll_ms = 20;            // how soon a wait notices `stop`
constexpr int handshake_ms = 5'000;    // a TLS handshake on loopback takes milliseconds
constexpr int write_stall_ms = 5'000;  // a client that reads nothing for this long is gone
constexpr int linger_ms = 500;         // time for the client to read the last frames and close

using Clock = std::chrono::steady_clock;

bool past(Clock::time_point start, int ms) { return Clock::now() - start >= std::chrono::milliseconds(ms); }

}  // namespace

H2Transport::H2Transport(int fd, SSL_CTX* context) : fd_(fd) {
  if (context == nullptr) return;
  ssl_ = SSL_new(context);
  if (ssl_ != nullptr) SSL_set_fd(ssl_, fd_);
}

H2Transport::~H2Transport() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  ::close(fd_);
}

bool H2Transport::wait(short events, int ms) const {
  pollfd p{fd_, events, 0};
  return ::poll(&p, 1, ms) > 0;
}

bool H2Transport::handshake(const std::atomic<bool>& stop) {
  if (ssl_ == nullptr) return fd_ >= 0;
  const Clock::time_point start = Clock::now();
  while (!stop && !past(start, handshake_ms)) {
    const int rc = SSL_accept(ssl_);
    if (rc == 1) return true;
    const int error = SSL_get_error(ssl_, rc);
    if (error == SSL_ERROR_WANT_READ) {
      wait(POLLIN, poll_ms);
    } else if (error == SSL_ERROR_WANT_WRITE) {
      wait(POLLOUT, poll_ms);
    } else {
      return false;
    }
  }
  return false;
}

ssize_t H2Transport::read(char* out, std::size_t cap, int ms) {
  // Decrypted bytes OpenSSL holds already need no wait.
  if (ssl_ == nullptr || SSL_pending(ssl_) == 0) {
    if (!wait(POLLIN, ms)) return 0;
  }
  if (ssl_ == nullptr) {
    const ssize_t n = ::recv(fd_, out, cap, 0);
    if (n > 0) return n;
    return n < 0 && (errno == EAGAIN || errno == EINTR) ? 0 : -1;
  }
  std::size_t n = 0;
  if (SSL_read_ex(ssl_, out, cap, &n) == 1) return ssize_t(n);
  const int error = SSL_get_error(ssl_, 0);
  return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

bool H2Transport::write_all(std::string_view bytes, const std::atomic<bool>& stop) {
  Clock::time_point progress = Clock::now();
  while (!bytes.empty()) {
    if (stop || past(progress, write_stall_ms)) return false;
    std::size_t n = 0;
    short wait_for = POLLOUT;
    if (ssl_ == nullptr) {
      const ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent < 0 && errno != EAGAIN && errno != EINTR) return false;
      n = sent > 0 ? std::size_t(sent) : 0;
    } else if (SSL_write_ex(ssl_, bytes.data(), bytes.size(), &n) != 1) {
      const int error = SSL_get_error(ssl_, 0);
      if (error != SSL_ERROR_WANT_WRITE && error != SSL_ERROR_WANT_READ) return false;
      if (error == SSL_ERROR_WANT_READ) wait_for = POLLIN;
      n = 0;
    }
    if (n == 0) {
      wait(wait_for, poll_ms);
      continue;
    }
    bytes.remove_prefix(n);
    progress = Clock::now();
  }
  return true;
}

void H2Transport::linger_close(const std::atomic<bool>& stop) {
  if (ssl_ != nullptr) SSL_shutdown(ssl_);  // one try: the close_notify is best effort
  ::shutdown(fd_, SHUT_WR);
  const Clock::time_point start = Clock::now();
  char discard[4096];
  while (!stop && !past(start, linger_ms)) {
    if (!wait(POLLIN, poll_ms)) continue;
    const ssize_t n = ::recv(fd_, discard, sizeof discard, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return;
  }
}

}  // namespace socket_test
