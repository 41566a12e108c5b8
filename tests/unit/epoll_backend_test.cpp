// The epoll backend makes io_uring's completions from readiness: the same
// results and flags for the same situations, over real sockets (a TCP pair
// on loopback, a socketpair, a timerfd), without a shard or a worker above.

#include "core/epoll/backend.hpp"

#include <gtest/gtest.h>
#include <liburing.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "core/io/user_data.hpp"

namespace ringhttp::epoll {
namespace {

using io::Op;

constexpr std::uint32_t buffers = 4;
constexpr std::uint32_t buffer_bytes = 1024;
constexpr std::uint32_t slots = 8;

std::uint64_t tag(Op op, std::uint32_t slot = 0, std::uint32_t generation = 1) {
  return io::encode({op, slot, generation});
}

class EpollBackend : public testing::Test {
 protected:
  void SetUp() override {
    Backend::Config config;
    config.recv_buffers = buffers;
    config.recv_buffer_bytes = buffer_bytes;
    config.slots = slots;
    ASSERT_EQ(io.init(config), "");
  }
  void TearDown() override {
    for (const int fd : to_close) ::close(fd);
  }

  // Reaps until `n` completions came, or `waits` waits of 10 ms passed
  // (a second by default): what came.
  std::vector<io::Completion> reap(std::size_t n, int waits = 100) {
    std::vector<io::Completion> got;
    std::array<io::Completion, io::reap_batch_max> batch;
    for (int i = 0; i < waits && got.size() < n; ++i) {
      const std::uint32_t k = io.submit_and_reap(batch, __kernel_timespec{0, 10'000'000});
      got.insert(got.end(), batch.begin(), batch.begin() + k);
    }
    return got;
  }

  // A socketpair whose first end is the backend's (non-blocking, as its own
  // sockets are), added by a receive or a connect.
  std::pair<int, int> pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    to_close.push_back(fds[1]);
    return {fds[0], fds[1]};
  }

  Backend io;
  std::vector<int> to_close;
};

TEST_F(EpollBackend, a_multishot_receive_delivers_each_arrival_in_a_pool_buffer_then_the_end) {
  const auto [mine, peer] = pair();
  EXPECT_TRUE(io.receive(mine, tag(Op::recv)));
  ASSERT_EQ(::write(peer, "hello", 5), 5);
  auto got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].user_data, tag(Op::recv));
  EXPECT_EQ(got[0].res, 5);
  EXPECT_NE(got[0].flags & io::completion_flags::buffer, 0u);
  EXPECT_NE(got[0].flags & io::completion_flags::more, 0u) << "still armed";
  const Backend::Received r = io.received(0, got[0].flags, got[0].res);
  EXPECT_EQ(r.len, 5u);
  EXPECT_EQ(std::string(r.data, r.len), "hello");
  io.give_back(r.buffer_id);
  ::shutdown(peer, SHUT_WR);
  got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].res, 0) << "the peer's FIN";
  EXPECT_EQ(got[0].flags & io::completion_flags::more, 0u) << "the receive ended";
  io.close(mine, 0);
}

TEST_F(EpollBackend, data_and_fin_in_one_edge_are_both_delivered) {
  const auto [mine, peer] = pair();
  ASSERT_EQ(::write(peer, "bye", 3), 3);
  ::shutdown(peer, SHUT_WR);
  io.receive(mine, tag(Op::recv));
  const auto got = reap(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].res, 3);
  EXPECT_EQ(got[1].res, 0) << "a short read must not hide the FIN that came with it";
  io.give_back_flags(got[0].flags, got[0].res);
  io.close(mine, 0);
}

TEST_F(EpollBackend, an_empty_pool_ends_the_receive_with_enobufs_and_a_rearm_resumes) {
  const auto [mine, peer] = pair();
  const std::string big(buffers * buffer_bytes + 100, 'x');
  ASSERT_EQ(::write(peer, big.data(), big.size()), ssize_t(big.size()));
  io.receive(mine, tag(Op::recv));
  auto got = reap(buffers + 1);
  ASSERT_EQ(got.size(), buffers + 1);
  for (std::uint32_t i = 0; i < buffers; ++i) EXPECT_EQ(got[i].res, std::int32_t(buffer_bytes));
  EXPECT_EQ(got[buffers].res, -ENOBUFS);
  EXPECT_EQ(got[buffers].flags & io::completion_flags::more, 0u) << "the receive is disarmed, as io_uring's";
  for (std::uint32_t i = 0; i < buffers; ++i) io.give_back_flags(got[i].flags, got[i].res);
  io.receive(mine, tag(Op::recv));
  got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].res, 100) << "the rest, without a new edge";
  io.give_back_flags(got[0].flags, got[0].res);
  io.cancel(tag(Op::recv), tag(Op::cancel));  // an owner closes only with nothing armed
  EXPECT_EQ(reap(2).size(), 2u);
  io.close(mine, 0);
}

TEST_F(EpollBackend, a_single_shot_receive_delivers_once) {
  const auto [mine, peer] = pair();
  EXPECT_FALSE(io.receive(mine, tag(Op::recv), false));
  ASSERT_EQ(::write(peer, "ab", 2), 2);
  auto got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].flags & io::completion_flags::more, 0u);
  io.give_back_flags(got[0].flags, got[0].res);
  ASSERT_EQ(::write(peer, "cd", 2), 2);
  EXPECT_TRUE(reap(1, 5).empty()) << "not armed: nothing read";
  io.close(mine, 0);
}

