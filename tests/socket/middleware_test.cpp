// The middleware on /mw/ping over a real socket: security headers, CORS with
// an allow-list (simple requests and preflights), and the per-client rate
// limiter's 429 and its recovery; preflights pass the limiter too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/json_doc.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

constexpr const char* allowed_origins = "https://app.example,http://localhost:3000";

class Middleware : public testing::Test {
 protected:
  // A budget no test here reaches, but the limiter runs on every request;
  // refilled over a day (one token per 0.86 s), so a slow run (sanitizers)
  // cannot refill a token between two requests and move the count.
  ServerProcess server{
      {"--shards", "1", "--cors-origin", allowed_origins, "--rate-limit", "100000", "--rate-window-ms", "86400000"}};
  Connection connection{server.port()};
};

std::vector<std::string> cors_headers(const Response& r) {
  std::vector<std::string> names;
  for (const auto& [name, value] : r.headers) {
    if (equals_ignoring_case(name.substr(0, 12), "Access-Contr")) names.push_back(name);
  }
  return names;
}

TEST_F(Middleware, security_headers_are_on_the_response_and_nothing_leaks_the_stack) {
  const Response r = round_trip(connection, get("/mw/ping"));
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"ok":true})");
  EXPECT_TRUE(r.header("Content-Security-Policy").value_or("").find("default-src") != std::string::npos);
  EXPECT_TRUE(r.header("Strict-Transport-Security").value_or("").starts_with("max-age="));
  EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff");
  EXPECT_TRUE(r.header("X-Frame-Options"));
  EXPECT_TRUE(r.header("Referrer-Policy"));
  EXPECT_FALSE(r.header("X-Powered-By"));
  const std::string server_header = r.header("Server").value_or("");
  EXPECT_EQ(server_header.find_first_of("0123456789"), std::string::npos) << "a version in Server: " << server_header;
  // Each header once, whatever the number of middleware.
  EXPECT_EQ(r.header_count("X-Content-Type-Options"), 1u);
  EXPECT_EQ(r.header_count("Date"), 1u);
}

TEST_F(Middleware, an_allowed_origin_is_echoed_with_vary) {
  for (const char* origin : {"https://app.example", "http://localhost:3000"}) {
    SCOPED_TRACE(origin);
    const Response r = round_trip(connection, get("/mw/ping", std::string("Origin: ") + origin + "\r\n"));
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.header("Access-Control-Allow-Origin"), origin);
    EXPECT_TRUE(r.has_token("Vary", "Origin"));
  }
}

TEST_F(Middleware, a_disallowed_or_absent_origin_gets_no_cors_headers) {
  for (const std::string origin_header :
       {"Origin: https://evil.example\r\n", "Origin: https://app.example.evil\r\n", "Origin: https://APP.example\r\n",
        "Origin: null\r\n", "", "Origin: https://app.example\r\nOrigin: https://app.example\r\n"}) {
    SCOPED_TRACE(origin_header);
    const Response r = round_trip(connection, get("/mw/ping", origin_header));
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(cors_headers(r).empty()) << cors_headers(r).front();
    EXPECT_TRUE(r.has_token("Vary", "Origin")) << "the answer depends on Origin either way";
    EXPECT_TRUE(r.header("Content-Security-Policy"));
  }
}

TEST_F(Middleware, an_allowed_preflight_is_answered_204_with_methods_headers_and_max_age) {
  const Response r = round_trip(connection, request("OPTIONS", "/mw/ping",
                                                    "Origin: https://app.example\r\n"
                                                    "Access-Control-Request-Method: GET\r\n"
                                                    "Access-Control-Request-Headers: authorization\r\n"));
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.body, "");
  EXPECT_FALSE(r.header("Content-Length")) << "a 204 has no Content-Length";
  EXPECT_EQ(r.header("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_TRUE(r.has_token("Access-Control-Allow-Methods", "GET"));
  EXPECT_TRUE(r.has_token("Access-Control-Allow-Headers", "Authorization"));
  EXPECT_EQ(r.header("Access-Control-Max-Age"), "600");
  EXPECT_TRUE(r.has_token("Vary", "Origin"));
  // The connection goes on: the 204 was framed right.
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).status, 200);
}

TEST_F(Middleware, a_disallowed_preflight_gets_no_cors_headers) {
  const Response r = round_trip(connection, request("OPTIONS", "/mw/ping",
                                                    "Origin: https://evil.example\r\n"
                                                    "Access-Control-Request-Method: GET\r\n"));
  EXPECT_EQ(r.status, 204);
  EXPECT_TRUE(cors_headers(r).empty()) << cors_headers(r).front();
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).status, 200);
}

TEST_F(Middleware, options_that_is_not_a_preflight_lists_the_allowed_methods) {
  const Response r = round_trip(connection, request("OPTIONS", "/mw/ping"));
  EXPECT_EQ(r.status, 204);
  EXPECT_TRUE(r.has_token("Allow", "GET"));
  EXPECT_TRUE(r.has_token("Allow", "OPTIONS"));
}

TEST_F(Middleware, rate_limit_headers_count_down) {
  const Response first = round_trip(connection, get("/mw/ping"));
  const Response second = round_trip(connection, get("/mw/ping"));
  EXPECT_EQ(first.header("RateLimit-Limit"), "100000");
  EXPECT_EQ(first.header("RateLimit-Remaining"), "99999");
  EXPECT_EQ(second.header("RateLimit-Remaining"), "99998");
  EXPECT_TRUE(first.header("RateLimit-Reset"));
  EXPECT_TRUE(first.header("RateLimit-Policy"));
  EXPECT_FALSE(first.header("Retry-After"));
}

