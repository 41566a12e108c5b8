// Several shards behind one port: every connection is served whichever shard
// the kernel hands it to, and /metrics sums the shards.
#include <gtest/gtest.h>

#include <string>

#include "support/checks.hpp"
#include "support/clients.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

TEST(Shards, two_shards_serve_every_connection_and_metrics_sum_them) {
  constexpr int clients = 50;
  constexpr int requests_each = 10;
  ServerProcess server({"--shards", "2"});
  EXPECT_NE(server.startup_line().find(" shards=2"), std::string::npos) << server.startup_line();
  const Metrics before = scrape_metrics(server.port());

  const auto errors = run_clients(clients, [&](int) {
    Connection connection(server.port());
    for (int i = 0; i < requests_each; ++i) {
      if (!is_plaintext_ok(round_trip(connection, get("/plaintext")))) {
        throw std::runtime_error("request " + std::to_string(i) + " not served");
      }
    }
  });
  ASSERT_TRUE(errors.empty()) << errors.size() << " clients failed, first: " << errors.front();

  const Metrics after = scrape_metrics(server.port());
  // One scrape's own counts fall inside each delta (see send_batching_test).
  EXPECT_EQ(after.value(metric::requests) - before.value(metric::requests), clients * requests_each + 1);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), clients * requests_each + 1);
  EXPECT_EQ(after.value(metric::accepted) - before.value(metric::accepted), clients + 1);
}

}  // namespace
}  // namespace socket_test
