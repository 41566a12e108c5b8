// Running out of file descriptors: the server keeps serving the connections
// it has, counts the failed accepts, and accepts again once fds are freed.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

constexpr rlim_t server_fd_limit = 64;
// Far above what 64 fds allow: reaching it means the limit was never hit.
constexpr int connections_max = 4 * static_cast<int>(server_fd_limit);
// Only for the probe "is this new connection served?": the connection sits
// in the listen backlog, so an unserved one shows as no answer, not an error.
constexpr auto probe_timeout = 500ms;

// A connection with a request sent, answered within probe_timeout or not.
struct Probe {
  Connection connection;
  bool served;
};

Probe probe(std::uint16_t port) {
  ConnectOptions options;
  options.timeout = probe_timeout;
  Connection connection(port, options);
  connection.send_all(get("/plaintext"));
  try {
    const bool served = is_plaintext_ok(connection.read_response());
    connection.set_timeout(5s);
    return {std::move(connection), served};
  } catch (const std::exception&) {
    connection.set_timeout(5s);
    return {std::move(connection), false};
  }
}

TEST(FdExhaustion, server_survives_running_out_of_fds_and_recovers) {
  ServerProcess server(ServerOptions{{"--shards", "1"}, server_fd_limit});

  std::vector<Connection> served;
  std::optional<Connection> waiting;  // the first connection the server could not accept
  while (static_cast<int>(served.size()) < connections_max) {
    Probe p = probe(server.port());
    if (!p.served) {
      waiting = std::move(p.connection);
      break;
    }
    served.push_back(std::move(p.connection));
  }
  ASSERT_TRUE(waiting) << "the server served " << served.size()
                       << " connections under RLIMIT_NOFILE=" << server_fd_limit
                       << "; it should have run out of descriptors";
  ASSERT_GT(served.size(), 20u) << "too few connections before exhaustion to run the test";

  for (std::size_t i = 0; i < served.size(); ++i) {
    ASSERT_TRUE(is_plaintext_ok(round_trip(served[i], get("/plaintext")))) << "existing connection " << i;
  }

  served.erase(served.begin(), served.begin() + 20);
  // The waiting connection is first in the accept queue; its request was
  // sent long ago and must now be answered.
  EXPECT_TRUE(is_plaintext_ok(waiting->read_response())) << "the backlogged connection was never served";
  EXPECT_TRUE(eventually([&] { return probe(server.port()).served; }))
      << "new connections still not served 5 s after 20 connections were closed";
  EXPECT_GT(scrape_metrics(server.port()).value(metric::accept_errors("fd_limit")), 0);
  for (std::size_t i = 0; i < served.size(); ++i) {
    ASSERT_TRUE(is_plaintext_ok(round_trip(served[i], get("/plaintext")))) << "existing connection " << i;
  }
}

}  // namespace
}  // namespace socket_test
