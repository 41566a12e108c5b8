// A client that goes away in the middle of an endless stream: the server must
// notice, stop producing, and free the connection. And peers that leave in a
// way only a cancel can end: the server must cancel what it has in flight
// for them (counted by its backend, on io_uring and on epoll) and free their
// slots.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

constexpr unsigned long long one_tib = 1ull << 40;
constexpr double one_gib = 1ull << 30;
// What one scrape may add to bytes_sent on an idle server: its own
// response, a few KiB.
constexpr double scrape_bytes_max = 64 * 1024;
// Scrapes between the two readings of bytes_sent. Each is a request the
// only shard serves, so its event loop has turned over that many times at
// least: a stream still being produced would have sent in those turns.
// Counting the shard's turns rather than sleeping makes the window the same
// on a loaded machine as on an idle one.
constexpr int scrapes_between = 5;

// bytes_sent, then again after the shard has served `scrapes_between` more
// scrapes: {first, last}.
std::pair<Metrics, Metrics> two_readings_apart(std::uint16_t port) {
  Metrics first = scrape_metrics(port);
  Metrics last = first;
  for (int i = 0; i < scrapes_between; ++i) last = scrape_metrics(port);
  return {first, last};
}

// Each scrape opens a fresh connection, which is active while it is scraped:
// an otherwise idle server reports exactly one active connection.
constexpr double scrape_connections = 1;

bool connections_return_to_idle(std::uint16_t port) {
  return eventually([&] { return scrape_metrics(port).value(metric::active) == scrape_connections; });
}

// Starts a 1 TiB stream and reads the head and `body_bytes` of it.
Connection start_endless_stream(std::uint16_t port, std::uint64_t body_bytes, ConnectOptions options = {}) {
  Connection connection(port, std::move(options));
  connection.send_all(get(stream_path(one_tib)));
  const Response response = connection.read_head();
  if (response.status != 200) throw std::runtime_error("stream answered " + std::to_string(response.status));
  if (!read_stream_body(connection, body_bytes)) throw std::runtime_error("stream pattern broken");
  return connection;
}

// Cancel on disconnect in every --send mode.
class Cancel : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--send", GetParam()}};
};

