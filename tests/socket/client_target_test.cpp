// Where the client connects: host names (pinned with --resolve, or through
// the resolver for localhost), -4/-6, every address of a name tried in
// order, the Host header the URL gives, and connection churn counted
// exactly against the server's own counters. Loopback only, as every test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/canned_server.hpp"
#include "support/client_process.hpp"
#include "support/ipv6.hpp"
#include "support/json_report.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

std::string port_text(const CannedServer& s) { return std::to_string(s.port()); }

TEST(ClientTarget, a_name_pinned_with_resolve_is_connected_and_named_in_host) {
  CannedServer server(CannedServer::echo_host, CannedServer::After::keep_open);
  const std::string authority = "api.test:" + port_text(server);
  // Every response's body is the Host the server read: the URL's host and
  // port, never the address the name was pinned to.
  const ClientRun run = run_client({"-n", "50", "-c", "2", "--json", "--resolve", authority + ":127.0.0.1",
                                    "--expect-body", authority, "http://" + authority + "/"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 50u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
}

TEST(ClientTarget, localhost_goes_through_the_resolver) {
  CannedServer server(CannedServer::echo_host, CannedServer::After::keep_open);
  const std::string authority = "localhost:" + port_text(server);
  const ClientRun run =
      run_client({"-4", "-n", "20", "-c", "1", "--json", "--expect-body", authority, "http://" + authority + "/x"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).number("/requests"), 20u);
}

TEST(ClientTarget, every_address_of_a_name_is_tried_in_order) {
  CannedServer server(CannedServer::echo_host, CannedServer::After::keep_open);
  const std::string authority = "multi.test:" + port_text(server);
  // 127.0.0.2 refuses (the server listens on 127.0.0.1 only): the run goes
  // on to the next address, with no error.
  const ClientRun run = run_client({"-n", "20", "-c", "2", "--json", "--resolve", authority + ":127.0.0.2,127.0.0.1",
                                    "--expect-body", authority, "http://" + authority + "/"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 20u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // None accepting: one message naming each address's failure, exit 1.
  const ClientRun none = run_client({"-n", "5", "--resolve", authority + ":127.0.0.2,127.0.0.3",
                                     "http://" + authority + "/"});
  EXPECT_EQ(none.exit_code, 1) << none.err;
  EXPECT_NE(none.err.find("127.0.0.2:" + port_text(server) + ": Connection refused"), std::string::npos) << none.err;
  EXPECT_NE(none.err.find("127.0.0.3:" + port_text(server) + ": Connection refused"), std::string::npos) << none.err;
}

TEST(ClientTarget, ipv6_and_the_family_flags) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "this machine has no ::1";
  ServerProcess server({"--address", "::1", "--shards", "1"});
  const std::string port = std::to_string(server.port());
  const ClientRun run = run_client({"-6", "-n", "20", "--json", "--resolve", "v6.test:" + port + ":127.0.0.1,::1",
                                    "http://v6.test:" + port + "/plaintext"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).number("/requests"), 20u);
  const ClientRun literal = run_client({"-n", "20", "--json", "http://[::1]:" + port + "/plaintext"});
  ASSERT_EQ(literal.exit_code, 0) << literal.err << literal.out;
  // -4 leaves nothing of an IPv6 literal: exit 2, said.
  const ClientRun refused = run_client({"-4", "-n", "1", "http://[::1]:" + port + "/plaintext"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("no IPv4 address"), std::string::npos) << refused.err;
}

TEST(ClientTarget, a_name_that_does_not_resolve_is_exit_2_naming_it) {
  // .invalid never resolves (RFC 6761); one short try of the resolver.
  const ClientRun run = run_client({"-n", "1", "http://no-such-host.invalid:8080/"}, std::chrono::seconds(30),
                                   {"RES_OPTIONS=timeout:1 attempts:1"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("cannot resolve 'no-such-host.invalid'"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("requests/s"), std::string::npos) << "nothing ran:\n" << run.out;
}

TEST(ClientTarget, requests_per_connection_are_exact_against_the_servers_counts) {
  ServerProcess server({"--shards", "1", "--metrics-address", "127.0.0.1:0"});
  const std::uint16_t metrics_port = *server.metrics_port();
  // 4 connections, 600 requests, 10 a connection, pipelined 4: every
  // connection's last batch ends with its Connection: close request (10 =
  // 4 + 4 + 2), so 60 connections, each closed by the server after its
  // tenth answer, none an error.
  const ClientRun run = run_client({"-n", "600", "-c", "4", "-p", "4", "--requests-per-connection", "10", "--json",
                                    "http://127.0.0.1:" + std::to_string(server.port()) + "/plaintext"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 600u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/reconnects"), 56u) << "60 connections over 4 slots";
  const Metrics m = scrape_metrics(metrics_port);
  EXPECT_EQ(m.value(metric::requests), 600.0);
  // The client's start-up check is one connection more.
  EXPECT_EQ(m.value(metric::accepted), 61.0);
}

}  // namespace
}  // namespace socket_test
