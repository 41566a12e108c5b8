#include "support/canned_server.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "support/loopback_listener.hpp"

namespace socket_test {
namespace {

constexpr int poll_interval_ms = 20;  // how soon the thread notices it must stop

// The Content-Length of a request head (0 when absent); names are matched
// case-insensitively.
std::size_t content_length(std::string_view head) {
  std::string lower(head);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t at = lower.find("\r\ncontent-length:");
  if (at == std::string::npos) return 0;
  return std::size_t(std::strtoull(lower.c_str() + at + 17, nullptr, 10));
}

}  // namespace

CannedServer::CannedServer(std::string reply, After after) : reply_(std::move(reply)), after_(after) {
  listen_fd_ = listen_on_loopback("canned server", port_);
  thread_ = std::thread([this] { serve(); });
}

CannedServer::~CannedServer() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::string CannedServer::url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

void CannedServer::serve() {
  // A thread per connection: tests open few, and each is served at once.
  std::vector<std::thread> connections;
  while (!stop_) {
    const int fd = accept_within(listen_fd_, poll_interval_ms, SOCK_CLOEXEC);
    if (fd < 0) continue;
    connections.emplace_back([this, fd] {
      serve_connection(fd);
      ::close(fd);
    });
  }
  for (std::thread& t : connections) t.join();
}

void CannedServer::serve_connection(int fd) {
  std::string input;
  while (!stop_) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, poll_interval_ms);
    if (ready <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n <= 0) return;
    input.append(chunk, std::size_t(n));
    std::size_t end;
    while ((end = input.find("\r\n\r\n")) != std::string::npos) {
      // A request body (Content-Length only) is read whole and, for an
      // echo server, becomes the response body.
      const std::size_t body_bytes = content_length(std::string_view(input).substr(0, end + 2));
      if (input.size() < end + 4 + body_bytes) break;
      std::string body = input.substr(end + 4, body_bytes);
      if (reply_ == echo_host) {
        // The value of the first Host line, as sent (names are case-insensitive).
        const std::string head = input.substr(0, end + 2);
        std::string lower = head;
        for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
        const std::size_t at = lower.find("\r\nhost:");
        body = at == std::string::npos ? std::string("(no host)")
                                       : head.substr(at + 7, head.find("\r\n", at + 2) - (at + 7));
        while (!body.empty() && body.front() == ' ') body.erase(0, 1);
      }
      input.erase(0, end + 4 + body_bytes);
      if (reply_ == echo || reply_ == echo_host) {
        const std::string response =
            "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        if (::send(fd, response.data(), response.size(), MSG_NOSIGNAL) < 0) return;
        continue;
      }
      if (reply_.empty()) continue;
      if (delay_ms_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_.load()));
      if (answered_.fetch_add(1) + 1 == stall_after_.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(stall_ms_.load()));
      }
      if (::send(fd, reply_.data(), reply_.size(), MSG_NOSIGNAL) < 0) return;
      if (after_ == After::close) return;
    }
  }
}

}  // namespace socket_test
