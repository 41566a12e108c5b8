// Server flags no other test reaches: --help and --version, --cors-max-age
// (the preflight's Access-Control-Max-Age), and --rate-limit-addresses (the
// limiter's table size: a client whose set fills up is forgotten and starts
// again with a full bucket, counted in /metrics). Over real sockets; the
// rate limiter's clients are distinct loopback addresses (127.0.0.0/8).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "support/checks.hpp"
#include "support/connection.hpp"
#include "support/http_response.hpp"
#include "support/metrics.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"
#include "support/shell.hpp"

namespace socket_test {
namespace {

TEST(ServerCli, help_and_h_print_the_usage_and_exit_0) {
  for (const char* flag : {"--help", "-h"}) {
    const ShellRun ran = run_shell(server_path() + " " + flag);
    EXPECT_EQ(ran.exit_code, 0) << flag << ": " << ran.output;
    EXPECT_NE(ran.output.find("--shutdown-timeout-ms N"), std::string::npos) << flag << ": " << ran.output;
  }
}

TEST(ServerCli, version_prints_the_version_and_exits_0) {
  const ShellRun ran = run_shell(server_path() + " --version");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_TRUE(ran.output.starts_with("ringhttp server ")) << ran.output;
}

// --db is checked before anything starts: libpq must parse it, and a host
// must need no lookup (a name would be resolved, blocking, on a shard).
TEST(ServerCli, a_db_url_that_cannot_work_is_refused_with_its_reason) {
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--db postgresql://u@localhost/db", "host 'localhost' is a name"},
      {"--db 'host=db.example,127.0.0.1 dbname=x'", "host 'db.example' is a name"},
      {"--db 'host=127.0.0.1 bogus=1'", "bogus"},
      {"--db ''", "empty connection string"},
      {"--db-pool 0", "bad value '0' for --db-pool"},
      {"--db-queue 0", "bad value '0' for --db-queue"},
      {"--db-timeout-ms 0", "bad value '0' for --db-timeout-ms"},
  };
  for (const auto& c : cases) {
    const ShellRun ran = run_shell(server_path() + " " + c.args);
    EXPECT_EQ(ran.exit_code, 2) << c.args << ": " << ran.output;
    EXPECT_NE(ran.output.find(c.says), std::string::npos) << c.args << ": " << ran.output;
  }
  // Addresses and socket directories need no lookup.
  for (const char* ok : {"postgresql://u@127.0.0.1:1/db", "postgresql://u@[::1]:1/db", "host=/tmp dbname=x",
                         "host=db.example hostaddr=127.0.0.1"}) {
    ServerProcess server({"--shards", "1", "--db", ok});
    EXPECT_NE(server.startup_line().find(" listening on "), std::string::npos) << ok;
  }
}

// --backend picks the system calls; what only io_uring has is refused with
// epoll, and the start-up line names the backend either way.
TEST(ServerCli, the_backend_is_named_and_io_uring_flags_need_io_uring) {
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--backend kqueue", "bad value 'kqueue' for --backend"},
      {"--backend epoll --uring 6.1", "--uring tunes the io_uring backend"},
      {"--backend epoll --send zc", "--send zc is io_uring's"},
      {"--backend epoll --send writev", "--send writev is io_uring's"},
  };
  for (const auto& c : cases) {
    const ShellRun ran = run_shell(server_path() + " " + c.args);
    EXPECT_EQ(ran.exit_code, 2) << c.args << ": " << ran.output;
    EXPECT_NE(ran.output.find(c.says), std::string::npos) << c.args << ": " << ran.output;
  }
  ServerProcess on_epoll({"--shards", "1", "--backend", "epoll"});
  EXPECT_NE(on_epoll.startup_line().find(" backend=epoll uring=unused send=sendmsg"), std::string::npos)
      << on_epoll.startup_line();
  ServerProcess on_uring({"--shards", "1", "--backend", "uring"});
  EXPECT_NE(on_uring.startup_line().find(" backend=uring uring="), std::string::npos) << on_uring.startup_line();
}

TEST(ServerCli, a_value_after_an_equals_sign_is_taken) {
  ServerProcess server({"--shards=1", "--idle-timeout-ms=12345"});
  EXPECT_NE(server.startup_line().find(" shards=1 "), std::string::npos) << server.startup_line();
}

TEST(ServerCli, cors_max_age_is_what_a_preflight_answers) {
  ServerProcess server({"--shards", "1", "--cors-origin", "https://app.example", "--cors-max-age", "37"});
  Connection connection(server.port());
  const Response r = round_trip(connection, request("OPTIONS", "/mw/ping",
                                                    "Origin: https://app.example\r\n"
                                                    "Access-Control-Request-Method: GET\r\n"));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.header("Access-Control-Max-Age"), "37");
}

// One GET /mw/ping from the loopback address `source` on a connection of its
// own; returns the status.
int status_from(const std::string& source, std::uint16_t port) {
  Connection connection(port, {.timeout = std::chrono::seconds(10), .source_address = source});
  connection.send_all("GET /mw/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  return connection.read_response().status;
}

// A budget of 2 per hour, so no token comes back during the test. The
// victim (127.0.0.1) spends its budget; then 127.0.0.2 ... 127.0.0.N, one
// request each. With a table of 8 entries (--rate-limit-addresses 1 rounds
// up to one set of 8 ways), 8 newcomers fill the victim's set and the
// least recently used entry, the victim's, is forgotten: its next request
// passes with a full bucket. With the default table (4096) it stays refused.
int victim_after_newcomers(const std::string& addresses_max, double& evictions) {
  ServerProcess server({"--shards", "1", "--rate-limit", "2", "--rate-window-ms", "3600000", "--rate-limit-addresses",
                        addresses_max});
  EXPECT_EQ(status_from("127.0.0.1", server.port()), 200);
  EXPECT_EQ(status_from("127.0.0.1", server.port()), 200);
  EXPECT_EQ(status_from("127.0.0.1", server.port()), 429);
  for (int i = 2; i <= 9; ++i) EXPECT_EQ(status_from("127.0.0." + std::to_string(i), server.port()), 200);
  const int status = status_from("127.0.0.1", server.port());
  evictions = scrape_metrics(server.port()).value("ringhttp_rate_limit_evictions_total");
  return status;
}

TEST(ServerCli, rate_limit_addresses_bounds_the_clients_tracked_and_evictions_are_counted) {
  double evictions = -1;
  EXPECT_EQ(victim_after_newcomers("1", evictions), 200) << "the victim was forgotten: a full bucket again";
  EXPECT_GE(evictions, 1.0);
  EXPECT_EQ(victim_after_newcomers("4096", evictions), 429) << "a table with room remembers the victim";
  EXPECT_EQ(evictions, 0.0);
}

}  // namespace
}  // namespace socket_test
