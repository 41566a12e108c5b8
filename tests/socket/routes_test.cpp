// The documented routes, their bodies and headers, HEAD, 404 and 405.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

// Every route in every --send mode.
class Routes : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--send", GetParam()}};
  Connection connection{server.port()};
};

void expect_common_headers(const Response& response) {
  EXPECT_TRUE(response.header("Date")) << "every response has Date";
  EXPECT_TRUE(response.header("Server")) << "every response has Server";
}

TEST_P(Routes, plaintext_says_hello_world_as_text_plain) {
  const Response response = round_trip(connection, get("/plaintext"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.version, "HTTP/1.1");
  EXPECT_EQ(response.body, plaintext_body);
  EXPECT_EQ(response.content_length(), plaintext_body.size());
  EXPECT_TRUE(response.header("Content-Type").value_or("").starts_with("text/plain"))
      << response.header("Content-Type").value_or("(none)");
  expect_common_headers(response);
}

TEST_P(Routes, json_returns_the_exact_message_as_application_json) {
  const Response response = round_trip(connection, get("/json"));
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, json_body);
  EXPECT_EQ(response.content_length(), json_body.size());
  EXPECT_TRUE(response.header("Content-Type").value_or("").starts_with("application/json"))
      << response.header("Content-Type").value_or("(none)");
  expect_common_headers(response);
}

TEST_P(Routes, stream_sends_exactly_n_bytes_of_the_pattern) {
  for (const unsigned long long bytes : {0ull, 1ull, 1000ull, 1ull << 20}) {
    SCOPED_TRACE("bytes=" + std::to_string(bytes));
    connection.send_all(get(stream_path(bytes)));
    const Response response = connection.read_head();
    ASSERT_EQ(response.status, 200);
    ASSERT_EQ(response.content_length(), bytes);
    EXPECT_FALSE(response.has_token("Transfer-Encoding", "chunked"));
    EXPECT_TRUE(response.header("Content-Type").value_or("").starts_with("application/octet-stream"));
    expect_common_headers(response);
    ASSERT_TRUE(read_stream_body(connection, bytes));
  }
  // Nothing beyond the declared lengths: the next response starts cleanly.
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

TEST_P(Routes, stream_accepts_the_documented_maximum_of_2_pow_50) {
  const Response response = round_trip(connection, head(stream_path(1ull << 50)), /*head=*/true);
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_length(), 1ull << 50);
}

TEST_P(Routes, stream_rejects_a_bad_bytes_value_with_400) {
  const std::vector<std::string> bad_paths = {
      "/stream?bytes=abc",
      "/stream",
      "/stream?bytes=",
      "/stream?bytes=-1",
      "/stream?bytes=12abc",
      "/stream?bytes=1125899906842625",  // 2^50 + 1
      "/stream?bytes=99999999999999999999999999",
  };
  for (const auto& path : bad_paths) {
    SCOPED_TRACE(path);
    // A fresh connection each: whether a 400 closes the connection is not
    // what this test is about.
    Connection fresh(server.port());
    EXPECT_EQ(round_trip(fresh, get(path)).status, 400);
  }
}

TEST_P(Routes, head_sends_the_get_headers_without_a_body) {
  for (const std::string path : {"/plaintext", "/json", "/stream?bytes=1000", "/metrics"}) {
    SCOPED_TRACE(path);
    const Response head_response = round_trip(connection, head(path), /*head=*/true);
    EXPECT_EQ(head_response.status, 200);
    ASSERT_TRUE(head_response.content_length()) << "HEAD carries the Content-Length a GET would";
    expect_common_headers(head_response);
    // If the HEAD response carried a body, these bytes would be read as
    // the next status line and the exchange would fail.
    const Response get_response = round_trip(connection, get(path));
    EXPECT_EQ(get_response.status, 200);
    if (path != "/metrics") {  // the metrics body changes between the two requests
      EXPECT_EQ(*head_response.content_length(), get_response.body.size());
    }
  }
}

TEST_P(Routes, unknown_path_is_404) {
  EXPECT_EQ(round_trip(connection, get("/nope")).status, 404);
  EXPECT_EQ(round_trip(connection, get("/plaintext/extra")).status, 404);
  // 404 is not a bad-input status: the connection stays usable.
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

TEST_P(Routes, other_method_on_a_known_path_is_405_with_allow_get_head) {
  for (const std::string path : {"/plaintext", "/json", "/stream?bytes=10", "/metrics"}) {
    SCOPED_TRACE(path);
    const Response response = round_trip(connection, request("POST", path, "Content-Length: 0\r\n"));
    EXPECT_EQ(response.status, 405);
    EXPECT_TRUE(response.has_token("Allow", "GET")) << response.header("Allow").value_or("(no Allow)");
    EXPECT_TRUE(response.has_token("Allow", "HEAD")) << response.header("Allow").value_or("(no Allow)");
  }
  EXPECT_EQ(round_trip(connection, request("DELETE", "/json")).status, 405);
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

TEST_P(Routes, metrics_exposes_the_documented_counters) {
  round_trip(connection, get("/plaintext"));
  const Metrics metrics = scrape_metrics(server.port());
  for (const std::string& name : {metric::requests, metric::accepted, metric::active, metric::closed, metric::sends,
                                  metric::sends_short, metric::cancellations, metric::bytes_received,
                                  metric::bytes_sent, metric::zc_notifications, metric::zc_copied}) {
    EXPECT_TRUE(metrics.has(name)) << name << " missing";
  }
  EXPECT_GE(metrics.value(metric::requests), 1);
  EXPECT_GE(metrics.value(metric::responses(200)), 1);
}

TEST_P(Routes, keep_alive_connection_stays_usable_after_metrics) {
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE("round " + std::to_string(i));
    const Response metrics = round_trip(connection, get("/metrics"));
    ASSERT_EQ(metrics.status, 200);
    EXPECT_TRUE(metrics.header("Content-Type").value_or("").starts_with("text/plain"));
    ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  }
}

INSTANTIATE_TEST_SUITE_P(SendModes, Routes, testing::ValuesIn(send_modes), send_mode_test_name);

}  // namespace
}  // namespace socket_test
