// The counters of the server's edge paths, each driven above zero by the
// situation it counts (a counter that is never incremented fails its test):
// cancellations, recv_no_buffers and input_overflow. (table_full and
// connections_reclaimed: server_flags_test.cpp, with --connections-max.)
//
// Each server here serves /metrics on --metrics-address, so the scrapes are
// not connections of the shard and touch none of its counters: the values
// are exactly what the test's own clients caused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/clients.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

const std::string recv_no_buffers = "ringhttp_recv_no_buffers_total";
const std::string input_overflow = "ringhttp_input_overflow_total";

ServerProcess server_with_private_metrics(std::vector<std::string> args) {
  args.insert(args.end(), {"--shards", "1", "--metrics-address", "127.0.0.1:0"});
  return ServerProcess(std::move(args));
}

// --- cancellations -------------------------------------------------------------

// A reader that stops reading a 1 TiB stream: after --send-timeout-ms
// without progress the server drops it, cancelling the two operations it
// has in flight, the receive and the send.
TEST(Counters, cancellations_counts_the_receive_and_the_send_a_send_timeout_cancels) {
  ServerProcess server = server_with_private_metrics({"--send-timeout-ms", "200"});
  const std::uint16_t metrics_port = *server.metrics_port();
  Connection reader(server.port(), {.receive_buffer_bytes = 16 * 1024});
  reader.send_all(get(stream_path(1ull << 40)));
  ASSERT_EQ(reader.read_head().status, 200);

  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics_port).value(metric::closed) == 1; }));
  const Metrics m = scrape_metrics(metrics_port);
  EXPECT_EQ(m.value(metric::timeouts("send")), 1);
  EXPECT_EQ(m.value(metric::cancellations), 2);
}

// An idle keep-alive connection closed by --idle-timeout-ms has one
// operation in flight, its receive: one cancellation.
TEST(Counters, cancellations_counts_the_receive_an_idle_timeout_cancels) {
  ServerProcess server = server_with_private_metrics({"--idle-timeout-ms", "200"});
  const std::uint16_t metrics_port = *server.metrics_port();
  Connection idle(server.port(), {.timeout = 30s});  // a hang guard for the close awaited below
  ASSERT_TRUE(is_plaintext_ok(round_trip(idle, get("/plaintext"))));

  EXPECT_TRUE(idle.expect_closed());
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics_port).value(metric::closed) == 1; }));
  const Metrics m = scrape_metrics(metrics_port);
  EXPECT_EQ(m.value(metric::timeouts("idle")), 1);
  EXPECT_EQ(m.value(metric::cancellations), 1);
}

// --- syscalls ------------------------------------------------------------------

// Each backend counts the system calls it makes: 100 requests one at a time
// on one connection cost io_uring some io_uring_enter calls and no recv, and
// epoll at least a recv and a send each, an accept, and no io_uring_enter.
TEST(Counters, syscalls_counts_what_each_backend_calls) {
  auto call = [](const std::string& name) { return "ringhttp_syscalls_total{call=\"" + name + "\"}"; };
  for (const std::string backend : {"uring", "epoll"}) {
    ServerProcess server = server_with_private_metrics({"--backend", backend});
    const std::uint16_t metrics_port = *server.metrics_port();
    Connection connection(server.port());
    for (int i = 0; i < 100; ++i) {
      ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext")))) << backend << " request " << i;
    }
    const Metrics m = scrape_metrics(metrics_port);
    if (backend == "uring") {
      EXPECT_GE(m.value(call("io_uring_enter")), 100) << "one wait at least per request, one at a time";
      EXPECT_EQ(m.value(call("recv")) + m.value(call("epoll_wait")) + m.value(call("accept")), 0);
    } else {
      EXPECT_EQ(m.value(call("io_uring_enter")), 0);
      EXPECT_GE(m.value(call("recv")), 100);
      EXPECT_GE(m.value(call("send")), 100);
      EXPECT_GE(m.value(call("accept")), 1);
      EXPECT_GE(m.value(call("epoll_wait")), 100);
    }
  }
}

