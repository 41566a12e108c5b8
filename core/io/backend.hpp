#pragma once
// The interface a backend offers the code above it (the connection engine,
// a server shard, a client worker), written once: the io_uring backend,
// the epoll backend and the tests' fake (tests/unit/fake_backend.hpp) each
// check themselves against it with static_assert. What each operation
// means is in completion.hpp (the completion model) and at the io_uring
// backend's declarations; the epoll backend makes the same completions.
//
// Only the uring backend has direct_table() (its fixed-file table), used
// where Backend::kind says uring: it is not part of the interface.

#include <linux/time_types.h>
#include <sys/socket.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "core/io/completion.hpp"
#include "core/net/address.hpp"

namespace ringhttp::io {

template <typename B>
concept Backend = requires(B& b, const B& cb, const typename B::Config& config, typename B::Received& piece,
                           int fd, std::uint32_t u32, std::int32_t res, std::uint64_t tag, const char* data,
                           char* into, void* raw, std::size_t len, msghdr* msg, SendMode mode,
                           const net::Address& address, sockaddr* peer, socklen_t* peer_len,
                           __kernel_timespec* timeout_at, __kernel_timespec timeout,
                           std::span<Completion> out) {
  { B::kind } -> std::convertible_to<BackendKind>;
  { b.init(config) } -> std::same_as<std::string>;  // what failed, or ""

  // Sockets: opened for a slot, closed once nothing of them is in flight.
  { b.open_socket(int(AF_INET), u32) } -> std::same_as<int>;  // fd, or -errno
  b.close(fd, u32);
  b.close_accepted(fd);

  // A connection's operations, each completing as its `tag`.
  b.connect(fd, address, tag);
  { b.receive(fd, tag, bool()) } -> std::same_as<bool>;  // multishot, as asked and where available
  b.send(fd, data, len, tag);
  b.send_message(fd, msg, mode, tag, bool());
  b.shutdown(fd, int(), tag);
  b.reset(fd, tag);  // RST, and what the socket queues dropped; the descriptor stays open
  b.cancel(tag, tag);  // the operation tagged first; the cancel completes as the second

  // The server's: accept, its tick, its wake, the database's sockets.
  b.accept(fd, tag, bool(), peer, peer_len);
  b.timeout(timeout_at, tag);
  b.read(fd, raw, unsigned(), tag);
  b.poll(fd, bool(), tag);
  b.send_from(fd, data, len, tag);
  b.receive_into(fd, into, len, tag);

  // A receive completion's pieces, one buffer each, and their return.
  { piece.data } -> std::convertible_to<const char*>;
  { piece.len } -> std::convertible_to<std::uint32_t>;
  { piece.buffer_id } -> std::convertible_to<std::int32_t>;  // own_buffer, or the pool's buffer
  { b.received(u32, u32, res) } -> std::same_as<typename B::Received>;
  { b.next_received(piece) } -> std::same_as<bool>;
  b.give_back(res);
  b.give_back_flags(u32, res);

  // The batch: submit what was prepared, reap what completed.
  { b.submit_and_reap(out) } -> std::same_as<std::uint32_t>;
  { b.submit_and_reap(out, timeout) } -> std::same_as<std::uint32_t>;
  { cb.can_batch_wait() } -> std::same_as<bool>;
  b.set_batch_wait(u32, u32);

  // What it cost.
  { cb.sq_full_flushes() } -> std::same_as<std::uint64_t>;
  { cb.syscalls() } -> std::convertible_to<const SyscallCounts&>;
  b.reset_syscalls();
};

}  // namespace ringhttp::io
