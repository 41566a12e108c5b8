// IPv6 loopback for the tests of --address ::1 and --metrics-address [::1]:P.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <chrono>
#include <string>

#include "support/connection.hpp"

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
// endpoint that closes after one answer) to [::1]:port, over HTTPS when the
// server serves it for the suite; everything the server sent until it
// closed, or "" when it could not be reached. A 5 s receive timeout bounds
// a server that never answers.
inline std::string exchange_over_ipv6(std::uint16_t port, const std::string& request_bytes) {
  try {
    Connection connection(port, {.address = "::1", .timeout = std::chrono::seconds(5)});
    connection.send_all(request_bytes);
    return connection.read_until_close();
  } catch (const std::runtime_error&) {
    return "";
  }
}

}  // namespace socket_test
