#include "core/uring/backend.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cerrno>
#include <cstring>

namespace ringhttp::uring {

std::string Backend::init(const Config& config) {
  if (const int rc = ring_.init(config.entries, config.features, config.cpu); rc < 0) {
    return std::string("io_uring setup: ") + std::strerror(-rc);
  }
  return buffers_.init(ring_.get(), config.features, config.recv_buffers, config.recv_buffer_bytes, config.slots);
}

int Backend::open_socket(int family) { return io::open_stream_socket(family, 0, syscalls_); }

void Backend::close(int fd, std::uint32_t) {
  syscalls_.add(io::Syscall::close);
  ::close(fd);
}

void Backend::connect(int fd, const net::Address& address, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_connect(sqe, fd, address.get(), address.length);
  sqe->user_data = tag;
}

bool Backend::receive(int fd, std::uint64_t tag, bool multishot) {
  io_uring_sqe* sqe = ring_.sqe();
  const bool armed_multishot = buffers_.prep_recv(sqe, fd, decode(tag).slot, multishot);
  sqe->user_data = tag;
  return armed_multishot;
}

void Backend::send(int fd, const char* data, std::size_t len, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_send(sqe, fd, data, len, MSG_NOSIGNAL);
  sqe->user_data = tag;
}

void Backend::cancel(std::uint64_t target, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_cancel64(sqe, target, 0);
  sqe->user_data = tag;
}

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out) {
  // One io_uring_enter per wait, and one per full-queue flush since the last.
  syscalls_.add(io::Syscall::io_uring_enter, 1 + ring_.submit_full_flushes() - flushes_seen_);
  flushes_seen_ = ring_.submit_full_flushes();
  return ring_.submit_and_reap(out);
}

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout) {
  syscalls_.add(io::Syscall::io_uring_enter, 1 + ring_.submit_full_flushes() - flushes_seen_);
  flushes_seen_ = ring_.submit_full_flushes();
  return ring_.submit_and_reap(out, timeout);
}

}  // namespace ringhttp::uring
