#include "core/io/completion.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>

namespace ringhttp::io {

const char* backend_name(BackendKind kind) { return kind == BackendKind::epoll ? "epoll" : "uring"; }

bool parse_backend(std::string_view text, BackendKind& out) {
  if (text == "uring") {
    out = BackendKind::uring;
  } else if (text == "epoll") {
    out = BackendKind::epoll;
  } else {
    return false;
  }
  return true;
}

const char* syscall_name(Syscall kind) {
  switch (kind) {
    case Syscall::io_uring_enter: return "io_uring_enter";
    case Syscall::epoll_wait: return "epoll_wait";
    case Syscall::epoll_ctl: return "epoll_ctl";
    case Syscall::recv: return "recv";
    case Syscall::send: return "send";
    case Syscall::connect: return "connect";
    case Syscall::accept: return "accept";
    case Syscall::socket: return "socket";
    case Syscall::setsockopt: return "setsockopt";
    case Syscall::getsockopt: return "getsockopt";
    case Syscall::close: return "close";
    case Syscall::read: return "read";
    case Syscall::shutdown: return "shutdown";
    case Syscall::timerfd_settime: return "timerfd_settime";
    case Syscall::fcntl: return "fcntl";
    case Syscall::io_uring_register: return "io_uring_register";
    case Syscall::count_: break;
  }
  return "?";
}

int open_stream_socket(int family, int extra_flags, SyscallCounts& counts) {
  counts.add(Syscall::socket);
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | extra_flags, 0);
  if (fd < 0) return -errno;
  if (family != AF_UNIX) {
    const int one = 1;
    counts.add(Syscall::setsockopt);
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

}  // namespace ringhttp::io
