// A client that goes away in the middle of an endless stream: the server must
// notice, stop producing, and free the connection.
#include <gtest/gtest.h>

#include <string>
#include <utility>

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
Connection start_endless_stream(std::uint16_t port, std::uint64_t body_bytes) {
  Connection connection(port);
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

}  // namespace
}  // namespace socket_test
