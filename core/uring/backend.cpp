#include "core/uring/backend.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>

#include <cassert>
#include <cerrno>
#include <cstring>

#include "core/io/backend.hpp"
#include "core/uring/compat.hpp"

namespace ringhttp::uring {

// The engine reads the kernel's CQE flags by io::completion_flags' values.
static_assert(io::completion_flags::buffer == IORING_CQE_F_BUFFER);
static_assert(io::completion_flags::more == IORING_CQE_F_MORE);
static_assert(io::completion_flags::notification == IORING_CQE_F_NOTIF);
static_assert(io::completion_flags::buffer_id_shift == IORING_CQE_BUFFER_SHIFT);
static_assert(io::zero_copy_copied == IORING_NOTIF_USAGE_ZC_COPIED);

std::string Backend::init(const Config& config) {
  if (const int rc = ring_.init(config.entries, config.features, config.cpu); rc < 0) {
    return std::string("io_uring setup: ") + std::strerror(-rc);
  }
  if (config.features.fixed_files) {
    // A sparse table: a slot holds nothing until a socket is put there. The
    // kernel allocates accepts' slots from all of it (its default range).
    std::uint32_t table = config.accepted_max > 0 ? config.accepted_max : config.slots;
    assert(table > 0);
    // The kernel refuses a table larger than RLIMIT_NOFILE; past it, an
    // accept fails with -ENFILE as one past the process's limit would.
    if (rlimit limit{}; ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < table) {
      table = std::uint32_t(limit.rlim_cur);
    }
    if (const int rc = io_uring_register_files_sparse(ring_.get(), table); rc < 0) {
      return std::string("io_uring file table of ") + std::to_string(table) + ": " + std::strerror(-rc);
    }
    fixed_files_ = true;
    direct_table_ = table;
    accepts_direct_ = config.accepted_max > 0;
  }
  return buffers_.init(ring_.get(), config.features, config.recv_buffers, config.recv_buffer_bytes, config.slots);
}

int Backend::open_socket(int family, std::uint32_t slot) {
  const int fd = io::open_stream_socket(family, 0, syscalls_);
  if (fd < 0 || !fixed_files_) return fd;
  assert(!accepts_direct_ && "the table's slots are the kernel's to hand out");
  syscalls_.add(io::Syscall::io_uring_register);
  const int rc = io_uring_register_files_update(ring_.get(), slot, &fd, 1);
  syscalls_.add(io::Syscall::close);
  ::close(fd);  // the table holds the socket now
  if (rc != 1) return rc < 0 ? rc : -EIO;
  return int(slot);
}

void Backend::close(int fd, std::uint32_t) {
  if (!fixed_files_) {
    syscalls_.add(io::Syscall::close);
    ::close(fd);
    return;
  }
  // At once, by a system call as a process descriptor's close is: a queued
  // close_direct would leave the slot taken until the next submission, so
  // neither could the next socket be put at a client's slot, nor could the
  // server know how many slots its accepts may still fill.
  const int none = -1;
  syscalls_.add(io::Syscall::io_uring_register);
  const int rc = io_uring_register_files_update(ring_.get(), unsigned(fd), &none, 1);
  assert(rc == 1 && "a direct descriptor the table no longer had");
  (void)rc;
}

void Backend::connect(int fd, const net::Address& address, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_connect(sqe, fd, address.get(), address.length);
  on_socket(sqe);
  sqe->user_data = tag;
}

bool Backend::receive(int fd, std::uint64_t tag, bool multishot) {
  io_uring_sqe* sqe = ring_.sqe();
  const bool armed_multishot = buffers_.prep_recv(sqe, fd, io::decode(tag).slot, multishot);
  on_socket(sqe);
  sqe->user_data = tag;
  return armed_multishot;
}

void Backend::send(int fd, const char* data, std::size_t len, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_send(sqe, fd, data, len, MSG_NOSIGNAL);
  on_socket(sqe);
  sqe->user_data = tag;
}

void Backend::send_from(int fd, const char* data, std::size_t len, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_send(sqe, fd, data, len, MSG_NOSIGNAL);
  sqe->user_data = tag;
}

void Backend::cancel(std::uint64_t target, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_cancel64(sqe, target, 0);
  sqe->user_data = tag;
}

void Backend::accept(int listen_fd, std::uint64_t tag, bool multishot, sockaddr* peer, socklen_t* peer_len) {
  io_uring_sqe* sqe = ring_.sqe();
  // A direct descriptor has no close-on-exec flag to set (the kernel
  // refuses SOCK_CLOEXEC with one): it is never in the process's table.
  if (fixed_files_ && multishot) {
    io_uring_prep_multishot_accept_direct(sqe, listen_fd, peer, peer_len, SOCK_NONBLOCK);
  } else if (fixed_files_) {
    // liburing 2.3 adds 1 to the index it is given: ALLOC - 1 becomes ALLOC.
    io_uring_prep_accept_direct(sqe, listen_fd, peer, peer_len, SOCK_NONBLOCK, IORING_FILE_INDEX_ALLOC - 1);
  } else if (multishot) {
    io_uring_prep_multishot_accept(sqe, listen_fd, peer, peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  } else {
    io_uring_prep_accept(sqe, listen_fd, peer, peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
  }
  sqe->user_data = tag;
}

void Backend::timeout(__kernel_timespec* ts, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_timeout(sqe, ts, 0, 0);
  sqe->user_data = tag;
}

void Backend::read(int fd, void* data, unsigned len, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_read(sqe, fd, data, len, 0);
  sqe->user_data = tag;
}

void Backend::shutdown(int fd, int how, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_shutdown(sqe, fd, how);
  on_socket(sqe);
  sqe->user_data = tag;
}

void Backend::reset(int fd, std::uint64_t tag) {
  // connect(2) to AF_UNSPEC disconnects a TCP socket: a reset sent, and
  // what it still queues dropped.
  static const sockaddr unspecified{.sa_family = AF_UNSPEC, .sa_data = {}};
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_connect(sqe, fd, &unspecified, sizeof unspecified);
  on_socket(sqe);
  sqe->user_data = tag;
}

void Backend::send_message(int fd, msghdr* msg, io::SendMode mode, std::uint64_t tag, bool zc_report_usage) {
  io_uring_sqe* sqe = ring_.sqe();
  switch (mode) {
    case io::SendMode::writev:
      // writev takes no MSG_NOSIGNAL: a write to a socket whose peer has
      // gone raises SIGPIPE, which server/main.cpp ignores process-wide, so
      // it fails with -EPIPE as a sendmsg would. The offset must be 0: a
      // socket has no file position (sock_write_iter refuses any other).
      io_uring_prep_writev(sqe, fd, msg->msg_iov, unsigned(msg->msg_iovlen), 0);
      break;
    case io::SendMode::sendmsg: io_uring_prep_sendmsg(sqe, fd, msg, MSG_NOSIGNAL); break;
    case io::SendMode::zc:
      // The kernel pins the pages instead of copying them: every byte the
      // iovecs point at must stay as it is until this send's notification;
      // the msghdr and iovecs themselves are consumed with the SQE
      // (IORING_FEAT_SUBMIT_STABLE, 5.5).
      io_uring_prep_sendmsg_zc(sqe, fd, msg, MSG_NOSIGNAL);
      if (zc_report_usage) sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
      break;
  }
  on_socket(sqe);
  sqe->user_data = tag;
}

void Backend::poll(int fd, bool write, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_poll_add(sqe, fd, write ? POLLOUT : POLLIN);
  sqe->user_data = tag;
}

void Backend::receive_into(int fd, char* data, std::size_t len, std::uint64_t tag) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_recv(sqe, fd, data, len, 0);
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

static_assert(io::Backend<Backend>, "core/io/backend.hpp: the interface every backend offers");

}  // namespace ringhttp::uring