TEST_P(Cancel, abandoned_endless_stream_stops_and_its_connection_is_freed) {
  ASSERT_TRUE(connections_return_to_idle(server.port()));
  const Metrics before = scrape_metrics(server.port());

  start_endless_stream(server.port(), 1 << 20).close();  // unread data pending: the close sends a reset

  EXPECT_TRUE(connections_return_to_idle(server.port()))
      << "the abandoned stream's connection is still active after the client closed it";
  const auto [first, second] = two_readings_apart(server.port());

  EXPECT_LT(second.value(metric::bytes_sent), one_gib) << "the server kept streaming to a closed connection";
  EXPECT_LT(second.value(metric::bytes_sent) - first.value(metric::bytes_sent), scrapes_between * scrape_bytes_max)
      << "bytes_sent still growing after the peer left";
  EXPECT_GT(second.value(metric::closed), before.value(metric::closed));
  // Whether anything was cancelled (rather than failed with EPIPE or
  // ECONNRESET) depends on what was in flight; report it, do not require it.
  // CancelOnDisconnect below requires it where a cancel is the only way out.
  RecordProperty("cancellations", std::to_string(second.value(metric::cancellations)));
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

TEST_P(Cancel, twenty_resets_mid_stream_leave_the_server_healthy) {
  for (int i = 0; i < 20; ++i) start_endless_stream(server.port(), 64 * 1024).reset();
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  EXPECT_TRUE(connections_return_to_idle(server.port())) << "reset connections are still active after the resets";
  const auto [first, second] = two_readings_apart(server.port());
  EXPECT_LT(second.value(metric::bytes_sent) - first.value(metric::bytes_sent), scrapes_between * scrape_bytes_max);
  // Slots are freed only after their last completion, so no completion may
  // ever find its slot reused.
  EXPECT_EQ(second.value("ringhttp_stale_completions_total"), 0);
  EXPECT_GT(second.series.count("ringhttp_stale_completions_total"), 0u) << "the counter must be exposed";
}

INSTANTIATE_TEST_SUITE_P(SendModes, Cancel, testing::ValuesIn(send_modes), send_mode_test_name);

// ---- Cancel on disconnect: peers that leave the server nothing to wait for.
//
// The servers below serve /metrics on a listener of their own, so a scrape
// is no connection of the shard: connections_active counts the test's own,
// and operations_cancelled only what was cancelled for them. The timeouts
// are short so that each test is quick; nothing here depends on how quick.
constexpr int send_timeout_ms = 300;
constexpr int idle_timeout_ms = 300;

// The operations the backend cancelled: each cancel whose completion said
// it found its operation and stopped it.
const std::string operations_cancelled = "ringhttp_operations_cancelled_total";
const std::string sends_again = "ringhttp_sends_again_total";

struct Setup {
  std::string backend;  // --backend
  std::string send;     // --send
};

ServerProcess cancelling_server(const Setup& setup, int send_timeout = send_timeout_ms) {
  return ServerProcess({"--shards", "1", "--backend", setup.backend, "--send", setup.send, "--metrics-address",
                        "127.0.0.1:0", "--send-timeout-ms", std::to_string(send_timeout), "--idle-timeout-ms",
                        std::to_string(idle_timeout_ms)});
}

// The peer's connection closed and its slot freed: none active, and the
// backend's count of cancelled operations above `before`'s.
testing::AssertionResult released_after_a_cancel(std::uint16_t metrics_port, const Metrics& before) {
  const double closed_before = before.value(metric::closed);
  if (!eventually([&] { return scrape_metrics(metrics_port).value(metric::closed) > closed_before; })) {
    return testing::AssertionFailure() << "the connection was never released: its slot stays taken";
  }
  const Metrics after = scrape_metrics(metrics_port);
  if (const double active = after.value(metric::active); active != 0) {
    return testing::AssertionFailure() << active << " connection(s) still active after the release";
  }
  if (after.value(operations_cancelled) <= before.value(operations_cancelled)) {
    return testing::AssertionFailure() << "released, but the backend cancelled nothing";
  }
  return testing::AssertionSuccess();
}

class CancelOnDisconnect : public testing::TestWithParam<Setup> {
 protected:
  ServerProcess server = cancelling_server(GetParam());
  std::uint16_t metrics_port() const { return *server.metrics_port(); }
};

// A peer that stops reading an endless stream and stays, as one whose host
// vanished mid-download: no FIN, no reset, so nothing fails the server's
// send, which waits for room that never comes. Once --send-timeout-ms
// passes without progress the server aborts, and that send ends only if it
// is cancelled: no cancel, no release, and the slot stays taken while the
// peer stays.
TEST_P(CancelOnDisconnect, peer_that_stops_reading_has_its_send_cancelled_and_its_slot_freed) {
  const Metrics before = scrape_metrics(metrics_port());
  ASSERT_EQ(before.value(metric::active), 0);
  // A small window, so that the server's send is blocked soon after.
  Connection peer = start_endless_stream(server.port(), 64 * 1024, {.receive_buffer_bytes = 16 * 1024});

  EXPECT_TRUE(released_after_a_cancel(metrics_port(), before));
  const Metrics after = scrape_metrics(metrics_port());
  EXPECT_EQ(after.value(metric::timeouts("send")) - before.value(metric::timeouts("send")), 1)
      << "the blocked send is ended by the send timeout's abort";
  EXPECT_EQ(after.value(metric::stale_completions), 0);
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

std::string setup_test_name(const testing::TestParamInfo<Setup>& param_info) {
  return param_info.param.backend + "_" + param_info.param.send;
}

// With zc the slot also waits for the sends' notifications, which come
// only once the socket drops the bytes the peer never read: the server
// resets the connection for them (Engine::reset). epoll sends with sendmsg
// only.
INSTANTIATE_TEST_SUITE_P(Backends, CancelOnDisconnect,
                         testing::Values(Setup{"uring", "writev"}, Setup{"uring", "sendmsg"}, Setup{"uring", "zc"},
                                         Setup{"epoll", "sendmsg"}),
                         setup_test_name);

// A peer that goes silent after a request, its socket left open: as one
// whose host vanished (no FIN, no reset). The receive armed for its next
// request never completes by itself; once --idle-timeout-ms passes the
// server aborts, and that receive ends only if it is cancelled. The send
// mode plays no part: each backend once.
class CancelSilentPeer : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server = cancelling_server({GetParam(), "sendmsg"});
  std::uint16_t metrics_port() const { return *server.metrics_port(); }
};

TEST_P(CancelSilentPeer, silent_peer_has_its_receive_cancelled_by_the_idle_timeout_and_its_slot_freed) {
  const Metrics before = scrape_metrics(metrics_port());
  ASSERT_EQ(before.value(metric::active), 0);
  Connection peer(server.port(), {.timeout = eventually_deadline});  // a hang guard for the close awaited below
  ASSERT_TRUE(is_plaintext_ok(round_trip(peer, get("/plaintext"))));

  EXPECT_TRUE(released_after_a_cancel(metrics_port(), before));
  EXPECT_TRUE(peer.expect_closed()) << "the server closes the socket once its slot is freed";
  const Metrics after = scrape_metrics(metrics_port());
  EXPECT_EQ(after.value(metric::timeouts("idle")) - before.value(metric::timeouts("idle")), 1);
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

INSTANTIATE_TEST_SUITE_P(Backends, CancelSilentPeer, testing::Values("uring", "epoll"),
                         [](const testing::TestParamInfo<std::string>& p) { return p.param; });

// ---- Peers that stop reading and half-close: no kernel thread each, no loop.
//
// Once such a peer's FIN arrives, io_uring wakes the server's blocked send
// although the socket still has no room, and hands it to a worker thread of
// its own. On a blocking socket that thread then waits as long as the peer
// stays: a thread per peer, as many as peers care to open. The server's
// sockets are non-blocking, so the worker gives the send back (EAGAIN); the
// server makes it again once at once and then once per tick (100 ms), never
// in a loop.

// io_uring's worker threads in process `pid` (named iou-wrk-PID).
int io_uring_workers(pid_t pid) {
  int n = 0;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name.starts_with("iou-wrk")) ++n;
  }
  return n;
}

