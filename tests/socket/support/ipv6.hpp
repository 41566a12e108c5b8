// IPv6 loopback for the tests of --address ::1 and --metrics-address [::1]:P,
// over bare sockets (Connection speaks IPv4).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace socket_test {

// Whether this machine has ::1 at all (a probe socket binds there).
inline bool has_ipv6_loopback() {
  const int probe = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (probe < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(probe);
  return bound;
}

// One request (which should end the connection: Connection: close, or an
// endpoint that closes after one answer) to [::1]:port; everything the
// server sent until it closed, or "" when it could not be reached. A 5 s
// receive timeout bounds a server that never answers.
inline std::string exchange_over_ipv6(std::uint16_t port, const std::string& request_bytes) {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  const timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  address.sin6_port = htons(port);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::send(fd, request_bytes.data(), request_bytes.size(), MSG_NOSIGNAL) == ssize_t(request_bytes.size())) {
    char chunk[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0) out.append(chunk, std::size_t(n));
  }
  ::close(fd);
  return out;
}

}  // namespace socket_test
