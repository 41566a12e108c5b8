#pragma once
// The io_uring backend of a connection's owner (core/io/completion.hpp):
// a ring and its provided receive buffers. Every io_uring operation a client
// connection needs is prepared here; the kernel makes the completions.

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <span>
#include <string>

#include "core/io/completion.hpp"
#include "core/net/address.hpp"
#include "core/uring/features.hpp"
#include "core/uring/receive_buffers.hpp"
#include "core/uring/ring.hpp"
#include "core/uring/user_data.hpp"

namespace ringhttp::uring {

class Backend {
 public:
  static constexpr io::BackendKind kind = io::BackendKind::uring;
  using Received = ReceiveBuffers::Received;

  struct Config {
    std::uint32_t entries = 0;  // submission queue entries
    Features features;
    int cpu = -1;  // the owner's CPU (SQPOLL's poller runs there)
    std::uint32_t recv_buffers = 0;
    std::uint32_t recv_buffer_bytes = 0;
    std::uint32_t slots = 0;
  };

  // Returns what failed, or "".
  std::string init(const Config& config);

  // A stream socket of `family` (TCP_NODELAY set on TCP), or -errno.
  int open_socket(int family);
  void close(int fd, std::uint32_t slot);

  void connect(int fd, const net::Address& address, std::uint64_t tag);
  // Multishot when the features allow and `multishot` is asked; returns
  // whether it is.
  bool receive(int fd, std::uint64_t tag, bool multishot = true);
  void send(int fd, const char* data, std::size_t len, std::uint64_t tag);
  // Cancels the operation tagged `target`; the cancel completes as `tag`.
  void cancel(std::uint64_t target, std::uint64_t tag);

  // The server's: accept on its listener (multishot when asked and the
  // features allow: see Features), the shard's tick, a read of its wake
  // eventfd, a shutdown before lingering, a connection's corked output.
  void accept(int listen_fd, std::uint64_t tag, bool multishot);
  void timeout(__kernel_timespec* ts, std::uint64_t tag);
  void read(int fd, void* data, unsigned len, std::uint64_t tag);
  void shutdown(int fd, int how, std::uint64_t tag);
  // zc_report_usage: the notification says whether the kernel copied (6.2).
  void send_message(int fd, msghdr* msg, io::SendMode mode, std::uint64_t tag, bool zc_report_usage = false);
  // A database connection's (server/db): a one-shot poll while libpq does
  // the I/O, then sends and receives into the pool's own buffers.
  void poll(int fd, bool write, std::uint64_t tag);
  void receive_into(int fd, char* data, std::size_t len, std::uint64_t tag);
  std::uint64_t sq_full_flushes() const { return ring_.submit_full_flushes(); }

  // A receive completion's pieces, one buffer each (ReceiveBuffers): the
  // first, then the others of a bundle.
  Received received(std::uint32_t slot, std::uint32_t flags, std::int32_t res) {
    return buffers_.received(slot, flags, res);
  }
  bool next_received(Received& out) { return buffers_.next(out); }
  void give_back(std::int32_t buffer_id) { buffers_.give_back(buffer_id); }
  void give_back_flags(std::uint32_t flags, std::int32_t res) { buffers_.give_back_flags(flags, res); }

  std::uint32_t submit_and_reap(std::span<io::Completion> out);
  std::uint32_t submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout);

  const io::SyscallCounts& syscalls() const { return syscalls_; }
  void reset_syscalls() { syscalls_ = {}; }

 private:
  Ring ring_;
  ReceiveBuffers buffers_;
  io::SyscallCounts syscalls_;
  std::uint64_t flushes_seen_ = 0;
};

}  // namespace ringhttp::uring