// --- recv_no_buffers -----------------------------------------------------------

// 64 clients at once each send a request with a 512 KiB body (read and
// discarded by the server): 32 MiB arriving together, 8,192 of the shard's
// 4 KiB receive buffers' worth against its 1,024, so receives find the
// buffer ring empty. Each round is bounded (64 requests); the rounds go on
// only until the counter moves, at most ten. Every request is still
// answered: a receive without a buffer is re-armed, not lost. io_uring's
// alone: there the kernel fills buffers while the shard works; the epoll
// backend reads only as fast as the shard takes its buffers back.
TEST(Counters, recv_no_buffers_counts_receives_that_found_the_buffer_ring_empty) {
  constexpr int clients = 64;
  constexpr int body_bytes = 512 * 1024;
  constexpr int rounds_max = 10;
  ServerProcess server = server_with_private_metrics({"--backend", "uring"});
  const std::uint16_t metrics_port = *server.metrics_port();
  const std::string with_body = request("GET", "/plaintext", "Content-Length: " + std::to_string(body_bytes) + "\r\n",
                                        std::string(body_bytes, 'b'));
  double no_buffers = 0;
  for (int round = 0; round < rounds_max && no_buffers == 0; ++round) {
    const auto errors = run_clients(clients, [&](int) {
      Connection connection(server.port());
      if (!is_plaintext_ok(round_trip(connection, with_body))) throw std::runtime_error("not answered 200");
    });
    ASSERT_TRUE(errors.empty()) << errors.size() << " clients failed, first: " << errors.front();
    no_buffers = scrape_metrics(metrics_port).value(recv_no_buffers);
  }
  EXPECT_GT(no_buffers, 0);
}

// --- input_overflow ------------------------------------------------------------

// 200 clients each pipeline 3,000 requests for endless streams (183 KB, 45
// receive buffers' worth) and read nothing: each pauses after 31 requests
// with its output stuck, and holds what arrived meanwhile. Together that
// is more than the shard may hold (512 receive buffers and 4,096 spill
// blocks), so the connections that find the spill full are closed and
// counted; every connection closed is one of them, the others stay open.
TEST(Counters, input_overflow_counts_connections_closed_for_input_beyond_what_may_be_held) {
  constexpr int flooders = 200;
  constexpr int requests_each = 3000;
  constexpr int send_buffer_bytes = 1 << 20;  // the whole burst leaves in one send
  ServerProcess server = server_with_private_metrics({});
  const std::uint16_t metrics_port = *server.metrics_port();
  std::string burst;
  for (int i = 0; i < requests_each; ++i) burst += get(stream_path(1ull << 40));
  std::vector<Connection> flood;
  for (int c = 0; c < flooders; ++c) {
    flood.emplace_back(server.port(), ConnectOptions{.receive_buffer_bytes = 4096});
    const int fd = flood.back().fd();
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer_bytes, sizeof send_buffer_bytes);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  for (Connection& c : flood) {
    const std::string wire = c.wire_bytes(burst);  // over TLS, its records
    ASSERT_EQ(::send(c.fd(), wire.data(), wire.size(), MSG_NOSIGNAL), ssize_t(wire.size()));
  }

  // Settled: every flooder accepted, some closed for overflow, and every
  // connection closed was closed for it.
  Metrics m;
  EXPECT_TRUE(eventually([&] {
    m = scrape_metrics(metrics_port);
    const double overflowed = m.value(input_overflow);
    return overflowed > 0 && m.value(metric::accepted) == flooders && m.value(metric::closed) == overflowed &&
           m.value(metric::active) == flooders - overflowed;
  })) << input_overflow
      << " " << m.value(input_overflow) << ", accepted " << m.value(metric::accepted) << ", closed "
      << m.value(metric::closed) << ", active " << m.value(metric::active);
}

}  // namespace
}  // namespace socket_test
