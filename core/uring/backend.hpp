#pragma once
// The io_uring backend of a connection's owner (core/io/completion.hpp; the
// interface, io::Backend, in core/io/backend.hpp): a ring and its provided
// receive buffers. Every io_uring operation a client connection needs is
// prepared here; the kernel makes the completions.

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
#include "core/io/user_data.hpp"

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
    // With fixed-files: the direct descriptors the kernel may hand accepts
    // (the server's connections, those waiting for a slot included). 0: the
    // owner opens its sockets itself and each sits at its slot (the client).
    std::uint32_t accepted_max = 0;
  };

  // Returns what failed, or "".
  std::string init(const Config& config);

  // A connection's socket: with fixed-files a direct descriptor (the
  // ring's file table), else a descriptor of the process.
  //
  // A stream socket of `family` for `slot` (TCP_NODELAY set on TCP), or
  // -errno. With fixed-files it is put into the file table at `slot`, and
  // its process descriptor closed.
  int open_socket(int family, std::uint32_t slot);
  // Closes a connection's socket once nothing of it is in flight: at once,
  // so its slot in the file table is free when this returns.
  void close(int fd, std::uint32_t slot);
  // Closes an accepted socket refused before it took a slot.
  void close_accepted(int fd) { close(fd, 0); }
  // With fixed-files, the file table's size: the direct descriptors the
  // owner may hold at once (0 without). An accept past it would take a
  // connection and drop it (-ENFILE), so the server arms no more than fit.
  std::uint32_t direct_table() const { return direct_table_; }

  void connect(int fd, const net::Address& address, std::uint64_t tag);
  // Multishot when the features allow and `multishot` is asked; returns
  // whether it is.
  bool receive(int fd, std::uint64_t tag, bool multishot = true);
  void send(int fd, const char* data, std::size_t len, std::uint64_t tag);
  // Cancels the operation tagged `target`; the cancel completes as `tag`.
  void cancel(std::uint64_t target, std::uint64_t tag);

  // The server's: accept on its listener (multishot when asked and the
  // features allow: see Features; with fixed-files into a direct
  // descriptor, the peer's address into `peer` when given), the shard's
  // tick, a read of its wake eventfd, a shutdown before lingering, a
  // connection's corked output.
  void accept(int listen_fd, std::uint64_t tag, bool multishot, sockaddr* peer = nullptr,
              socklen_t* peer_len = nullptr);
  void timeout(__kernel_timespec* ts, std::uint64_t tag);
  void read(int fd, void* data, unsigned len, std::uint64_t tag);
  void shutdown(int fd, int how, std::uint64_t tag);
  // Resets the connection (RST) and drops what its socket still queues,
  // the descriptor left open: the zero-copy notifications of bytes a peer
  // never read then come (Engine::reset).
  void reset(int fd, std::uint64_t tag);
  // zc_report_usage: the notification says whether the kernel copied (6.2).
  void send_message(int fd, msghdr* msg, io::SendMode mode, std::uint64_t tag, bool zc_report_usage = false);
  // A database connection's (server/db), on a descriptor of the process
  // (libpq's socket), never a direct one: a one-shot poll while libpq does
  // the I/O, then sends and receives from and into the pool's own buffers.
  void poll(int fd, bool write, std::uint64_t tag);
  void send_from(int fd, const char* data, std::size_t len, std::uint64_t tag);
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

  // The batching wait (Ring::set_batch_wait): where the kernel has it.
  bool can_batch_wait() const { return ring_.can_batch_wait(); }
  void set_batch_wait(std::uint32_t us, std::uint32_t batch) { ring_.set_batch_wait(us, batch); }

  const io::SyscallCounts& syscalls() const { return syscalls_; }
  void reset_syscalls() { syscalls_ = {}; }

 private:
  // Marks a prepared SQE as one on a connection's socket (after the prep,
  // which clears the flags).
  void on_socket(io_uring_sqe* sqe) const {
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
  }

  Ring ring_;
  ReceiveBuffers buffers_;
  io::SyscallCounts syscalls_;
  std::uint64_t flushes_seen_ = 0;
  bool fixed_files_ = false;
  bool accepts_direct_ = false;  // fixed-files with accepted_max: the server's
  std::uint32_t direct_table_ = 0;
};

}  // namespace ringhttp::uring