TEST_F(EpollBackend, a_cancel_takes_back_an_armed_receive_and_finds_nothing_twice) {
  const auto [mine, peer] = pair();
  io.receive(mine, tag(Op::recv));
  io.cancel(tag(Op::recv), tag(Op::cancel));
  auto got = reap(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].user_data, tag(Op::recv));
  EXPECT_EQ(got[0].res, -ECANCELED);
  EXPECT_EQ(got[1].user_data, tag(Op::cancel));
  EXPECT_EQ(got[1].res, 0);
  io.cancel(tag(Op::recv), tag(Op::cancel));
  got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].res, -ENOENT);
  io.close(mine, 0);
}

TEST_F(EpollBackend, a_send_that_finds_no_room_waits_for_it_and_completes_whole) {
  const auto [mine, peer] = pair();
  io.receive(mine, tag(Op::recv));  // adds the socket
  // Fill the socket until the kernel takes no more.
  const std::string chunk(65536, 'f');
  std::size_t filled = 0;
  while (true) {
    const ssize_t n = ::send(mine, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n <= 0) break;
    filled += std::size_t(n);
  }
  ASSERT_GT(filled, 0u);
  const std::string last(1000, 'l');
  io.send(mine, last.data(), last.size(), tag(Op::send));
  EXPECT_TRUE(reap(1, 5).empty()) << "no room: the send waits";
  // The peer reads everything: room again, the send goes and completes.
  std::vector<char> sink(1 << 20);
  std::size_t drained = 0;
  bool sent = false;
  for (int i = 0; i < 1000 && (!sent || drained < filled + last.size()); ++i) {
    const ssize_t n = ::recv(peer, sink.data(), sink.size(), MSG_DONTWAIT);
    if (n > 0) drained += std::size_t(n);
    for (const io::Completion& c : reap(1, 1)) {
      if (c.user_data != tag(Op::send)) continue;
      EXPECT_EQ(c.res, 1000);
      sent = true;
    }
  }
  EXPECT_TRUE(sent);
  EXPECT_EQ(drained, filled + last.size());
  io.cancel(tag(Op::recv), tag(Op::cancel));
  reap(2);
  io.close(mine, 0);
}

TEST_F(EpollBackend, a_connect_completes_with_zero_or_the_refusal) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  to_close.push_back(listener);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof any;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&any), &len);
  net::Address open;
  ASSERT_TRUE(net::parse_address("127.0.0.1", ntohs(any.sin_port), open));
  const int fd = io.open_socket(AF_INET, 0);
  ASSERT_GE(fd, 0);
  io.connect(fd, open, tag(Op::connect));
  auto got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].user_data, tag(Op::connect));
  EXPECT_EQ(got[0].res, 0);
  io.close(fd, 0);

  ::close(listener);
  to_close.clear();
  const int refused = io.open_socket(AF_INET, 0);
  io.connect(refused, open, tag(Op::connect, 1));
  got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].res, -ECONNREFUSED);
  io.close(refused, 1);
  EXPECT_GT(io.syscalls()[std::size_t(io::Syscall::connect)], 0u);
  EXPECT_GT(io.syscalls()[std::size_t(io::Syscall::epoll_wait)], 0u);
  EXPECT_EQ(io.syscalls()[std::size_t(io::Syscall::io_uring_enter)], 0u);
}

// Where epoll_pwait2 is missing the backend waits with epoll_wait: the same
// completions, a timeout rounded up to whole milliseconds.
TEST(EpollBackendWithoutPwait2, waits_with_epoll_wait_and_completes_the_same) {
  Backend io;
  Backend::Config config;
  config.recv_buffers = buffers;
  config.recv_buffer_bytes = buffer_bytes;
  config.slots = slots;
  config.without_pwait2 = true;
  ASSERT_EQ(io.init(config), "");
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
  io.receive(fds[0], tag(Op::recv));
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  __kernel_timespec ts{0, 1'500'000};  // 1.5 ms: waited as 2
  io.timeout(&ts, tag(Op::tick, io::slot_max, 0));
  std::array<io::Completion, io::reap_batch_max> batch;
  std::vector<io::Completion> got;
  for (int i = 0; i < 100 && got.size() < 2; ++i) {
    const std::uint32_t k = io.submit_and_reap(batch, __kernel_timespec{0, 10'000'000});
    got.insert(got.end(), batch.begin(), batch.begin() + k);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].res, 1);
  EXPECT_EQ(got[1].res, -ETIME);
  io.give_back_flags(got[0].flags, got[0].res);
  io.cancel(tag(Op::recv), tag(Op::cancel));
  for (int i = 0; i < 10; ++i) io.submit_and_reap(batch, __kernel_timespec{0, 1'000'000});
  io.close(fds[0], 0);
  ::close(fds[1]);
}

TEST_F(EpollBackend, a_timeout_completes_with_etime_once_due) {
  __kernel_timespec ts{0, 20'000'000};
  io.timeout(&ts, tag(Op::tick, io::slot_max, 0));
  const auto got = reap(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].user_data, tag(Op::tick, io::slot_max, 0));
  EXPECT_EQ(got[0].res, -ETIME);
}

}  // namespace
}  // namespace ringhttp::epoll
