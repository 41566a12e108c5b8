#pragma once
// A backend that does no I/O: it records every operation asked of it (with
// a send's bytes) and hands out receive buffers that a test fills, so the
// connection engine and the shard above it run as they do on a kernel,
// handed the completions a test makes. tests/unit/engine_test.cpp and
// shard_session_test.cpp share it.

#include <gtest/gtest.h>
#include <linux/time_types.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/backend.hpp"
#include "core/io/completion.hpp"
#include "core/net/address.hpp"
#include "core/io/user_data.hpp"

namespace ringhttp::testing_support {

using io::Op;

// Records what is asked; hands out buffers the test fills.
class FakeIo {
 public:
  static constexpr io::BackendKind kind = io::BackendKind::epoll;
  static constexpr std::uint32_t buffers = 1024;  // as the shard's pool
  static constexpr std::uint32_t buffer_bytes = 4096;

  struct Config {
    std::uint32_t recv_buffers = 0;
    std::uint32_t recv_buffer_bytes = 0;
    std::uint32_t slots = 0;
  };
  struct Received {
    const char* data;
    std::uint32_t len;
    std::int32_t buffer_id;
  };
  struct Asked {
    Op op = Op::none;
    std::uint64_t tag = 0;
    std::uint64_t target = 0;  // a cancel's
    bool multishot = false;
    std::string bytes;  // a send's
    // A foreign socket's (the database's): its descriptor, the direction
    // of a poll, the buffer of a receive_into.
    int fd = -1;
    bool write = false;
    char* into = nullptr;
    std::size_t len = 0;
  };

  std::string init(const Config& config) {
    EXPECT_TRUE(config.recv_buffer_bytes == 0 || config.recv_buffer_bytes == buffer_bytes);
    memory_.resize(std::size_t(buffers) * buffer_bytes);
    for (std::uint32_t b = buffers; b > 0; --b) free_.push_back(std::int32_t(b - 1));
    return {};
  }
  int open_socket(int, std::uint32_t) { return next_fd++; }
  void close(int fd, std::uint32_t) { closed.push_back(fd); }
  void close_accepted(int fd) { closed.push_back(fd); }
  bool receive(int, std::uint64_t tag, bool multishot) {
    asked.push_back({Op::recv, tag, 0, multishot, {}});
    return multishot;
  }
  void send(int, const char* data, std::size_t len, std::uint64_t tag) {
    asked.push_back({Op::send, tag, 0, false, std::string(data, len)});
  }
  void send_message(int, msghdr* msg, io::SendMode, std::uint64_t tag, bool) {
    std::string bytes;
    for (std::size_t i = 0; i < msg->msg_iovlen; ++i) {
      bytes.append(static_cast<const char*>(msg->msg_iov[i].iov_base), msg->msg_iov[i].iov_len);
    }
    asked.push_back({Op::send, tag, 0, false, bytes});
  }
  void cancel(std::uint64_t target, std::uint64_t tag) { asked.push_back({Op::cancel, tag, target, false, {}}); }
  void shutdown(int, int, std::uint64_t tag) { asked.push_back({Op::shutdown, tag, 0, false, {}}); }
  void reset(int, std::uint64_t tag) { asked.push_back({Op::shutdown, tag, 0, false, "reset"}); }
  void accept(int, std::uint64_t tag, bool, sockaddr* = nullptr, socklen_t* = nullptr) {
    asked.push_back({Op::accept, tag, 0, true, {}});
  }
  void timeout(__kernel_timespec*, std::uint64_t) {}
  void read(int, void*, unsigned, std::uint64_t) {}
  void poll(int fd, bool write, std::uint64_t tag) {
    asked.push_back({io::decode(tag).op, tag, 0, false, {}, fd, write, nullptr, 0});
  }
  void send_from(int fd, const char* data, std::size_t len, std::uint64_t tag) {
    asked.push_back({io::decode(tag).op, tag, 0, false, std::string(data, len), fd, false, nullptr, len});
  }
  void receive_into(int fd, char* into, std::size_t len, std::uint64_t tag) {
    asked.push_back({io::decode(tag).op, tag, 0, false, {}, fd, false, into, len});
  }
  void connect(int, const net::Address&, std::uint64_t tag) { asked.push_back({Op::connect, tag, 0, false, {}}); }
  std::uint64_t sq_full_flushes() const { return 0; }
  Received received(std::uint32_t, std::uint32_t flags, std::int32_t res) {
    const auto id = std::int32_t(flags >> io::completion_flags::buffer_id_shift);
    return {memory_.data() + std::size_t(id) * buffer_bytes, std::uint32_t(res), id};
  }
  static bool next_received(Received&) { return false; }
  void give_back(std::int32_t id) {
    ASSERT_GE(id, 0);
    ASSERT_LT(id, std::int32_t(buffers));
    free_.push_back(id);
  }
  void give_back_flags(std::uint32_t flags, std::int32_t) {
    if ((flags & io::completion_flags::buffer) != 0) give_back(std::int32_t(flags >> io::completion_flags::buffer_id_shift));
  }
  std::uint32_t submit_and_reap(std::span<io::Completion>) { return 0; }
  std::uint32_t submit_and_reap(std::span<io::Completion>, __kernel_timespec) { return 0; }
  static bool can_batch_wait() { return false; }
  static void set_batch_wait(std::uint32_t, std::uint32_t) {}
  const io::SyscallCounts& syscalls() const { return syscalls_; }
  void reset_syscalls() {}

  // `bytes` received into a buffer of the pool, as a receive's completion.
  io::Completion deliver(std::uint64_t tag, std::string_view bytes, bool more) {
    EXPECT_LE(bytes.size(), buffer_bytes);
    EXPECT_FALSE(free_.empty());
    const std::int32_t id = free_.back();
    free_.pop_back();
    std::memcpy(memory_.data() + std::size_t(id) * buffer_bytes, bytes.data(), bytes.size());
    return {tag, std::int32_t(bytes.size()),
            io::completion_flags::buffer | (std::uint32_t(id) << io::completion_flags::buffer_id_shift) | (more ? io::completion_flags::more : 0)};
  }
  std::size_t buffers_free() const { return free_.size(); }

  std::vector<Asked> asked;
  std::vector<int> closed;
  int next_fd = 100;  // open_socket's

 private:
  std::vector<char> memory_;
  std::vector<std::int32_t> free_;
  io::SyscallCounts syscalls_;
};
static_assert(io::Backend<FakeIo>, "core/io/backend.hpp: the fake offers what every backend offers");

}  // namespace ringhttp::testing_support
