#include "server/metrics_endpoint.hpp"

#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/net/listen.hpp"
#include "server/counters.hpp"
#include "server/metrics_request.hpp"

namespace ringhttp::server {
namespace {

// The errno values sorted as the rest of the server sorts them: a retry
// (EAGAIN, EINTR) is handled where it happens; these name the other kinds.
// Any errno in neither list means the peer is gone (reset, timed out,
// unreachable) and only that connection ends.
bool is_bug(int err) { return err == EBADF || err == EFAULT || err == EINVAL || err == ENOTSOCK || err == EOPNOTSUPP; }
bool is_exhaustion(int err) { return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM; }

void report_bug(const char* call, int err) {
  std::fprintf(stderr, "server: metrics endpoint: %s failed with %s, which is a bug\n", call, std::strerror(err));
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(std::span<const ShardCounters* const> shards, std::uint32_t timeout_ms)
    : shards_(shards), timeout_(timeout_ms) {}

MetricsEndpoint::~MetricsEndpoint() {
  request_stop();
  join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

std::string MetricsEndpoint::open(const net::Address& address) {
  assert(listen_fd_ < 0);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return std::string("metrics endpoint: eventfd: ") + std::strerror(errno);
  const int fd = net::listen_exclusive(address, metrics_listen_backlog);
  if (fd < 0) return "cannot listen on --metrics-address " + address.to_string() + ": " + std::strerror(-fd);
  listen_fd_ = fd;
  address_ = address;
  net::bound_address(listen_fd_, address_);
  return {};
}

void MetricsEndpoint::start() {
  assert(listen_fd_ >= 0 && !thread_.joinable());
  // The thread inherits the caller's signal mask: main blocks SIGTERM and
  // SIGINT before any thread starts, so only its sigwait() takes them.
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), "metrics");
}

void MetricsEndpoint::request_stop() {
  if (stop_fd_ < 0) return;
  const std::uint64_t one = 1;
  // Never blocks: the eventfd is non-blocking, and a counter that is already
  // non-zero has woken the thread anyway.
  [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
}

void MetricsEndpoint::join() {
  if (thread_.joinable()) thread_.join();
}

MetricsEndpoint::Wait MetricsEndpoint::wait_for(int fd, short events, Clock::time_point deadline) const {
  while (true) {
    int timeout_ms = -1;
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return Wait::timed_out;
      timeout_ms = int(left.count());
    }
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {fd, events, 0}};
    const int ready = ::poll(fds, 2, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      report_bug("poll", errno);
      return Wait::stopping;
    }
    if (fds[0].revents != 0) return Wait::stopping;
    // POLLERR and POLLHUP count as ready too: the next call reports them.
    if (fds[1].revents != 0) return Wait::ready;
  }
}

void MetricsEndpoint::run() {
  while (true) {
    if (wait_for(listen_fd_, POLLIN, Clock::time_point::max()) == Wait::stopping) return;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client >= 0) {
      serve(client);
      ::close(client);
      continue;
    }
    const int err = errno;
    if (is_bug(err)) {
      report_bug("accept4", err);
      return;  // the main port keeps serving; only the counters go dark
    }
    if (is_exhaustion(err)) {
      const auto pause = Clock::now() + std::chrono::milliseconds(metrics_accept_backoff_ms);
      if (wait_for(stop_fd_, POLLIN, pause) == Wait::stopping) return;
    }
    // Anything else (EAGAIN, ECONNABORTED, a network error) concerns one
    // connection that is already gone: accept the next.
  }
}

void MetricsEndpoint::serve(int client) {
  char request[metrics_request_bytes_max];
  std::size_t received = 0;
  MetricsRequest verdict = MetricsRequest::incomplete;
  const Clock::time_point deadline = Clock::now() + timeout_;
  while (verdict == MetricsRequest::incomplete) {
    const Wait wait = wait_for(client, POLLIN, deadline);
    if (wait == Wait::stopping) return;
    if (wait == Wait::timed_out) {
      verdict = MetricsRequest::timed_out;
      break;
    }
    // judge_metrics_request() answers too_large once the buffer is full, so
    // there is always room here.
    assert(received < sizeof request);
    const ssize_t n = ::recv(client, request + received, sizeof request - received, 0);
    if (n == 0) return;  // the client left without asking
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      if (is_bug(errno)) report_bug("recv", errno);
      return;
    }
    received += std::size_t(n);
    verdict = judge_metrics_request(std::string_view(request, received));
  }
  if (verdict == MetricsRequest::get || verdict == MetricsRequest::head) {
    metrics_text_.clear();
    render_metrics(shards_, metrics_text_);
  }
  build_metrics_answer(verdict, metrics_text_, answer_);
  if (!send_answer(client)) return;
  // A refused request may have more behind it (a body, a header section
  // past the limit) that a close would turn into a reset; a GET or HEAD has
  // been read to its end, and a client that timed out has had its time.
  const bool may_have_unread_input =
      verdict != MetricsRequest::get && verdict != MetricsRequest::head && verdict != MetricsRequest::timed_out;
  if (may_have_unread_input) linger(client);
}

bool MetricsEndpoint::send_answer(int client) {
  const Clock::time_point deadline = Clock::now() + timeout_;
  std::string_view left = answer_;
  while (!left.empty()) {
    const ssize_t n = ::send(client, left.data(), left.size(), MSG_NOSIGNAL);
    if (n > 0) {
      left.remove_prefix(std::size_t(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) {
      if (is_bug(errno)) report_bug("send", errno);
      return false;
    }
    // A full socket buffer: a client that does not read gets the timeout.
    if (wait_for(client, POLLOUT, deadline) != Wait::ready) return false;
  }
  return true;
}

void MetricsEndpoint::linger(int client) const {
  ::shutdown(client, SHUT_WR);
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(metrics_linger_ms);
  char sink[4096];
  std::size_t drained = 0;
  while (drained < metrics_linger_bytes_max) {
    const ssize_t n = ::recv(client, sink, sizeof sink, 0);
    if (n > 0) {
      drained += std::size_t(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return;  // the client has closed: nothing to reset
    if (wait_for(client, POLLIN, deadline) != Wait::ready) return;
  }
}

}  // namespace ringhttp::server
