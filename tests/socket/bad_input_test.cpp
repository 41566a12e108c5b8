// Bad input: each case gets its documented status, then the server closes the
// connection, counts the error by kind, and keeps serving others.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "support/checks.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/trickle.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

constexpr int header_bytes_max = 1024;
constexpr int body_bytes_max = 1000;

class BadInput : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "1", "--header-bytes-max", std::to_string(header_bytes_max), "--body-bytes-max",
                        std::to_string(body_bytes_max)}};

  // Sends `bytes`, expects `status` and then the close, then a fresh
  // connection served, and the parse error counted under `kind`.
  void expect_rejected(const std::string& bytes, int status, const std::string& kind) {
    const double errors_before = scrape_metrics(server.port()).value(metric::parse_errors(kind));
    {
      Connection connection(server.port());
      connection.send_all(bytes);
      const Response response = connection.read_response();
      EXPECT_EQ(response.status, status);
      EXPECT_TRUE(response.header("Date") && response.header("Server"));
      EXPECT_TRUE(connection.expect_closed());
    }
    EXPECT_TRUE(fresh_connection_is_served(server.port()));
    EXPECT_EQ(scrape_metrics(server.port()).value(metric::parse_errors(kind)), errors_before + 1)
        << metric::parse_errors(kind);
  }
};

TEST_F(BadInput, garbage_request_line_is_400) { expect_rejected("(hello) there\r\n\r\n", 400, "malformed"); }

TEST_F(BadInput, bad_http_version_is_400) {
  expect_rejected("GET /plaintext HTTP/1.x\r\nHost: x\r\n\r\n", 400, "malformed");
}

TEST_F(BadInput, content_length_with_transfer_encoding_is_400) {
  expect_rejected(request("POST", "/json", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"), 400,
                  "ambiguous_length");
}

TEST_F(BadInput, two_different_content_lengths_are_400) {
  expect_rejected(request("POST", "/json", "Content-Length: 5\r\nContent-Length: 6\r\n", "hello!"), 400,
                  "ambiguous_length");
}

TEST_F(BadInput, header_section_over_the_limit_is_431) {
  const std::string filler = "X-Filler: " + std::string(4096, 'a') + "\r\n";
  expect_rejected(get("/plaintext", filler), 431, "header_too_large");
}

TEST_F(BadInput, many_small_headers_over_the_limit_are_431) {
  std::string headers;
  for (int i = 0; i < 100; ++i) headers += "X-H" + std::to_string(i) + ": value\r\n";  // ~1.6 KiB in all
  expect_rejected(get("/plaintext", headers), 431, "header_too_large");
}

// The body is longer than the limit but shorter than its Content-Length, so
// a server that checks the declared length and one that counts arriving
// bytes must both answer; neither may wait for the rest.
TEST_F(BadInput, content_length_body_over_the_limit_is_413) {
  expect_rejected(request("POST", "/json", "Content-Length: 5000\r\n", std::string(1500, 'b')), 413, "body_too_large");
}

TEST_F(BadInput, chunked_body_over_the_limit_is_413) {
  const std::string chunk = "400\r\n" + std::string(1024, 'c') + "\r\n";  // 1 KiB chunks, no last chunk
  expect_rejected(request("POST", "/json", "Transfer-Encoding: chunked\r\n", chunk + chunk), 413, "body_too_large");
}

TEST_F(BadInput, transfer_coding_other_than_chunked_is_501) {
  expect_rejected(request("POST", "/json", "Transfer-Encoding: gzip, chunked\r\n", "3\r\nabc\r\n0\r\n\r\n"), 501,
                  "unsupported_transfer_coding");
}

// The request line has its own bound (--request-line-bytes-max, below the
// header limit): 414, closed, counted, and the next connection served.
TEST(BadTarget, a_request_line_over_its_limit_is_414) {
  ServerProcess server({"--shards", "1", "--request-line-bytes-max", "2048"});
  Connection connection(server.port());
  connection.send_all(get("/" + std::string(3000, 't')));
  const Response response = connection.read_response();
  EXPECT_EQ(response.status, 414);
  EXPECT_TRUE(connection.expect_closed());
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::parse_errors("target_too_long")), 1);
}

TEST(Timeouts, header_section_not_complete_in_time_is_408_then_closed) {
  ServerProcess server({"--shards", "1", "--header-timeout-ms", "300"});
  Connection connection(server.port());
  connection.send_all("GET /plaintext HTTP/1.1\r\nHost: x\r\n");
  const Response response = connection.read_response();  // within the 5 s receive timeout
  EXPECT_EQ(response.status, 408);
  EXPECT_TRUE(connection.expect_closed());
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  EXPECT_GE(scrape_metrics(server.port()).value(metric::timeouts("header")), 1);
}

// Slow-loris: a client that keeps the header section going one line every
// 50 ms must still be cut off at the header deadline, not at some idle
// timer that every byte restarts. The client trickles until the server
// answers (a correct one does after about 300 ms; the bound, 30 s, is a hang
// guard) and only then, if it never did, completes the request: a server
// that let every line extend the deadline answers that request with a 200.
TEST(Timeouts, trickled_header_bytes_do_not_extend_the_header_deadline) {
  ServerProcess server({"--shards", "1", "--header-timeout-ms", "300"});
  Connection connection(server.port());
  connection.send_all("GET /plaintext HTTP/1.1\r\n");
  const bool answered = trickle_until_answered(connection, "X-Trickle: 1\r\n", 50ms);
  EXPECT_TRUE(answered) << "the server let the header section trickle on for the whole bound";
  if (!answered) connection.send_all("\r\n");
  const Response response = connection.read_response();
  EXPECT_EQ(response.status, 408);
}

TEST(Timeouts, idle_keep_alive_connection_is_closed_silently) {
  ServerProcess server({"--shards", "1", "--idle-timeout-ms", "300"});
  Connection connection(server.port());
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  // Closed within the 5 s receive timeout, with no response bytes (an idle
  // connection has no request to answer).
  EXPECT_TRUE(connection.expect_closed());
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  EXPECT_GE(scrape_metrics(server.port()).value(metric::timeouts("idle")), 1);
}

}  // namespace
}  // namespace socket_test
