// The client's command line: durations, URLs, and the refusals that exit 2.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "client/load/request.hpp"
#include "client/load/target.hpp"
#include "client/options.hpp"

namespace ringhttp::client {
namespace {

ParseOutcome parse(std::vector<std::string> args, Options& out) {
  args.insert(args.begin(), "client");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_options(int(argv.size()), argv.data(), out);
}

TEST(ClientOptions, durations_take_units) {
  std::uint64_t ns = 0;
  ASSERT_TRUE(parse_duration("500ms", ns));
  EXPECT_EQ(ns, 500'000'000u);
  ASSERT_TRUE(parse_duration("10s", ns));
  EXPECT_EQ(ns, 10'000'000'000u);
  ASSERT_TRUE(parse_duration("2m", ns));
  EXPECT_EQ(ns, 120'000'000'000u);
  ASSERT_TRUE(parse_duration("3", ns));
  EXPECT_EQ(ns, 3'000'000'000u);
  EXPECT_FALSE(parse_duration("", ns));
  EXPECT_FALSE(parse_duration("ms", ns));
  EXPECT_FALSE(parse_duration("10x", ns));
  EXPECT_FALSE(parse_duration("-1s", ns));
}

TEST(ClientOptions, urls_take_names_literals_and_both_schemes) {
  Target t;
  EXPECT_EQ(parse_url("http://127.0.0.1:8080/json?x=1", t), "");
  ASSERT_EQ(t.addresses.size(), 1u);
  EXPECT_EQ(t.addresses[0].to_string(), "127.0.0.1:8080");
  EXPECT_EQ(t.path, "/json?x=1");
  EXPECT_EQ(t.host_header, "127.0.0.1:8080");
  EXPECT_TRUE(t.host_is_literal);
  EXPECT_EQ(t.scheme, Scheme::http);
  // A name is kept for the resolver, lower case; nothing is resolved yet.
  EXPECT_EQ(parse_url("http://MyServer.example:8080", t), "");
  EXPECT_EQ(t.host, "myserver.example");
  EXPECT_FALSE(t.host_is_literal);
  EXPECT_TRUE(t.addresses.empty());
  EXPECT_EQ(t.host_header, "myserver.example:8080");
  EXPECT_EQ(t.path, "/");
  // The scheme's default port is left out of Host, given or not.
  EXPECT_EQ(parse_url("https://api.example.com/users/1", t), "");
  EXPECT_EQ(t.scheme, Scheme::https);
  EXPECT_EQ(t.port, 443);
  EXPECT_EQ(t.host_header, "api.example.com");
  EXPECT_EQ(parse_url("http://api.example.com:80/", t), "");
  EXPECT_EQ(t.host_header, "api.example.com");
  EXPECT_EQ(parse_url("https://api.example.com:80/", t), "");
  EXPECT_EQ(t.host_header, "api.example.com:80");
  EXPECT_EQ(parse_url("http://[::1]:9000/a", t), "");
  EXPECT_EQ(t.addresses[0].to_string(), "[::1]:9000");
  EXPECT_EQ(t.host, "::1");
  EXPECT_EQ(t.host_header, "[::1]:9000");
  EXPECT_EQ(parse_url("http://10.1.2.3/?q", t), "") << "any address: only the tests keep to loopback";
  EXPECT_EQ(t.path, "/?q");
  for (const char* bad : {"ftp://127.0.0.1/", "http://", "http:///x", "http://127.0.0.1:0/", "http://127.0.0.1:65536/",
                          "http://127.0.0.1:x/", "http://127.0.0.1:/", "http://[::1/", "http://[127.0.0.1]/",
                          "http://::1/", "http://a b/", "http://user@host/", "http://host/#frag", "127.0.0.1:80"}) {
    EXPECT_NE(parse_url(bad, t), "") << bad;
  }
}

TEST(ClientOptions, resolve_overrides_take_curls_form) {
  ResolveOverride r;
  ASSERT_EQ(parse_resolve("API.test:443:127.0.0.2", r), "");
  EXPECT_EQ(r.host, "api.test");
  EXPECT_EQ(r.port, 443);
  ASSERT_EQ(r.addresses.size(), 1u);
  EXPECT_EQ(r.addresses[0].to_string(), "127.0.0.2:443");
  ASSERT_EQ(parse_resolve("a.test:80:127.0.0.1,[::1],::1", r), "");
  ASSERT_EQ(r.addresses.size(), 3u);
  EXPECT_EQ(r.addresses[1].to_string(), "[::1]:80");
  for (const char* bad : {"a.test", "a.test:80", "a.test:80:", "a.test:0:127.0.0.1", "a.test:80:nowhere",
                          ":80:127.0.0.1", "a.test:80:127.0.0.1,"}) {
    EXPECT_NE(parse_resolve(bad, r), "") << bad;
  }
}

TEST(ClientOptions, targets_resolve_once_by_override_literal_or_resolver) {
  Target t;
  ResolveOverride r;
  ASSERT_EQ(parse_resolve("api.test:8080:127.0.0.9", r), "");
  ASSERT_EQ(parse_url("http://api.test:8080/", t), "");
  ASSERT_EQ(resolve_target(t, {r}, Family::any, ""), "");
  ASSERT_EQ(t.addresses.size(), 1u);
  EXPECT_EQ(t.addresses[0].to_string(), "127.0.0.9:8080");
  EXPECT_EQ(t.host_header, "api.test:8080") << "Host names the URL's host, never the address";
  // Another port is not overridden: the resolver is asked (localhost is in
  // every hosts file).
  ASSERT_EQ(parse_url("http://localhost:8081/", t), "");
  ASSERT_EQ(resolve_target(t, {r}, Family::ipv4, ""), "");
  ASSERT_FALSE(t.addresses.empty());
  EXPECT_EQ(t.addresses[0].to_string(), "127.0.0.1:8081");
  // -4/-6 keep to one family, and say so when nothing is left.
  ASSERT_EQ(parse_url("http://127.0.0.1:80/", t), "");
  EXPECT_NE(resolve_target(t, {}, Family::ipv6, ""), "");
  ASSERT_EQ(parse_url("http://api.test:8080/", t), "");
  const std::string none = resolve_target(t, {r}, Family::ipv6, "");
  EXPECT_NE(none.find("no IPv6 address"), std::string::npos) << none;
  // A Unix socket replaces every address.
  ASSERT_EQ(parse_url("http://app.internal/x", t), "");
  ASSERT_EQ(resolve_target(t, {}, Family::any, "/run/app.sock"), "");
  ASSERT_EQ(t.addresses.size(), 1u);
  EXPECT_EQ(t.addresses[0].to_string(), "unix:/run/app.sock");
  EXPECT_NE(resolve_target(t, {}, Family::any, std::string(200, 'x')), "") << "longer than sockaddr_un holds";
}

TEST(ClientOptions, with_no_url_the_servers_default_address_is_loaded) {
  Options o;
  ASSERT_EQ(parse({"-c", "4"}, o), ParseOutcome::run);
  EXPECT_TRUE(o.url_defaulted);
  EXPECT_EQ(o.url, "http://127.0.0.1:8080/plaintext");
  ASSERT_EQ(o.target.addresses.size(), 1u);
  EXPECT_EQ(o.target.addresses[0].to_string(), "127.0.0.1:8080");
}

TEST(ClientOptions, connection_flags_are_checked) {
  Options o;
  ASSERT_EQ(parse({"-4", "--requests-per-connection", "3", "--connect-timeout", "500ms", "--resolve",
                   "a.test:80:127.0.0.1", "http://a.test/"},
                  o),
            ParseOutcome::run);
  EXPECT_EQ(o.family, Family::ipv4);
  EXPECT_EQ(o.requests_per_connection, 3u);
  EXPECT_EQ(o.connect_timeout_ns, 500'000'000u);
  EXPECT_EQ(o.target.addresses[0].to_string(), "127.0.0.1:80");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"-4", "-6", "http://127.0.0.1/"},
           {"--requests-per-connection", "0", "http://127.0.0.1/"},
           {"--connect-timeout", "0", "http://127.0.0.1/"},
           {"-k", "http://127.0.0.1/"},
           {"--cacert", "ca.pem", "http://127.0.0.1/"},
           {"--unix-socket", "/tmp/s", "-4", "http://127.0.0.1/"},
           {"--resolve", "a.test:80", "http://a.test/"},
           {"http://127.0.0.1/", "http://127.0.0.1/"}}) {
    Options refused;
    EXPECT_EQ(parse(bad, refused), ParseOutcome::exit_usage) << bad[0];
  }
}

TEST(ClientOptions, uring_takes_the_servers_grammar_sqpoll_included) {
  Options o;
  ASSERT_EQ(parse({"--uring", "5.19,sqpoll", "http://127.0.0.1:8080/"}, o), ParseOutcome::run);
  EXPECT_TRUE(o.wanted_features.sqpoll);
  EXPECT_TRUE(o.wanted_features.multishot_accept);
  EXPECT_TRUE(o.wanted_features.bufring) << "buffer rings arrived in 5.19";
  EXPECT_FALSE(o.wanted_features.multishot_recv) << "multishot receive arrived in 6.0";
  Options plain;
  ASSERT_EQ(parse({"http://127.0.0.1:8080/"}, plain), ParseOutcome::run);
  EXPECT_FALSE(plain.wanted_features.sqpoll) << "sqpoll is opt-in";
  Options bad;
  EXPECT_EQ(parse({"--uring", "sqpoll,5.19", "http://127.0.0.1:8080/"}, bad), ParseOutcome::exit_usage);
}

TEST(ClientOptions, backend_is_uring_by_default_or_epoll_and_uring_switches_need_uring) {
  Options o;
  ASSERT_EQ(parse({"http://127.0.0.1:8080/"}, o), ParseOutcome::run);
  EXPECT_EQ(o.backend, io::BackendKind::uring);
  Options e;
  ASSERT_EQ(parse({"--backend", "epoll", "http://127.0.0.1:8080/"}, e), ParseOutcome::run);
  EXPECT_EQ(e.backend, io::BackendKind::epoll);
  Options bad;
  EXPECT_EQ(parse({"--backend", "kqueue", "http://127.0.0.1:8080/"}, bad), ParseOutcome::exit_usage);
  Options both;
  EXPECT_EQ(parse({"--backend", "epoll", "--uring", "6.1", "http://127.0.0.1:8080/"}, both),
            ParseOutcome::exit_usage);
  Options uring;
  EXPECT_EQ(parse({"--backend", "uring", "--uring", "6.1", "http://127.0.0.1:8080/"}, uring), ParseOutcome::run);
}

TEST(ClientOptions, wrk_like_flags_parse) {
  Options o;
  ASSERT_EQ(parse({"-c", "64", "-t2", "-d", "500ms", "-w", "0", "-H", "X-A: 1", "--header=X-B: 2", "-p", "4",
                   "--expect-status", "200,204", "--cpus", "0-1", "http://127.0.0.1:8080/"},
                  o),
            ParseOutcome::run);
  EXPECT_EQ(o.connections, 64u);
  EXPECT_EQ(o.threads, 2u);
  EXPECT_EQ(o.duration_ns, 500'000'000u);
  EXPECT_EQ(o.warmup_ns, 0u);
  EXPECT_EQ(o.headers.size(), 2u);
  EXPECT_EQ(o.pipeline, 4u);
  EXPECT_EQ(o.expect_status, (std::vector<std::uint16_t>{200, 204}));
  EXPECT_EQ(o.cpus, (std::vector<int>{0, 1}));
}

TEST(ClientOptions, impossible_or_unknown_input_is_a_usage_error) {
  const std::vector<std::vector<std::string>> bad = {
      {"http://127.0.0.1/", "http://127.0.0.1/"},
      {"--frobnicate", "http://127.0.0.1/"},
      {"-c", "0", "http://127.0.0.1/"},
      {"-c", "two", "http://127.0.0.1/"},
      {"-t", "4", "-c", "2", "http://127.0.0.1/"},
      {"-t", "2", "-c", "8", "-R", "1", "http://127.0.0.1/"},
      {"-d", "soon", "http://127.0.0.1/"},
      {"-H", "no colon", "http://127.0.0.1/"},
      {"-n", "10", "-w", "1s", "http://127.0.0.1/"},
      {"--uring", "no-such-thing", "http://127.0.0.1/"},
      {"http://192.168.1.1:0/"},
  };
  for (const auto& args : bad) {
    Options o;
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(parse(args, o), ParseOutcome::exit_usage) << joined;
  }
}

TEST(ClientRequest, serialized_once_with_host_headers_and_body_length) {
  Options o;
  ASSERT_EQ(parse({"-m", "POST", "-b", "hello", "-H", "X-Test: yes", "-p", "3", "http://127.0.0.1:8080/echo"}, o),
            ParseOutcome::run);
  const RequestBytes request(o);
  EXPECT_EQ(request.distinct(), 1u);
  EXPECT_EQ(request.batch(0, 1),
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Test: yes\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(request.batch(0, 3).size(), 3 * request.batch(0, 1).size());
  EXPECT_FALSE(request.head_request());
}

TEST(ClientRequest, a_placeholder_makes_each_request_its_own_with_its_own_expected_body) {
  Options o;
  ASSERT_EQ(parse({"-m", "POST", "-b", R"({"n":{seq:7..9}})", "-H", "X-N: {seq:7..9}", "-p", "2", "--expect-body",
                   R"({"id":{seq:7..9}})", "http://127.0.0.1:8080/users/{seq:7..9}"},
                  o),
            ParseOutcome::run);
  ASSERT_TRUE(o.placeholder.has_value());
  EXPECT_EQ(o.placeholder->count(), 3u);
  const RequestBytes request(o);
  ASSERT_EQ(request.distinct(), 3u);
  const auto one = [](int n) {
    const std::string body = R"({"n":)" + std::to_string(n) + "}";
    return "POST /users/" + std::to_string(n) + " HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-N: " + std::to_string(n) +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  EXPECT_EQ(request.batch(0, 1), one(7));
  EXPECT_EQ(request.batch(1, 2), one(8) + one(9));
  // A batch from the last request wraps to the first, still one range.
  EXPECT_EQ(request.batch(2, 2), one(9) + one(7));
  EXPECT_EQ(request.expected_body(0), R"({"id":7})");
  EXPECT_EQ(request.expected_body(2), R"({"id":9})");
}

TEST(ClientRequest, rand_is_every_number_once_in_a_fixed_shuffled_order) {
  Options a;
  Options b;
  ASSERT_EQ(parse({"http://127.0.0.1:8080/users/{rand:1..1000}"}, a), ParseOutcome::run);
  ASSERT_EQ(parse({"http://127.0.0.1:8080/users/{rand:1..1000}"}, b), ParseOutcome::run);
  const std::vector<std::uint64_t> order = a.placeholder->order();
  EXPECT_EQ(order, b.placeholder->order());  // the same every run
  std::vector<std::uint64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint64_t> all(1000);
  std::iota(all.begin(), all.end(), 1);
  EXPECT_EQ(sorted, all);  // each number once
  EXPECT_NE(order, all);   // and not in order
}

TEST(ClientRequest, bad_placeholders_are_refused_with_a_reason) {
  const std::vector<std::vector<std::string>> bad = {
      {"http://127.0.0.1:8080/users/{seq:5..1}"},                      // empty range
      {"http://127.0.0.1:8080/users/{seq:1..}"},                       // no end
      {"http://127.0.0.1:8080/users/{seq:1..5"},                       // no closing brace
      {"http://127.0.0.1:8080/users/{seq:0..1000000}"},                // past placeholder_values_max
      {"-b", "{seq:1..3}", "http://127.0.0.1:8080/users/{seq:1..4}"},  // two different ones
      {"--expect-body", "{seq:1..3}", "http://127.0.0.1:8080/users/1"},  // only in the expected body
      {"-b", std::string(300, 'x') + "{seq:1..1000000}", "-p", "1", "http://127.0.0.1:8080/{seq:1..1000000}"},
  };
  for (const auto& args : bad) {
    Options o;
    EXPECT_EQ(parse(args, o), ParseOutcome::exit_usage) << args.back();
  }
  // A JSON body's braces are not placeholders.
  Options o;
  EXPECT_EQ(parse({"-b", R"({"seq":{"a":1}})", "http://127.0.0.1:8080/echo"}, o), ParseOutcome::run);
  EXPECT_FALSE(o.placeholder.has_value());
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

ParseOutcome parse_shard(std::vector<std::string> args, Options& out) {
  args.insert(args.begin(), "client");
  args.push_back("http://127.0.0.1:8080/");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_options(int(argv.size()), argv.data(), out);
}

// --shard I/N: N processes together run exactly the connections (with
// their global indices) and the -n one process would.
TEST(ClientShards, shares_cover_every_connection_once) {
  for (const std::uint32_t n : {1u, 2u, 3u, 7u}) {
    std::uint32_t next = 0;
    std::uint64_t requests = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      Options o;
      ASSERT_EQ(parse_shard({"-c", "10", "-n", "1001", "--shard", std::to_string(i) + "/" + std::to_string(n)}, o),
                ParseOutcome::run);
      const ShardShare s = shard_share(o);
      EXPECT_EQ(s.first_connection, next) << i << "/" << n;
      EXPECT_GE(s.connections, 10 / n);
      EXPECT_LE(s.connections, 10 / n + 1);
      next += s.connections;
      requests += s.requests;
    }
    EXPECT_EQ(next, 10u) << n;
    EXPECT_EQ(requests, 1001u) << n;
  }
}

TEST(ClientShards, bad_shards_and_start_times_are_usage_errors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--shard", "2/2"}, {"--shard", "0/0"}, {"--shard", "1"}, {"--shard", "-1/2"}, {"--shard", "a/b"},
           {"-c", "2", "--shard", "0/3"}, {"-c", "4", "-t", "3", "--shard", "0/2"},
           {"-c", "4", "-n", "3", "--shard", "0/2"}, {"--start-at", "soon"}, {"--start-at", "+2d"},
           {"--start-at", "1764850000.1234567890"}, {"--start-at", "99999999999"},
           {"--start-at", "3999999999"}, {"--start-at", "18446744073709551615"}}) {
    Options o;
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    EXPECT_EQ(parse_shard(args, o), ParseOutcome::exit_usage) << joined;
  }
  Options o;
  ASSERT_EQ(parse_shard({"--start-at", "+5s"}, o), ParseOutcome::run);
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const std::int64_t ahead = o.start_at_unix_ns - (std::int64_t(now.tv_sec) * 1'000'000'000 + now.tv_nsec);
  EXPECT_GT(ahead, 4'000'000'000);
  EXPECT_LE(ahead, 5'000'000'000);
  ASSERT_EQ(parse_shard({"--start-at", "1764850000.25"}, o), ParseOutcome::run);
  EXPECT_EQ(o.start_at_unix_ns, 1764850000'250'000'000);
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

TEST(ClientThresholds, every_form_parses_and_judges) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 1000; ++v) h.record(v * 1000);  // 1 µs to 1 ms, evenly
  const StatusCounts statuses{0, 990, 0, 4, 6};
  const Measured m{&h, 0, 1000, 5000.0, &statuses};
  const struct {
    const char* text;
    bool met;
  } cases[] = {
      {"status_5xx==6", true},  {"status_5xx==0", false}, {"status_4xx<=4", true}, {"status_2xx>=991", false},
      {"status_1xx==0", true},  {"status_3xx>0", false},
      {"p99<=5ms", true},    {"p99<=900us", false}, {"p50<501us", true},   {"p50<400us", false},
      {"p99.9<2ms", true},   {"max<1s", true},      {"max<999us", false},  {"mean<=600us", true},
      {"errors==0", true},   {"errors>0", false},   {"rps>=4000", true},   {"rps>=6000", false},
      {"requests>=1000", true}, {"requests==999", false}, {"p100<=1.001ms", true}, {"p0>=1us", true},
  };
  for (const auto& c : cases) {
    std::string error;
    const std::optional<Threshold> t = parse_threshold(c.text, error);
    ASSERT_TRUE(t) << c.text << ": " << error;
    EXPECT_EQ(judge(*t, m).met, c.met) << c.text << " measured " << judge(*t, m).measured;
  }
  bool all = true;
  std::vector<Threshold> ts;
  std::string error;
  ts.push_back(*parse_threshold("p99<=5ms", error));
  ts.push_back(*parse_threshold("rps>=6000", error));
  const std::string text = thresholds_text(ts, m, all);
  EXPECT_FALSE(all);
  EXPECT_NE(text.find("threshold p99<=5ms: met"), std::string::npos) << text;
  EXPECT_NE(text.find("threshold rps>=6000: FAILED (measured 5000)"), std::string::npos) << text;
}

TEST(ClientThresholds, malformed_ones_are_refused_with_a_reason) {
  for (const char* bad : {"", "p99", "<=5ms", "p99<=5", "p99=<5ms", "p101<1s", "pxx<1s", "latency<1ms",
                          "errors==none", "rps>=-1", "p99<=5 ms", "errors==0ms", "status_6xx==0", "status_0xx==0",
                          "status_55x==0", "status_xx==0", "status_5xx==0ms", "status_5XX==0", "rps>=inf", "p99<=nanms",
                          "requests>=nan"}) {
    std::string error;
    EXPECT_FALSE(parse_threshold(bad, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

TEST(ClientOptions, batch_wait_is_auto_off_or_a_window_up_to_a_millisecond) {
  Options o;
  ASSERT_EQ(parse({"http://127.0.0.1:8080/"}, o), ParseOutcome::run);
  EXPECT_TRUE(o.batch_wait_auto);
  Options off;
  ASSERT_EQ(parse({"--batch-wait", "off", "http://127.0.0.1:8080/"}, off), ParseOutcome::run);
  EXPECT_FALSE(off.batch_wait_auto);
  EXPECT_EQ(off.batch_wait_us, 0u);
  Options fixed;
  ASSERT_EQ(parse({"--batch-wait", "20us", "http://127.0.0.1:8080/"}, fixed), ParseOutcome::run);
  EXPECT_FALSE(fixed.batch_wait_auto);
  EXPECT_EQ(fixed.batch_wait_us, 20u);
  Options most;
  ASSERT_EQ(parse({"--batch-wait", "1ms", "http://127.0.0.1:8080/"}, most), ParseOutcome::run);
  EXPECT_EQ(most.batch_wait_us, 1000u);
  // --uring min-wait, the server's fixed window, is 50 µs here unless
  // --batch-wait says otherwise.
  Options min_wait;
  ASSERT_EQ(parse({"--uring", "all,min-wait", "http://127.0.0.1:8080/"}, min_wait), ParseOutcome::run);
  EXPECT_FALSE(min_wait.batch_wait_auto);
  EXPECT_EQ(min_wait.batch_wait_us, 50u);
  Options both;
  ASSERT_EQ(parse({"--uring", "all,min-wait", "--batch-wait", "auto", "http://127.0.0.1:8080/"}, both),
            ParseOutcome::run);
  EXPECT_TRUE(both.batch_wait_auto);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--batch-wait", "2ms", "http://127.0.0.1:8080/"},
           {"--batch-wait", "soon", "http://127.0.0.1:8080/"},
           {"--batch-wait", "", "http://127.0.0.1:8080/"},
           {"--backend", "epoll", "--batch-wait", "20us", "http://127.0.0.1:8080/"}}) {
    Options refused;
    EXPECT_EQ(parse(bad, refused), ParseOutcome::exit_usage) << bad[1];
  }
  // Off is off on either backend.
  Options epoll_off;
  EXPECT_EQ(parse({"--backend", "epoll", "--batch-wait", "off", "http://127.0.0.1:8080/"}, epoll_off),
            ParseOutcome::run);
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

TEST(ClientOptions, cipher_lists_are_for_https_and_must_name_what_openssl_has) {
  Options o;
  ASSERT_EQ(parse({"--tls13-ciphers", "TLS_AES_128_GCM_SHA256", "--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256",
                   "https://127.0.0.1:8443/"},
                  o),
            ParseOutcome::run);
  EXPECT_EQ(o.tls13_ciphers, "TLS_AES_128_GCM_SHA256");
  EXPECT_EQ(o.ciphers, "ECDHE-ECDSA-AES128-GCM-SHA256");
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"--tls13-ciphers", "TLS_AES_128_GCM_SHA256", "http://127.0.0.1:8080/"},
           {"--ciphers", "ECDHE-ECDSA-AES128-GCM-SHA256", "http://127.0.0.1:8080/"},
           {"--tls13-ciphers", "AES128-GCM", "https://127.0.0.1:8443/"},
           {"--ciphers", "NOT-A-CIPHER", "https://127.0.0.1:8443/"}}) {
    Options refused;
    EXPECT_EQ(parse(bad, refused), ParseOutcome::exit_usage) << bad[0] << " " << bad[1];
  }
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

TEST(ClientOptions, head_takes_no_expected_body_but_an_empty_one) {
  Options refused;
  EXPECT_EQ(parse({"-m", "HEAD", "--expect-body", "Hello", "http://127.0.0.1:8080/"}, refused),
            ParseOutcome::exit_usage);
  Options empty;
  ASSERT_EQ(parse({"-m", "HEAD", "--expect-body", "", "http://127.0.0.1:8080/"}, empty), ParseOutcome::run);
  EXPECT_TRUE(empty.check_body);
  Options get;
  EXPECT_EQ(parse({"--expect-body", "Hello", "http://127.0.0.1:8080/"}, get), ParseOutcome::run);
}

}  // namespace
}  // namespace ringhttp::client
