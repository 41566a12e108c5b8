// The client over HTTP/2 (--http2, --http2-prior-knowledge, --max-streams):
// against Debian's nginx, over TLS with ALPN h2 and as h2c, every response
// checked and the counts exact against nginx's own log, through graceful
// GOAWAYs; against support/h2_server's misbehaving servers, each failure
// counted in its class, none holding the run past --timeout, and the exit
// status right. Loopback only.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "support/certificates.hpp"
#include "support/client_process.hpp"
#include "support/eventually.hpp"
#include "support/h2_server.hpp"
#include "support/json_report.hpp"
#include "support/nginx.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

// tools/install-deps.sh installs nginx and openssl: without them the test
// fails, naming the package.
#define NEEDS_NGINX() ASSERT_TRUE(nginx_installed())

constexpr const char* hello = "Hello, World!";

// Before any load, the client's start-up check opens one h2c connection
// that sends no request: it sees the port answers, then that it answers
// the HTTP/2 preface. H2Server counts it among its connections.
constexpr std::uint32_t h2c_check_connections = 1;

TEST(ClientHttp2, nginx_over_tls_every_response_checked_and_counted_by_nginx) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true, .access_log = true, .http2 = true});
  const ClientRun run =
      run_client({"--http2", "-n", "2000", "-c", "4", "--max-streams", "8", "--json", "--cacert", nginx.ca_file(),
                  "--expect-body", hello, nginx.url_for("localhost", "/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 2000u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.text("/options/protocol"), "h2");
  EXPECT_EQ(report.number("/options/max_streams"), 8u);
  EXPECT_EQ(report.number("/http2/goaways"), 0u);
  EXPECT_EQ(report.number("/statuses/2xx"), 2000u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 2000; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 4u);
  for (const Nginx::LogLine& line : nginx.access_log()) {
    EXPECT_EQ(line.request, "GET / HTTP/2.0");
    EXPECT_EQ(line.host, "localhost") << ":authority carries the URL's host";
  }
}

// HEAD over HTTP/2: nginx answers with headers alone (its content-length
// says what a GET would carry), and an empty --expect-body checks that no
// DATA came. The client knew each stream was HEAD: nghttp2 would
// otherwise count the missing body against content-length.
TEST(ClientHttp2, head_responses_have_headers_alone) {
  NEEDS_NGINX();
  Nginx nginx({.access_log = true, .http2 = true});
  const ClientRun run = run_client({"--http2-prior-knowledge", "-m", "HEAD", "-n", "200", "-c", "2",
                                    "--max-streams", "8", "--json", "--expect-body", "", nginx.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 200u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/statuses/2xx"), 200u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 200; })) << nginx.logged_requests();
  for (const Nginx::LogLine& line : nginx.access_log()) EXPECT_EQ(line.request, "HEAD / HTTP/2.0");
}

// --requests-per-connection over HTTP/2: each connection opens at most N
// streams, then says GOAWAY(NO_ERROR) once the last has ended, and a new
// one takes its place. With -n, exactly ceil(n / N) connections carry
// requests, as over HTTP/1.1: nginx's log has 10 requests on each of 20.
TEST(ClientHttp2, requests_per_connection_churns_connections_with_a_goaway) {
  NEEDS_NGINX();
  Nginx nginx({.access_log = true, .http2 = true});
  const ClientRun run = run_client({"--http2-prior-knowledge", "--requests-per-connection", "10", "-n", "200", "-c",
                                    "3", "--max-streams", "4", "--json", "--expect-body", hello, nginx.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 200u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/http2/goaways"), 0u) << "the client leaves first";
  EXPECT_GE(report.number("/reconnects"), 17u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 200; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 20u);
  for (const Nginx::LogLine& line : nginx.access_log()) EXPECT_LE(std::stoul(line.connection_requests), 10u);
}

// The client's GOAWAY is NO_ERROR, one per connection it ends. The run
// ends when the last response is in (-n): the last connection, and one
// whose GOAWAY is still on its way out then, close without one.
TEST(ClientHttp2, requests_per_connection_says_goaway_no_error) {
  H2Server server(H2Behaviour::normal);
  const ClientRun run = run_client({"--http2-prior-knowledge", "--requests-per-connection", "5", "-n", "50", "-c",
                                    "2", "--max-streams", "2", "--json", "--expect-body", hello, server.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).number("/requests"), 50u);
  EXPECT_EQ(server.counts().responses.load(), 50u);
  EXPECT_EQ(server.counts().connections.load(), 10u + h2c_check_connections);
  ASSERT_TRUE(eventually([&] { return server.counts().client_goaways.load() >= 8u; }))
      << server.counts().client_goaways.load();
  EXPECT_LE(server.counts().client_goaways.load(), 9u);
  EXPECT_EQ(server.counts().client_goaway_error.load(), 0u);
}

// nginx closes an HTTP/2 connection with GOAWAY(NO_ERROR) after
// keepalive_requests; the streams above its last one were not processed,
// and are sent again on a new connection. So nginx sees exactly -n
// requests, and the client no error.
TEST(ClientHttp2, h2c_through_graceful_goaways_nginx_sees_exactly_n_requests) {
  NEEDS_NGINX();
  Nginx nginx({.access_log = true, .http2 = true, .keepalive_requests = 50});
  const ClientRun run = run_client({"--http2-prior-knowledge", "-n", "1500", "-c", "3", "--max-streams", "16",
                                    "--json", "--expect-body", hello, nginx.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 1500u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.text("/options/protocol"), "h2c");
  EXPECT_GE(report.number("/http2/goaways"), 1500u / 50 - 3) << "one a connection of 50";
  EXPECT_GT(report.number("/reconnects"), 0u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 1500; })) << nginx.logged_requests();
  for (const Nginx::LogLine& line : nginx.access_log()) EXPECT_LE(std::stoul(line.connection_requests), 50u);
}

TEST(ClientHttp2, the_open_model_times_each_stream_from_its_intended_time) {
  NEEDS_NGINX();
  Nginx nginx({.access_log = true, .http2 = true});
  const ClientRun run = run_client({"--http2-prior-knowledge", "-R", "400", "-d", "1s", "-w", "0", "-c", "2",
                                    "--max-streams", "4", "--json", nginx.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  // 400/s for a second: never more than the schedule allows (give or
  // take the window's edges), and most of it on a loaded machine.
  EXPECT_GE(report.number("/requests"), 200u);
  EXPECT_LE(report.number("/requests"), 440u);
  EXPECT_GT(report.number("/latency_uncorrected_us/count"), 0u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
}

TEST(ClientHttp2, a_server_without_h2_is_refused_before_any_load) {
  NEEDS_NGINX();
  {
    // TLS without http2: nginx answers ALPN h2 with nothing or http/1.1.
    Nginx nginx({.tls = true, .access_log = true});
    const ClientRun run = run_client({"--http2", "-n", "10", "--cacert", nginx.ca_file(), nginx.url_for("localhost")});
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    EXPECT_NE(run.err.find("does not speak HTTP/2 over TLS"), std::string::npos) << run.err;
    EXPECT_EQ(nginx.logged_requests(), 0u);
  }
  {
    // ringhttp's server speaks HTTP/1.1 alone: it refuses an h2-only ALPN
    // offer with the no_application_protocol alert, which the message names.
    TempCertificates certs;
    ServerProcess server({"--shards", "1", "--tls-cert", certs.files().cert_file, "--tls-key",
                          certs.files().key_file});
    const ClientRun run = run_client({"--http2", "-n", "10", "--cacert", certs.files().ca_file,
                                      "https://localhost:" + std::to_string(server.port()) + "/plaintext",
                                      "--resolve", "localhost:" + std::to_string(server.port()) + ":127.0.0.1"});
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    EXPECT_NE(run.err.find("no application protocol (--http2 offers h2 alone"), std::string::npos) << run.err;
  }
  {
    // h2c's preface to an HTTP/1.1 listener: a 400, named in the message.
    Nginx nginx({.access_log = true});
    const ClientRun run = run_client({"--http2-prior-knowledge", "-n", "10", nginx.url("/")});
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    EXPECT_NE(run.err.find("does not speak h2c"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("HTTP/1.1 400"), std::string::npos) << run.err;
  }
}

TEST(ClientHttp2, each_request_is_its_own_with_placeholders_and_bodies) {
  H2Server server(H2Behaviour::normal);
  const ClientRun run = run_client({"--http2-prior-knowledge", "-n", "300", "-c", "2", "--max-streams", "8", "-m",
                                    "POST", "-b", "n={seq:1..100}", "--json", server.url("/{seq:1..100}")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).number("/requests"), 300u);
  EXPECT_EQ(server.counts().requests.load(), 300u);
  // "n=1" to "n=100": 9 bodies of 3 bytes, 90 of 4, 1 of 5, three times over.
  EXPECT_EQ(server.counts().body_bytes.load(), 3u * (9 * 3 + 90 * 4 + 5));
}

TEST(ClientHttp2, resets_are_counted_by_code_and_fail_the_run) {
  H2Server server(H2Behaviour::rst_mid_response, {.reset_every = 4});
  const ClientRun run = run_client(
      {"--http2-prior-knowledge", "-n", "400", "-c", "2", "--max-streams", "4", "--json", server.url("/")});
  EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/reset"), 100u);
  EXPECT_EQ(report.number("/http2/resets/INTERNAL_ERROR"), 100u);
  EXPECT_EQ(report.number("/requests"), 300u);
  EXPECT_EQ(report.number("/errors_total"), 100u);
  EXPECT_EQ(server.counts().resets.load(), 100u);
}

TEST(ClientHttp2, refused_streams_are_sent_again_and_not_errors) {
  H2Server server(H2Behaviour::rst_refused);
  const ClientRun run = run_client(
      {"--http2-prior-knowledge", "-n", "200", "-c", "4", "--max-streams", "4", "--json", server.url("/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 200u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // One per connection but the start-up checks', which send no request.
  EXPECT_EQ(report.number("/http2/refused"), server.counts().connections.load() - h2c_check_connections);
  EXPECT_EQ(server.counts().responses.load(), 200u);
}

TEST(ClientHttp2, a_goaway_with_streams_in_flight_retries_those_above_it) {
  for (const std::uint32_t code : {h2_error::no_error, h2_error::enhance_your_calm}) {
    SCOPED_TRACE(code);
    // After the start-up checks', the first two connections misbehave.
    H2Server server(H2Behaviour::goaway_in_flight, {.misbehaving_connections = h2c_check_connections + 2,
                                                    .goaway_open_streams = 4,
                                                    .goaway_error = code});
    const ClientRun run = run_client(
        {"--http2-prior-knowledge", "-n", "100", "-c", "2", "--max-streams", "4", "--json", server.url("/")});
    const JsonReport report(run);
    EXPECT_EQ(report.number("/requests"), 100u) << run.err;
    EXPECT_EQ(report.number("/http2/goaways"), 2u);
    EXPECT_EQ(report.number("/http2/refused"), 2u * 3) << "three streams above each GOAWAY's last";
    EXPECT_EQ(report.number("/errors/goaway"), code == h2_error::no_error ? 0u : 2u);
    EXPECT_EQ(run.exit_code, code == h2_error::no_error ? 0 : 1) << run.err << run.out;
    EXPECT_EQ(server.counts().responses.load(), 100u);
  }
}

TEST(ClientHttp2, a_stalled_stream_or_a_shut_window_times_out_and_ends_in_time) {
  {
    H2Server server(H2Behaviour::response_stalls);
    const ClientRun run = run_client({"--http2-prior-knowledge", "-d", "1500ms", "-w", "0", "--timeout", "300ms",
                                      "-c", "1", "--max-streams", "2", "--json", server.url("/")},
                                     std::chrono::seconds(10));
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    const JsonReport report(run);
    EXPECT_GE(report.number("/errors/timeout"), 2u) << "one per 300 ms over 1.5 s, reconnecting between";
    EXPECT_EQ(report.number("/requests"), 0u);
  }
  {
    // A 100 KB body against a window of 0: never sent whole.
    H2Server server(H2Behaviour::window_never_opens);
    const ClientRun run =
        run_client({"--http2-prior-knowledge", "-d", "1s", "-w", "0", "--timeout", "300ms", "-c", "1", "-m", "POST",
                    "-b", std::string(100'000, 'x'), "--json", server.url("/")},
                   std::chrono::seconds(10));
    EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
    const JsonReport report(run);
    EXPECT_GE(report.number("/errors/timeout"), 1u);
    EXPECT_EQ(report.number("/requests"), 0u);
  }
}

TEST(ClientHttp2, a_server_that_allows_no_stream_is_a_timeout_not_a_hang) {
  H2Server server(H2Behaviour::zero_streams);
  const ClientRun run = run_client({"--http2-prior-knowledge", "-n", "10", "-d", "1s", "--timeout", "300ms", "-c",
                                    "1", "--json", server.url("/")},
                                   std::chrono::seconds(10));
  EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_GE(report.number("/errors/timeout"), 1u);
  EXPECT_EQ(report.number("/requests"), 0u);
  EXPECT_EQ(server.counts().responses.load(), 0u);
}

TEST(ClientHttp2, a_bad_header_block_is_a_protocol_error_and_the_run_goes_on) {
  // After the start-up checks', the first connection misbehaves.
  H2Server server(H2Behaviour::bad_hpack, {.misbehaving_connections = h2c_check_connections + 1});
  const ClientRun run = run_client(
      {"--http2-prior-knowledge", "-n", "50", "-c", "1", "--max-streams", "1", "--json", server.url("/")});
  EXPECT_EQ(run.exit_code, 1) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/protocol"), 1u);
  EXPECT_EQ(report.number("/requests"), 49u) << "the broken stream's request failed, the rest on a new connection";
  EXPECT_GE(report.number("/reconnects"), 1u);
  ASSERT_TRUE(eventually([&] { return server.counts().client_goaways.load() >= 1; }))
      << "the client says why it leaves";
  EXPECT_EQ(server.counts().client_goaway_error.load(), h2_error::compression_error);
}

TEST(ClientHttp2, over_tls_with_the_epoll_backend_and_merged_shards) {
  H2Server server(H2Behaviour::normal, {.tls = true, .requests_per_connection = 30});
  std::vector<std::string> reports;
  for (const char* shard : {"0/2", "1/2"}) {
    const ClientRun run =
        run_client({"--http2", "--backend", "epoll", "--cacert", server.ca_file(), "-n", "200", "-c", "2",
                    "--max-streams", "4", "--shard", shard, "--json", "--expect-body", hello, server.url("/")});
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    EXPECT_EQ(JsonReport(run).number("/requests"), 100u);
    reports.push_back(run.out);
  }
  EXPECT_EQ(server.counts().responses.load(), 200u);
  // client merge adds the shards' HTTP/2 counts up.
  const std::string dir = ::testing::TempDir();
  std::vector<std::string> merge_args{"merge", "--json"};
  std::uint64_t goaways = 0;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const std::string path = dir + "/h2_shard" + std::to_string(i) + ".json";
    std::ofstream(path) << reports[i];
    merge_args.push_back(path);
    goaways += JsonReport(reports[i]).number("/http2/goaways");
  }
  EXPECT_GE(goaways, 2u) << "a GOAWAY every 30 requests";
  const ClientRun merged = run_client(merge_args);
  ASSERT_EQ(merged.exit_code, 0) << merged.err << merged.out;
  const JsonReport report(merged);
  EXPECT_EQ(report.number("/requests"), 200u);
  EXPECT_EQ(report.number("/http2/goaways"), goaways);
  EXPECT_NE(merged.err.find("h2, 4 streams per connection"), std::string::npos) << merged.err;
}

}  // namespace
}  // namespace socket_test
