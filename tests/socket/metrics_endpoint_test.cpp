// --metrics-address: the counters leave the main port (where /metrics is an
// unknown path) for an address of their own, served by one thread that
// answers one request per connection, refuses anything but GET or HEAD
// /metrics, cannot be held by a silent client for longer than its timeout,
// and stops with the server.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/ipv6.hpp"
#include "support/metrics.hpp"
#include "support/proc_state.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Short, so that a silent client's hold is seen ending within a test; far
// above a loopback round trip, so that a scrape never times out, even when
// the test is descheduled between its connect and its send on a loaded
// machine under sanitizers (300 ms was closer to that than it looked).
constexpr int metrics_timeout_ms = 1000;
// The endpoint's timeout when the flag is not given (server/options.cpp).
constexpr int metrics_default_timeout_ms = 5000;

class MetricsEndpoint : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "2", "--metrics-address", "127.0.0.1:0", "--metrics-timeout-ms",
                        std::to_string(metrics_timeout_ms)}};

  std::uint16_t metrics_port() const {
    if (!server.metrics_port()) throw std::runtime_error("no metrics= in \"" + server.startup_line() + "\"");
    return *server.metrics_port();
  }
};

// Sends `bytes` on a fresh connection to the metrics port and reads the
// one answer; the endpoint then closes.
Response ask(std::uint16_t port, std::string_view bytes, bool head = false) {
  Connection connection(port);
  const Response response = round_trip(connection, bytes, head);
  EXPECT_TRUE(connection.expect_closed()) << "one answer per connection";
  return response;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

TEST_F(MetricsEndpoint, the_start_up_line_ends_with_the_metrics_address) {
  const std::string& line = server.startup_line();
  const std::string listening = "listening on 127.0.0.1:" + std::to_string(server.port()) + " shards=2 cpus=";
  EXPECT_NE(line.find(listening), std::string::npos) << line;
  EXPECT_NE(line.find(" send="), std::string::npos) << line;
  EXPECT_LT(line.find(" send="), line.find(" metrics=")) << "metrics= comes after every other field: " << line;
  EXPECT_TRUE(ends_with(line, " metrics=127.0.0.1:" + std::to_string(metrics_port()))) << line;
  EXPECT_NE(metrics_port(), server.port());
}

TEST_F(MetricsEndpoint, the_main_port_answers_metrics_as_an_unknown_path) {
  Connection connection(server.port());
  EXPECT_EQ(round_trip(connection, get("/metrics")).status, 404);
  EXPECT_EQ(round_trip(connection, head("/metrics"), true).status, 404);
  EXPECT_EQ(round_trip(connection, get("/metrics?x=1")).status, 404);
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext")))) << "the other routes are unchanged";
}

TEST_F(MetricsEndpoint, serves_the_counters_of_the_main_port) {
  const Metrics before = scrape_metrics(metrics_port());
  {
    Connection connection(server.port());
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
    EXPECT_EQ(round_trip(connection, get("/nowhere")).status, 404);
  }
  const Response r = ask(metrics_port(), get("/metrics"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("Content-Type").value_or(""), "text/plain; version=0.0.4");
  EXPECT_TRUE(r.has_token("Connection", "close"));
  EXPECT_EQ(r.content_length(), r.body.size());
  const Metrics after = Metrics::parse(r.body);
  // Scrapes no longer reach the shards, so the main port's four requests
  // are all that changed.
  EXPECT_EQ(after.value(metric::requests) - before.value(metric::requests), 4);
  EXPECT_EQ(after.value(metric::responses(200)) - before.value(metric::responses(200)), 3);
  EXPECT_EQ(after.value(metric::responses(404)) - before.value(metric::responses(404)), 1);
  EXPECT_TRUE(after.has("ringhttp_token_refusals_total{kind=\"missing_exp\"}"));

  const Response h = ask(metrics_port(), head("/metrics"), true);
  EXPECT_EQ(h.status, 200);
  EXPECT_GT(h.content_length().value_or(0), 0u);
  EXPECT_TRUE(h.body.empty());
}

TEST_F(MetricsEndpoint, a_bad_request_is_refused_and_the_next_one_is_served) {
  const struct {
    const char* what;
    std::string bytes;
    int status;
  } cases[] = {
      {"not a request line", "BLAH\r\n\r\n", 400},
      {"an unknown version", "GET /metrics HTTP/2.0\r\n\r\n", 400},
      {"two spaces", "GET  /metrics HTTP/1.1\r\n\r\n", 400},
      {"absolute form", "GET http://x/metrics HTTP/1.1\r\n\r\n", 400},
      {"another path", get("/other"), 404},
      {"a longer path", get("/metrics/x"), 404},
      {"another method", request("POST", "/metrics", "Content-Length: 5\r\n", "hello"), 405},
      {"a header section past 8 KiB", "GET /metrics HTTP/1.1\r\nX: " + std::string(9000, 'a'), 431},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    const Response r = ask(metrics_port(), c.bytes);
    EXPECT_EQ(r.status, c.status);
    if (c.status == 405) {
      EXPECT_EQ(r.header("Allow").value_or(""), "GET, HEAD");
    }
    EXPECT_NO_THROW(scrape_metrics(metrics_port())) << "the endpoint serves the next client";
  }
}

TEST_F(MetricsEndpoint, a_silent_client_holds_the_endpoint_only_until_the_timeout) {
  // Both are queued before the scrape, and the endpoint serves one at a
  // time in order: the scrape waits out each one's timeout, no more.
  Connection silent(metrics_port());
  Connection half(metrics_port());
  half.send_all("GET /metr");
  const auto start = Clock::now();
  EXPECT_NO_THROW(scrape_metrics(metrics_port()));
  const auto waited = Clock::now() - start;
  // At least both timeouts, less the time between the first one's accept
  // and `start`. At most: less than the default timeout would take for
  // both, so a server that ignored the flag fails; the margin to what a
  // correct one takes (eight seconds) is a bound for a loaded machine, not
  // a speed the test asks for.
  EXPECT_GE(waited, std::chrono::milliseconds(2 * metrics_timeout_ms * 3 / 4)) << "it did wait for both";
  EXPECT_LT(waited, std::chrono::milliseconds(2 * metrics_default_timeout_ms))
      << "it waited as long as two default timeouts, not two of the " << metrics_timeout_ms << " ms configured";
  // Each was told why before the close.
  EXPECT_EQ(silent.read_response().status, 408);
  EXPECT_EQ(half.read_response().status, 408);
}

TEST(MetricsEndpointStop, sigterm_exits_0_while_a_metrics_client_is_being_served) {
  // A timeout far past the deadline below: the stop cannot be the timeout.
  ServerProcess server({"--shards", "1", "--metrics-address", "127.0.0.1:0", "--metrics-timeout-ms", "60000"});
  ASSERT_TRUE(server.metrics_port());
  Connection half(*server.metrics_port());
  half.send_all("GET /metrics HTTP/1.1\r\n");
  // The stop comes while the endpoint is reading this client: it has
  // accepted it and taken in its bytes (both seen in /proc/net/tcp).
  EXPECT_TRUE(eventually([&] {
    return accept_queue_length(*server.metrics_port()) == std::size_t{0} && peer_unread_bytes(half) == std::size_t{0};
  }));
  server.signal(SIGTERM);
  const ExitStatus status = server.wait_exit(eventually_deadline);
  EXPECT_TRUE(status.exited_zero()) << status.describe();
}

TEST(MetricsEndpointOptions, a_bad_metrics_address_is_refused_with_exit_2) {
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":9100", "localhost:9100", "::1:9100", "[::1]", "[::1]9100",
                          "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+1", "[127.0.0.1]:9100", "1.2.3:80"}) {
    SCOPED_TRACE(bad);
    try {
      ServerProcess server({"--shards", "1", "--metrics-address", bad});
      ADD_FAILURE() << "the server started: " << server.startup_line();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("exited with status 2"), std::string::npos) << e.what();
    }
  }
}

