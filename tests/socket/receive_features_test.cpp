// The receive side's 6.x --uring switches over real sockets: with
// recv-bundle one completion takes several provided buffers, with
// incremental-buffers one buffer takes several receives (of one connection
// or of many). Either way every byte reaches its request once and in
// order: pipelines, bodies larger than a buffer, input held while paused,
// and bytes trickled in over many connections at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/kernel_features.hpp"
#include "support/metrics.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

const std::string recv_bundles = "ringhttp_recv_bundles_total";

// The start-up line's uring= field names `feature`.
bool started_with(const ServerProcess& server, const std::string& feature) {
  const std::string line = server.startup_line();
  const auto at = line.find("uring=");
  if (at == std::string::npos) return false;
  const std::string list = line.substr(at + 6, line.find(' ', at) - (at + 6));
  for (std::size_t begin = 0; begin < list.size();) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    if (list.compare(begin, comma - begin, feature) == 0) return true;
    begin = comma + 1;
  }
  return false;
}

class ReceiveFeatures : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--uring", GetParam()}};
};

// 300 requests in one send, about three 4 KiB buffers' worth: the server
// pauses its input after a few dozen (its response queue is full) and holds
// the rest, then answers every one in order as the client reads.
TEST_P(ReceiveFeatures, a_pipeline_of_several_buffers_at_once_is_answered_in_order) {
  Connection connection(server.port());
  for (int round = 0; round < 5; ++round) {
    std::string pipeline;
    for (int i = 0; i < 300; ++i) pipeline += get(i % 2 == 0 ? "/json" : "/plaintext");
    connection.send_all(pipeline);
    for (int i = 0; i < 300; ++i) {
      const Response response = connection.read_response();
      if (i % 2 == 0) {
        ASSERT_EQ(response.body, json_body) << "round " << round << ", response " << i;
      } else {
        ASSERT_TRUE(is_plaintext_ok(response)) << "round " << round << ", response " << i;
      }
    }
  }
}

// A body of 64 KiB (sixteen buffers) sent at once with its request, and a
// request right behind it in the same send.
TEST_P(ReceiveFeatures, a_body_of_many_buffers_at_once_is_read_and_the_next_request_answered) {
  Connection connection(server.port());
  const std::string body(64 * 1024, 'b');
  for (int round = 0; round < 10; ++round) {
    connection.send_all(request("GET", "/plaintext", "Content-Length: " + std::to_string(body.size()) + "\r\n", body) +
                        get("/json"));
    ASSERT_TRUE(is_plaintext_ok(connection.read_response())) << "round " << round;
    ASSERT_EQ(connection.read_response().body, json_body) << "round " << round;
  }
}

// Sixteen connections send their requests a few bytes at a time, in turn:
// with an incremental ring the pieces of many connections share buffers.
TEST_P(ReceiveFeatures, requests_trickled_in_over_many_connections_at_once_are_each_answered) {
  constexpr int connections_count = 16;
  std::vector<Connection> connections;
  for (int i = 0; i < connections_count; ++i) connections.emplace_back(server.port());
  const std::string pipeline = get("/json") + get("/plaintext") + get("/json");
  for (std::size_t at = 0; at < pipeline.size(); at += 7) {
    for (Connection& c : connections) c.send_all(pipeline.substr(at, 7));
  }
  for (Connection& c : connections) {
    ASSERT_EQ(c.read_response().body, json_body);
    ASSERT_TRUE(is_plaintext_ok(c.read_response()));
    ASSERT_EQ(c.read_response().body, json_body);
  }
}

std::string test_name(const testing::TestParamInfo<std::string>& param_info) {
  std::string name;
  for (char c : param_info.param) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Switches, ReceiveFeatures,
                         testing::Values("6.1", "6.1,recv-bundle", "6.1,incremental-buffers", "6.12",
                                         "5.19,recv-bundle,incremental-buffers"),
                         test_name);

// Bytes of several buffers arriving at once are taken by one completion
// when recv-bundle is on (counted), and never when it is off. Whether the
// kernel has bundles is asked of the kernel: a server that did not turn
// them on where the kernel has them fails here.
TEST(RecvBundle, several_buffers_arriving_at_once_are_taken_in_one_completion_only_when_on) {
  if (!kernel_has_recv_bundle()) GTEST_SKIP() << "this kernel has no IORING_FEAT_RECVSEND_BUNDLE (Linux 6.10)";
  for (const std::string uring : {"6.1,recv-bundle", "6.1"}) {
    ServerProcess server({"--shards", "1", "--uring", uring});
    const bool on = started_with(server, "recv-bundle");
    ASSERT_EQ(on, uring != "6.1") << "--uring " << uring << " started as: " << server.startup_line();
    {
      Connection connection(server.port());
      const std::string body(64 * 1024, 'b');
      for (int round = 0; round < 10; ++round) {
        connection.send_all(
            request("GET", "/plaintext", "Content-Length: " + std::to_string(body.size()) + "\r\n", body));
        ASSERT_TRUE(is_plaintext_ok(connection.read_response()));
      }
    }
    const double bundles = scrape_metrics(server.port()).value(recv_bundles);
    if (on) {
      EXPECT_GT(bundles, 0) << uring;
    } else {
      EXPECT_EQ(bundles, 0) << uring;
    }
  }
}

}  // namespace
}  // namespace socket_test
