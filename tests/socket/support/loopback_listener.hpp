// The listening socket of the tests' own small servers (support/
// canned_server.hpp, support/h2_server.hpp): 127.0.0.1, on a free port the
// kernel chose, polled so that the server's thread notices when it must stop.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace socket_test {

// A listening socket and its port; throws std::runtime_error("WHO: reason").
inline int listen_on_loopback(const char* who, std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 128) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string(who) + ": " + reason);
  }
  port = ntohs(addr.sin_port);
  return fd;
}

// The next connection, waiting at most `poll_ms` for it: its descriptor
// (accept4's `flags` on it), or -1 when none came.
inline int accept_within(int listen_fd, int poll_ms, int flags) {
  pollfd p{listen_fd, POLLIN, 0};
  if (::poll(&p, 1, poll_ms) <= 0) return -1;
  return ::accept4(listen_fd, nullptr, nullptr, flags);
}

}  // namespace socket_test