TEST(MetricsEndpointOptions, a_busy_metrics_address_stops_the_server_with_exit_1) {
  const int taken = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(taken, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  ASSERT_EQ(::getsockname(taken, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string busy = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  try {
    ServerProcess server({"--shards", "1", "--metrics-address", busy});
    ADD_FAILURE() << "the server started: " << server.startup_line();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("exited with status 1"), std::string::npos) << e.what();
  }
  ::close(taken);
}


TEST(MetricsEndpointOptions, listens_on_an_ipv6_address) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 any{};
  any.sin6_family = AF_INET6;
  any.sin6_addr = in6addr_loopback;
  const bool has_ipv6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&any), sizeof any) == 0;
  if (probe >= 0) ::close(probe);
  if (!has_ipv6) GTEST_SKIP() << "no IPv6 loopback here";
  ServerProcess server({"--shards", "1", "--metrics-address", "[::1]:0"});
  ASSERT_TRUE(server.metrics_port()) << server.startup_line();
  EXPECT_TRUE(ends_with(server.startup_line(), " metrics=[::1]:" + std::to_string(*server.metrics_port())));
  const std::string answer = exchange_over_ipv6(*server.metrics_port(), get("/metrics"));
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK") << answer.substr(0, 200);
  EXPECT_NE(answer.find("ringhttp_requests_total "), std::string::npos);
}

TEST(MetricsWithoutAddress, the_counters_stay_on_the_main_port) {
  ServerProcess server({"--shards", "1"});
  EXPECT_FALSE(server.metrics_port());
  EXPECT_EQ(server.startup_line().find("metrics="), std::string::npos) << server.startup_line();
  EXPECT_NO_THROW(scrape_metrics(server.port()));
}

}  // namespace
}  // namespace socket_test
