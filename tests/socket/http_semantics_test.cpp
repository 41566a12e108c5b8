// HTTP/1.1 connection semantics: keep-alive, close, pipelining, split
// requests, request bodies and Expect: 100-continue.
#include <gtest/gtest.h>

#include <string>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

// Keep-alive, close and pipelining in every --send mode.
class HttpSemantics : public testing::TestWithParam<std::string> {
 protected:
  ServerProcess server{{"--shards", "1", "--send", GetParam()}};
  Connection connection{server.port()};
};

// Request i of a pipelined run alternates /plaintext and /json so that a
// reordered or repeated response is visible.
std::string alternating_path(int i) { return i % 2 == 0 ? "/plaintext" : "/json"; }
std::string_view alternating_body(int i) { return i % 2 == 0 ? plaintext_body : json_body; }

TEST_P(HttpSemantics, keep_alive_serves_1000_sequential_requests_on_one_connection) {
  for (int i = 0; i < 1000; ++i) {
    const Response response = round_trip(connection, get(alternating_path(i)));
    ASSERT_EQ(response.status, 200) << "request " << i;
    ASSERT_EQ(response.body, alternating_body(i)) << "request " << i;
    ASSERT_FALSE(response.has_token("Connection", "close")) << "request " << i;
  }
}

TEST_P(HttpSemantics, http10_without_keep_alive_is_closed_after_the_response) {
  connection.send_all("GET /plaintext HTTP/1.0\r\n\r\n");
  EXPECT_TRUE(is_plaintext_ok(connection.read_response()));
  EXPECT_TRUE(connection.expect_closed());
}

TEST_P(HttpSemantics, http10_with_keep_alive_stays_open) {
  const std::string request_bytes = "GET /plaintext HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, request_bytes)));
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, request_bytes)));
}

TEST_P(HttpSemantics, connection_close_is_honoured_and_announced) {
  const Response response = round_trip(connection, get("/plaintext", "Connection: close\r\n"));
  EXPECT_TRUE(is_plaintext_ok(response));
  EXPECT_TRUE(response.has_token("Connection", "close")) << response.header("Connection").value_or("(none)");
  EXPECT_TRUE(connection.expect_closed());
}

// The common way a keep-alive connection ends: the client closes it while it
// is idle. The server must notice the FIN and free the connection rather
// than hold it until the idle timeout (60 s by default).
TEST_P(HttpSemantics, client_closing_idle_keep_alive_connections_frees_them) {
  for (const std::string path : {"/plaintext", "/json", "/stream?bytes=100000", "/metrics"}) {
    Connection idle(server.port());
    ASSERT_EQ(round_trip(idle, get(path)).status, 200) << path;
  }  // each closed by the client (FIN) after its response
  connection.close();
  double active = -1;
  EXPECT_TRUE(eventually([&] {
    active = scrape_metrics(server.port()).value(metric::active);
    return active == 1;  // the scrape's own connection
  })) << "ringhttp_connections_active is still "
      << active << " after the clients closed";
}

TEST_P(HttpSemantics, pipelined_requests_are_answered_in_order) {
  constexpr int count = 100;
  std::string pipeline;
  for (int i = 0; i < count; ++i) pipeline += get(alternating_path(i));
  connection.send_all(pipeline);  // one send()
  for (int i = 0; i < count; ++i) {
    const Response response = connection.read_response();
    ASSERT_EQ(response.status, 200) << "response " << i;
    ASSERT_EQ(response.body, alternating_body(i)) << "response " << i;
  }
}

TEST_P(HttpSemantics, request_sent_one_byte_per_send_is_answered) {
  connection.send_byte_by_byte(get("/json", "User-Agent: one-byte-at-a-time\r\n"));
  const Response response = connection.read_response();
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, json_body);
  // And the connection is still in step for a normal request.
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

// A body that looks like a request must be consumed as a body: the server
// answers exactly the two real requests, then closes as the second asked.
void expect_body_consumed(Connection& connection, const std::string& request_with_body) {
  connection.send_all(request_with_body + get("/plaintext", "Connection: close\r\n"));
  EXPECT_EQ(connection.read_response().status, 405);  // POST /json
  EXPECT_TRUE(is_plaintext_ok(connection.read_response()));
  EXPECT_TRUE(connection.expect_closed()) << "a third response means the body was parsed as a request";
}

TEST_P(HttpSemantics, content_length_body_is_consumed_not_parsed) {
  const std::string body = "GET /json HTTP/1.1\r\n";  // 20 bytes
  expect_body_consumed(connection, request("POST", "/json", "Content-Length: 20\r\n", body));
}

TEST_P(HttpSemantics, chunked_body_is_consumed_not_parsed) {
  const std::string body =
      "14\r\nGET /json HTTP/1.1\r\n\r\n"  // 0x14 = 20 bytes
      "b\r\nHost: x\r\n\r\n\r\n"          // 11 bytes
      "0\r\n\r\n";
  expect_body_consumed(connection, request("POST", "/json", "Transfer-Encoding: chunked\r\n", body));
}

TEST_P(HttpSemantics, body_on_a_get_is_discarded_and_the_get_answered) {
  connection.send_all(request("GET", "/plaintext", "Content-Length: 5\r\n", "hello") + get("/json"));
  EXPECT_TRUE(is_plaintext_ok(connection.read_response()));
  EXPECT_EQ(connection.read_response().body, json_body);
}

// GET with a body, so that the final status is a 200 and the server has no
// reason to skip the interim response (RFC 9110 lets a server that will
// reject the request answer finally at once).
TEST_P(HttpSemantics, expect_100_continue_gets_an_interim_100_before_the_body) {
  connection.send_all(get("/plaintext", "Content-Length: 5\r\nExpect: 100-continue\r\n"));
  const Response interim = connection.read_response();
  EXPECT_EQ(interim.status, 100);
  EXPECT_EQ(interim.version, "HTTP/1.1");
  connection.send_all("hello");
  EXPECT_TRUE(is_plaintext_ok(connection.read_response()));
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

INSTANTIATE_TEST_SUITE_P(SendModes, HttpSemantics, testing::ValuesIn(send_modes), send_mode_test_name);

}  // namespace
}  // namespace socket_test
