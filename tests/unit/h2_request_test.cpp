// HTTP/2's form of the client's requests (client/load/h2_request): the
// pseudo-headers first, the user's headers as HTTP/2 wants them, the
// placeholder's number in each request, bodies with their length.

#include <gtest/gtest.h>

#include <algorithm>

#include <string>
#include <utility>
#include <vector>

#include "client/load/h2_request.hpp"
#include "client/options.hpp"

namespace ringhttp::client {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Options parsed(std::vector<std::string> args) {
  args.insert(args.begin(), "client");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Options o;
  EXPECT_EQ(parse_options(int(argv.size()), argv.data(), o), cli::Outcome::run);
  return o;
}

Fields fields_of(const H2Requests& r, std::size_t i) {
  std::vector<nghttp2_nv> scratch(r.fields_max());
  Fields out;
  for (const nghttp2_nv& nv : r.headers(i, scratch)) {
    out.emplace_back(std::string(reinterpret_cast<const char*>(nv.name), nv.namelen),
                     std::string(reinterpret_cast<const char*>(nv.value), nv.valuelen));
    // Sent from where they live: nghttp2 must not copy them per stream.
    EXPECT_EQ(nv.flags, NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE);
  }
  return out;
}

TEST(H2Requests, pseudo_headers_lead_and_host_is_the_authority) {
  const H2Requests r(parsed({"--http2-prior-knowledge", "http://127.0.0.1:8080/json?x=1"}));
  ASSERT_EQ(r.distinct(), 1u);
  EXPECT_EQ(fields_of(r, 0), (Fields{{":method", "GET"},
                                     {":scheme", "http"},
                                     {":authority", "127.0.0.1:8080"},
                                     {":path", "/json?x=1"}}));
  EXPECT_EQ(r.body(0), "");
}

TEST(H2Requests, user_headers_are_lower_cased_and_connection_fields_dropped) {
  const H2Requests r(parsed({"--http2", "-k", "-H", "Host: api.example", "-H", "X-Trace:  abc ", "-H",
                             "Connection: keep-alive", "-H", "Keep-Alive: 5", "-H", "Transfer-Encoding: chunked",
                             "-H", "Upgrade: h2c", "-H", "Proxy-Connection: x", "https://127.0.0.1:8443/"}));
  EXPECT_EQ(fields_of(r, 0), (Fields{{":method", "GET"},
                                     {":scheme", "https"},
                                     {":authority", "api.example"},
                                     {":path", "/"},
                                     {"x-trace", "abc"}}));
}

TEST(H2Requests, a_body_carries_its_length_unless_the_user_gave_one) {
  const H2Requests r(parsed({"--http2-prior-knowledge", "-m", "POST", "-b", "hello", "http://127.0.0.1:1/echo"}));
  EXPECT_EQ(fields_of(r, 0).back(), (std::pair<std::string, std::string>{"content-length", "5"}));
  EXPECT_EQ(fields_of(r, 0)[0].second, "POST");
  EXPECT_EQ(r.body(0), "hello");
  const H2Requests given(parsed({"--http2-prior-knowledge", "-m", "POST", "-b", "hello", "-H", "Content-Length: 5",
                                 "http://127.0.0.1:1/echo"}));
  const Fields f = fields_of(given, 0);
  EXPECT_EQ(std::count_if(f.begin(), f.end(), [](const auto& p) { return p.first == "content-length"; }), 1);
}

TEST(H2Requests, each_request_carries_its_own_number) {
  const H2Requests r(parsed({"--http2-prior-knowledge", "-m", "POST", "-H", "X-Id: {seq:7..9}", "-b",
                             "id={seq:7..9}", "http://127.0.0.1:1/users/{seq:7..9}"}));
  ASSERT_EQ(r.distinct(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string n = std::to_string(7 + i);
    const Fields f = fields_of(r, i);
    EXPECT_EQ(f[3], (std::pair<std::string, std::string>{":path", "/users/" + n}));
    EXPECT_EQ(f[4], (std::pair<std::string, std::string>{"x-id", n}));
    EXPECT_EQ(r.body(i), "id=" + n);
  }
}

TEST(H2Requests, http2_flags_are_checked_against_the_scheme_and_each_other) {
  const auto outcome = [](std::vector<std::string> args) {
    args.insert(args.begin(), "client");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    Options o;
    return parse_options(int(argv.size()), argv.data(), o);
  };
  EXPECT_EQ(outcome({"--http2", "http://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(outcome({"--http2-prior-knowledge", "https://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(outcome({"--http2", "--http2-prior-knowledge", "https://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(outcome({"--max-streams", "4", "http://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(outcome({"--http2-prior-knowledge", "-p", "2", "http://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(outcome({"--http2-prior-knowledge", "--requests-per-connection", "2", "http://127.0.0.1:1/"}),
            cli::Outcome::run);
  EXPECT_EQ(outcome({"--http2-prior-knowledge", "--max-streams", "4", "http://127.0.0.1:1/"}), cli::Outcome::run);
}

}  // namespace
}  // namespace ringhttp::client
