// "Every response, or every batch of pipelined responses read together,
// leaves in one send": proven with the server's own send counter.
#include <gtest/gtest.h>

#include <string>

#include "support/checks.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

// A delta between two scrapes holds exactly one scrape's own counts: a
// /metrics response is rendered before its send (and response) is counted,
// so the second scrape sees the first one's send but not its own. (For
// requests_total it does not matter when the scrape's request is counted:
// either way one of the two scrapes falls inside the delta.)
constexpr int scrape_sends = 1;

// One send per read event, whatever operation the send is.
class SendBatching : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--send", GetParam()}};
};

TEST_P(SendBatching, each_sequential_response_leaves_in_exactly_one_send) {
  constexpr int count = 1000;
  const Metrics before = scrape_metrics(server.port());
  {
    Connection connection(server.port());
    for (int i = 0; i < count; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  }
  const Metrics after = scrape_metrics(server.port());
  EXPECT_EQ(after.value(metric::sends) - before.value(metric::sends), count + scrape_sends);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), count + scrape_sends);
  EXPECT_EQ(after.value(metric::requests) - before.value(metric::requests), count + 1);
}

TEST_P(SendBatching, pipelined_requests_sent_together_are_answered_in_a_few_sends) {
  constexpr int count = 100;
  // However the server splits one 4 KiB packet into receives, a handful of
  // sends is the most that "one send per read" allows; 100 would mean one
  // send per response.
  constexpr int pipelined_sends_max = 10;
  std::string pipeline;
  for (int i = 0; i < count; ++i) pipeline += get("/plaintext");

  const Metrics before = scrape_metrics(server.port());
  {
    Connection connection(server.port());
    connection.send_all(pipeline);  // one send() with TCP_NODELAY: one segment on loopback
    for (int i = 0; i < count; ++i) ASSERT_TRUE(is_plaintext_ok(connection.read_response())) << "response " << i;
  }
  const Metrics after = scrape_metrics(server.port());
  const double pipelined_sends = after.value(metric::sends) - before.value(metric::sends) - scrape_sends;
  EXPECT_GE(pipelined_sends, 1);
  EXPECT_LE(pipelined_sends, pipelined_sends_max);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), count + scrape_sends);
}

INSTANTIATE_TEST_SUITE_P(SendModes, SendBatching, testing::ValuesIn(send_modes), send_mode_test_name);

}  // namespace
}  // namespace socket_test
