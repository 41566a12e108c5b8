#pragma once
// The seam between a connection's owner (a server shard, a client worker)
// and the I/O backend under it: both backends speak io_uring's completion
// model, so the code above them is the same for both.
//
// An owner asks a backend for operations (connect, receive, send, cancel),
// each tagged with a user_data (user_data.hpp), and reaps their
// completions in batches: {user_data, res, flags}, res a byte count or
// -errno, flags as io_uring's CQE flags (completion_flags below). The
// io_uring backend hands on the kernel's completions; the epoll backend
// makes the same completions from readiness, with the system calls a
// careful epoll loop makes. Neither is named here: this folder is below
// both (backend.hpp says what each must offer).
//
// A backend is a concrete type chosen at compile time (the owner is a
// template over it): no virtual call per operation.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace ringhttp::io {

struct Completion {
  std::uint64_t user_data;
  std::int32_t res;
  std::uint32_t flags;
};

// Completion::flags: io_uring's CQE flags, by value, so that nothing above
// the backends needs io_uring's header (the io_uring backend checks each
// against the kernel's).
namespace completion_flags {
// IORING_CQE_F_BUFFER: the bytes are in the provided buffer whose id is
// flags >> buffer_id_shift.
inline constexpr std::uint32_t buffer = 1u << 0;
// IORING_CQE_F_MORE: a multishot operation stays armed; on a zero-copy
// send's result, its notification is still to come.
inline constexpr std::uint32_t more = 1u << 1;
// IORING_CQE_F_NOTIF: a zero-copy send's notification.
inline constexpr std::uint32_t notification = 1u << 3;
inline constexpr unsigned buffer_id_shift = 16;  // IORING_CQE_BUFFER_SHIFT
}  // namespace completion_flags

// IORING_NOTIF_USAGE_ZC_COPIED, in a zero-copy notification's res: the
// kernel copied the bytes after all.
inline constexpr std::uint32_t zero_copy_copied = 1u << 31;

// The buffer id of bytes received into a slot's own buffer (io_uring
// without provided buffers), not a pool's.
inline constexpr std::int32_t own_buffer = -1;

// Completions handed to the owner per batch at most.
inline constexpr std::uint32_t reap_batch_max = 256;

enum class BackendKind : std::uint8_t { uring, epoll };

// How a connection's corked output is handed to the kernel (the server's
// --send). Each takes the same iovecs and resumes a short write the same
// way. The epoll backend sends every one as sendmsg (MSG_NOSIGNAL); zc is
// io_uring's alone.
enum class SendMode : std::uint8_t {
  writev,   // IORING_OP_WRITEV on the socket
  sendmsg,  // IORING_OP_SENDMSG with MSG_NOSIGNAL (the default)
  zc,       // IORING_OP_SENDMSG_ZC (6.1): pages pinned, not copied; a
            // notification completion follows the result
};
const char* backend_name(BackendKind kind);
// "uring" or "epoll"; false for anything else.
bool parse_backend(std::string_view text, BackendKind& out);

// The system calls a backend made, by kind: what the benchmark prints per
// request beside CPU per request. Counted where they are made.
enum class Syscall : std::uint8_t {
  io_uring_enter,
  epoll_wait,
  epoll_ctl,
  recv,
  send,
  connect,
  accept,
  socket,
  setsockopt,
  getsockopt,
  close,
  read,
  shutdown,
  timerfd_settime,
  fcntl,
  io_uring_register,  // a client socket put into, or taken out of, the ring's file table
  count_,
};
inline constexpr std::size_t syscall_kinds = std::size_t(Syscall::count_);
const char* syscall_name(Syscall kind);

// Written by its backend's thread only, readable by any (the server's
// /metrics): relaxed loads and stores, plain moves on x86-64, as
// metrics::Counter. A copy is a snapshot.
class SyscallCounts {
 public:
  SyscallCounts() = default;
  SyscallCounts(const SyscallCounts& other) { *this = other; }
  SyscallCounts& operator=(const SyscallCounts& other) {
    for (std::size_t i = 0; i < syscall_kinds; ++i) set(i, other[i]);
    return *this;
  }

  void add(Syscall kind, std::uint64_t n = 1) {
    std::atomic<std::uint64_t>& c = count_[std::size_t(kind)];
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t operator[](std::size_t kind) const { return count_[kind].load(std::memory_order_relaxed); }
  void set(std::size_t kind, std::uint64_t n) { count_[kind].store(n, std::memory_order_relaxed); }
  std::uint64_t total() const {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < syscall_kinds; ++i) sum += (*this)[i];
    return sum;
  }
  void merge(const SyscallCounts& other) {
    for (std::size_t i = 0; i < syscall_kinds; ++i) set(i, (*this)[i] + other[i]);
  }

 private:
  std::array<std::atomic<std::uint64_t>, syscall_kinds> count_{};
};

// A stream socket of `family` with SOCK_CLOEXEC and `extra_flags` (the
// epoll backend's SOCK_NONBLOCK), TCP_NODELAY set unless it is a Unix
// socket; -errno on failure. Both backends open theirs here, counted.
int open_stream_socket(int family, int extra_flags, SyscallCounts& counts);

}  // namespace ringhttp::io
