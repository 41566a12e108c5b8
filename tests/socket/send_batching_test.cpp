// "Every response, or every batch of pipelined responses read together,
// leaves in one send": proven with the server's own send counter.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "support/checks.hpp"
#include "support/connection.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

// One send per read event, whatever operation the send is. Scrapes go to
// --metrics-address, which counts nothing of its own, and the connection
// measured has answered one request before the first: over TLS its
// handshake and session tickets have left by then, and its close_notify
// leaves after the second. Between the two, each send is a response's.
class SendBatching : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--send", GetParam(), "--metrics-address", "127.0.0.1:0"}};
  const std::uint16_t metrics_port = *server.metrics_port();
};

TEST_P(SendBatching, each_sequential_response_leaves_in_exactly_one_send) {
  constexpr int count = 1000;
  Connection connection(server.port());
  ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  const Metrics before = scrape_metrics(metrics_port);
  for (int i = 0; i < count; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  const Metrics after = scrape_metrics(metrics_port);
  EXPECT_EQ(after.value(metric::sends) - before.value(metric::sends), count);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), count);
  EXPECT_EQ(after.value(metric::requests) - before.value(metric::requests), count);
}

TEST_P(SendBatching, pipelined_requests_sent_together_are_answered_in_a_few_sends) {
  constexpr int count = 100;
  // However the server splits one 4 KiB packet into receives, a handful of
  // sends is the most that "one send per read" allows; 100 would mean one
  // send per response.
  constexpr int pipelined_sends_max = 10;
  std::string pipeline;
  for (int i = 0; i < count; ++i) pipeline += get("/plaintext");

  Connection connection(server.port());
  ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  const Metrics before = scrape_metrics(metrics_port);
  connection.send_all(pipeline);  // one send() with TCP_NODELAY: one segment on loopback
  for (int i = 0; i < count; ++i) ASSERT_TRUE(is_plaintext_ok(connection.read_response())) << "response " << i;
  const Metrics after = scrape_metrics(metrics_port);
  const double pipelined_sends = after.value(metric::sends) - before.value(metric::sends);
  EXPECT_GE(pipelined_sends, 1);
  EXPECT_LE(pipelined_sends, pipelined_sends_max);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), count);
}

INSTANTIATE_TEST_SUITE_P(SendModes, SendBatching, testing::ValuesIn(send_modes), send_mode_test_name);

}  // namespace
}  // namespace socket_test