// What a browser sends before a cross-origin GET that carries a token.
std::string preflight_request() {
  return request("OPTIONS", "/mw/ping",
                 "Origin: https://app.example\r\n"
                 "Access-Control-Request-Method: GET\r\n"
                 "Access-Control-Request-Headers: authorization\r\n");
}

TEST_F(Middleware, a_preflight_takes_a_token) {
  const Response preflight = round_trip(connection, preflight_request());
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.header("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(preflight.header("RateLimit-Remaining"), "99999");
  EXPECT_EQ(preflight.header_count("RateLimit-Remaining"), 1u);
  EXPECT_FALSE(preflight.header("Allow")) << "a preflight's answer is CORS's, not OPTIONS's";
  // The next request finds the preflight's token gone.
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).header("RateLimit-Remaining"), "99998");
}

TEST(RateLimit, a_preflight_is_refused_429_once_the_bucket_is_empty) {
  // Two tokens a day: none comes back during the test, however slow the run.
  ServerProcess server(
      {"--shards", "1", "--cors-origin", allowed_origins, "--rate-limit", "2", "--rate-window-ms", "86400000"});
  Connection connection(server.port());
  EXPECT_EQ(round_trip(connection, preflight_request()).status, 204);
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).status, 200);
  const Response refused = round_trip(connection, preflight_request());
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.header("RateLimit-Remaining"), "0");
  EXPECT_TRUE(refused.header("Retry-After"));
  EXPECT_TRUE(JsonDoc(refused.body).valid()) << refused.body;
  // The refusal was framed right and took nothing; the GET is refused too.
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).status, 429);
  EXPECT_EQ(scrape_metrics(server.port()).value("ringhttp_rate_limited_total"), 2);
}

// The budget, its count-down and the refusal, on a bucket that refills over
// a day (three tokens: one back every 8 h), so no token comes back during
// the test however slowly its requests go out. Retry-After is then exact up
// to the seconds the test itself took: the first token comes back 28,800 s
// after the bucket was full, less the time since then.
TEST(RateLimit, answers_429_after_its_budget) {
  constexpr std::int64_t seconds_per_token = 86400 / 3;
  ServerProcess server({"--shards", "1", "--rate-limit", "3", "--rate-window-ms", "86400000"});
  Connection connection(server.port());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    const Response r = round_trip(connection, get("/mw/ping"));
    ASSERT_EQ(r.status, 200) << "request " << i;
    EXPECT_EQ(r.header("RateLimit-Remaining"), std::to_string(2 - i));
    EXPECT_FALSE(r.header("Retry-After"));
  }
  const Response refused = round_trip(connection, get("/mw/ping"));
  const auto elapsed_s = std::chrono::ceil<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(refused.header("RateLimit-Remaining"), "0");
  const std::int64_t retry_after = std::stoll(refused.header("Retry-After").value_or("0"));
  EXPECT_LE(retry_after, seconds_per_token);
  EXPECT_GE(retry_after, seconds_per_token - elapsed_s) << "after " << elapsed_s << " s";
  EXPECT_TRUE(JsonDoc(refused.body).valid()) << refused.body;
  EXPECT_TRUE(refused.header("Content-Security-Policy")) << "middleware before the limiter still applies";
  // The limiter is per route: the bare rung is not limited.
  EXPECT_EQ(round_trip(connection, get("/ping")).status, 200);
  // Refused requests take no token and none has come back: refused again.
  EXPECT_EQ(round_trip(connection, get("/mw/ping")).status, 429);
  EXPECT_EQ(scrape_metrics(server.port()).value("ringhttp_rate_limited_total"), 2);
}

// The refill: one token, back after 3 s. The test does not depend on how
// fast its requests go out: it sends until one is refused (the second is,
// unless a whole 3 s passed between two requests on one connection), then
// until one is served again. Every refusal it saw is in the counter.
TEST(RateLimit, serves_again_after_the_refill) {
  constexpr int window_s = 3;
  constexpr int attempts_max = 100;
  ServerProcess server({"--shards", "1", "--rate-limit", "1", "--rate-window-ms", std::to_string(window_s * 1000)});
  Connection connection(server.port());
  int refusals = 0;
  for (int i = 0; i < attempts_max && refusals == 0; ++i) {
    const Response r = round_trip(connection, get("/mw/ping"));
    if (r.status == 429) {
      ++refusals;
      const int retry_after = std::stoi(r.header("Retry-After").value_or("0"));
      EXPECT_GE(retry_after, 1);
      EXPECT_LE(retry_after, window_s) << "one token comes back within the window";
    } else {
      ASSERT_EQ(r.status, 200);
    }
  }
  ASSERT_EQ(refusals, 1) << attempts_max << " requests, none refused by a limit of one request per " << window_s
                         << " s";
  EXPECT_TRUE(eventually(
      [&] {
        const int status = round_trip(connection, get("/mw/ping")).status;
        if (status == 429) ++refusals;
        return status == 200;
      },
      eventually_deadline, std::chrono::milliseconds(250)))
      << "still refused after the refill time";
  EXPECT_EQ(scrape_metrics(server.port()).value("ringhttp_rate_limited_total"), refusals);
}

}  // namespace
}  // namespace socket_test