TEST(HalfClosedSlowReaders, hold_no_io_uring_worker_thread_each_and_are_made_again_at_most_twice_a_tick) {
  constexpr int peers = 32;
  // Long enough that the peers stay for the whole test; they are closed
  // at its end.
  ServerProcess server = cancelling_server({"uring", "sendmsg"}, 60'000);
  const std::uint16_t metrics_port = *server.metrics_port();
  std::vector<Connection> waiting;
  for (int i = 0; i < peers; ++i) {
    waiting.push_back(start_endless_stream(server.port(), 64 * 1024, {.receive_buffer_bytes = 16 * 1024}));
    ASSERT_EQ(::shutdown(waiting.back().fd(), SHUT_WR), 0) << "half-close";
  }
  // Each peer's send is woken with no room at least once: given back, not
  // held (a blocking socket never gives it back, and this never holds).
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics_port).value(sends_again) >= peers; }))
      << "the sends woken by the peers' FIN were never given back";
  EXPECT_LE(io_uring_workers(server.pid()), 4) << "a worker thread held per half-closed peer";

  // Made again at most twice a tick each: counted over a measured span.
  const auto start = std::chrono::steady_clock::now();
  const double again_before = scrape_metrics(metrics_port).value(sends_again);
  std::this_thread::sleep_for(500ms);
  const double again_after = scrape_metrics(metrics_port).value(sends_again);
  const auto span_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  const double ticks = double(span_ms.count()) / 100.0 + 2;  // the span's ticks, one begun at each end
  EXPECT_LE(again_after - again_before, 2 * peers * ticks) << "sends made again in a loop";
  EXPECT_EQ(scrape_metrics(metrics_port).value(metric::active), peers) << "every peer is still being served";
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

}  // namespace
}  // namespace socket_test
