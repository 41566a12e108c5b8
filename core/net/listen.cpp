#include "core/net/listen.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <cerrno>

namespace ringhttp::net {

int listen_reuseport(const Address& address) {
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  const int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
      // Linux copies TCP_NODELAY to each socket accepted here: set once,
      // it spares a setsockopt per connection, and a direct descriptor
      // (io_uring's fixed-files) could not be given one at all.
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 ||
      ::bind(fd, address.get(), address.length) != 0 || ::listen(fd, listen_backlog) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  return fd;
}

int listen_exclusive(const Address& address, int backlog) {
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  // SO_REUSEADDR only lets a restarted server bind past TIME_WAIT.
  const int one = 1;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, address.get(), address.length) != 0 || ::listen(fd, backlog) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  return fd;
}

int probe_free(const Address& address) {
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  // SO_REUSEADDR so that a server's own connections in TIME_WAIT from a
  // run just ended do not count; a listening socket still does.
  const int one = 1;
  int result = 0;
  if (::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(fd, address.get(), address.length) != 0) {
    result = -errno;
  }
  ::close(fd);
  return result;
}

bool bound_address(int fd, Address& out) {
  out = Address{};
  out.length = sizeof out.storage;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&out.storage), &out.length) == 0;
}

}  // namespace ringhttp::net
