// The HTTP/2 test server (support/h2_server.hpp) and the nginx fixture's
// http2 option, driven by curl (built with nghttp2), so that the client's
// HTTP/2 tests can trust what each behaviour does on the wire. curl's exit
// codes used here: 0 success, 1 unsupported protocol, 28 timeout, 52
// nothing came back, 56 the connection failed (after its retries), 92
// HTTP/2 stream error (RST_STREAM).
//
// curl 7.88 (Debian 12's) fails a second request on a reused h2c
// connection with 16 (curl/curl issue 10634, fixed in 8.0): the tests that
// put several requests on one connection use TLS, where reuse works.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>

#include "support/eventually.hpp"
#include "support/h2_server.hpp"
#include "support/nginx.hpp"
#include "support/shell.hpp"

namespace socket_test {
namespace {

constexpr int curl_ok = 0;
constexpr int curl_unsupported = 1;
constexpr int curl_timeout = 28;
constexpr int curl_empty_reply = 52;
constexpr int curl_connection_failed = 56;
constexpr int curl_stream_error = 92;

// Bounds of one curl run: what must succeed gets plenty; what must stall
// gets just enough to show that nothing comes.
constexpr const char* max_time_s = "10";
constexpr const char* stall_time_s = "1";

// tools/install-deps.sh installs curl (Debian's is built with nghttp2):
// without it the test fails, naming the package.
testing::AssertionResult curl_has_http2() {
  const ShellRun version = run_shell("curl -V");
  if (version.exit_code != 0) {
    return testing::AssertionFailure() << "needs curl on PATH (Debian: curl; tools/install-deps.sh installs it)";
  }
  if (version.output.find("HTTP2") == std::string::npos) {
    return testing::AssertionFailure() << "this curl has no HTTP/2 (Debian's curl has): " << version.output;
  }
  return testing::AssertionSuccess();
}

#define NEEDS_CURL() ASSERT_TRUE(curl_has_http2())

// "curl -sS --max-time SECONDS ", the start of every command here. (Built
// by appending: GCC 12 warns falsely of an overlap in a chain of +.)
std::string curl_for(const char* seconds) {
  std::string command = "curl -sS --max-time ";
  command += seconds;
  command += ' ';
  return command;
}

// curl over h2c by prior knowledge (or h2 over TLS, trusting the server's
// CA), the URLs one after another on one connection when it can;
// `-w` prints the HTTP version after each body.
ShellRun curl(const H2Server& server, const std::string& extra, int urls = 1) {
  std::string command = curl_for(max_time_s);
  command += "-w ' v%{http_version}\\n' ";
  if (server.options().tls) {
    command += "--http2 --cacert ";
    command += server.ca_file();
  } else {
    command += "--http2-prior-knowledge";
  }
  command += ' ';
  command += extra;
  for (int i = 0; i < urls; ++i) {
    command += ' ';
    command += server.url();
  }
  return run_shell(command);
}

// One plain h2c request to `url` that is expected to stall; `extra` goes
// before the URL.
ShellRun curl_stalled(const std::string& extra, const std::string& url) {
  std::string command = curl_for(stall_time_s);
  command += "--http2-prior-knowledge ";
  command += extra;
  command += ' ';
  command += url;
  return run_shell(command);
}

// The server's counts that most tests check, compared and printed as one.
struct Counted {
  std::uint32_t connections = 0;
  std::uint32_t requests = 0;
  std::uint32_t responses = 0;
  std::uint32_t resets = 0;
  std::uint32_t goaways = 0;
  bool operator==(const Counted&) const = default;
};

void PrintTo(const Counted& c, std::ostream* out) {
  *out << "{connections " << c.connections << ", requests " << c.requests << ", responses " << c.responses
       << ", resets " << c.resets << ", goaways " << c.goaways << "}";
}

Counted counted(const H2Server& server) {
  const H2ServerCounts& counts = server.counts();
  return {counts.connections, counts.requests, counts.responses, counts.resets, counts.goaways};
}

// How many times `needle` is in `text`.
int occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

TEST(ClientH2Server, NormalAnswersH2cByPriorKnowledge) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::normal);
  const ShellRun ran = curl(server, "");
  EXPECT_EQ(ran.exit_code, curl_ok) << ran.output;
  EXPECT_EQ(ran.output, "Hello, World! v2\n");
  EXPECT_EQ(counted(server), (Counted{.connections = 1, .requests = 1, .responses = 1}));
}

TEST(ClientH2Server, NormalOverTlsAnswersEveryRequestOnOneConnection) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::normal, {.tls = true});
  const ShellRun ran = curl(server, "", 3);
  EXPECT_EQ(ran.exit_code, curl_ok) << ran.output;
  EXPECT_EQ(occurrences(ran.output, "Hello, World! v2\n"), 3) << ran.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 1, .requests = 3, .responses = 3}));
}

// A client that offers only http/1.1 gets no ALPN answer, and the server
// speaks HTTP/2 anyway: curl reads its SETTINGS frame as HTTP/0.9 (exit 1).
TEST(ClientH2Server, TlsWithoutH2OfferedSelectsNoProtocol) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::normal, {.tls = true});
  std::string command = curl_for(max_time_s);
  command += "-v --http1.1 --cacert ";
  command += server.ca_file();
  command += ' ';
  command += server.url();
  const ShellRun ran = run_shell(command);
  EXPECT_EQ(ran.exit_code, curl_unsupported) << ran.output;
  EXPECT_NE(ran.output.find("ALPN: server did not agree on a protocol"), std::string::npos) << ran.output;
  EXPECT_EQ(server.counts().requests, 0u);
}

// Three requests in a row: two on the first connection, whose GOAWAY comes
// with the second; the third on a new one.
TEST(ClientH2Server, GracefulGoawayAfterRequestsPerConnection) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::normal, {.tls = true, .requests_per_connection = 2});
  const ShellRun ran = curl(server, "", 3);
  EXPECT_EQ(ran.exit_code, curl_ok) << ran.output;
  EXPECT_EQ(occurrences(ran.output, "Hello, World! v2\n"), 3) << ran.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 2, .requests = 3, .responses = 3, .goaways = 1}));
}

TEST(ClientH2Server, RstMidResponseCutsTheBody) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::rst_mid_response);
  const ShellRun ran = curl(server, "");
  EXPECT_EQ(ran.exit_code, curl_stream_error) << ran.output;
  EXPECT_NE(ran.output.find("INTERNAL_ERROR"), std::string::npos) << ran.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 1, .requests = 1, .resets = 1}));
}

TEST(ClientH2Server, RstMidResponseEveryOtherRequest) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::rst_mid_response, {.reset_every = 2});
  const ShellRun first = curl(server, "");
  const ShellRun second = curl(server, "");
  EXPECT_EQ(first.exit_code, curl_ok) << first.output;
  EXPECT_EQ(second.exit_code, curl_stream_error) << second.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 2, .requests = 2, .responses = 1, .resets = 1}));
}

// Two requests multiplexed on the first connection: the GOAWAY covers the
// first; curl sends the second again on a new connection, served normally.
TEST(ClientH2Server, GoawayInFlightCoversOnlyTheLowestStream) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::goaway_in_flight,
                  {.tls = true,
                   .misbehaving_connections = 1,
                   .goaway_error = h2_error::enhance_your_calm,
                   .covered_answer_waits_for_retry = true});
  const ShellRun ran = curl(server, "--parallel --parallel-max 2", 2);
  EXPECT_EQ(ran.exit_code, curl_ok) << ran.output;
  EXPECT_EQ(occurrences(ran.output, "Hello, World!"), 2) << ran.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 2, .requests = 3, .responses = 2, .goaways = 1}));
}

TEST(ClientH2Server, WindowNeverOpensHoldsARequestBody) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::window_never_opens);
  // More than the 65,535 bytes a client may send before it has the SETTINGS.
  constexpr std::size_t request_body_bytes = 200'000;
  const std::string body_file = testing::TempDir() + "ringhttp_h2_body_" + std::to_string(::getpid());
  std::ofstream(body_file, std::ios::binary) << std::string(request_body_bytes, 'x');
  const ShellRun post = curl_stalled("--data-binary @" + body_file, server.url());
  std::filesystem::remove(body_file);
  EXPECT_EQ(post.exit_code, curl_timeout) << post.output;
  EXPECT_LE(server.counts().body_bytes, 65'535u);
  const ShellRun get = curl(server, "");
  EXPECT_EQ(get.exit_code, curl_ok) << get.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 2, .requests = 2, .responses = 1}));
}

TEST(ClientH2Server, ResponseStallsAfterItsHeaders) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::response_stalls);
  const ShellRun ran = curl_stalled("-D -", server.url());
  EXPECT_EQ(ran.exit_code, curl_timeout) << ran.output;
  EXPECT_NE(ran.output.find("HTTP/2 200"), std::string::npos) << ran.output;
  EXPECT_EQ(counted(server), (Counted{.connections = 1, .requests = 1}));
}

// A request curl sends before it has the SETTINGS is refused by nghttp2
// (RST_STREAM(REFUSED_STREAM)); curl retries it on new connections, 5 in all.
TEST(ClientH2Server, ZeroStreamsRefusesEveryRequest) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::zero_streams);
  const ShellRun ran = curl_stalled("", server.url());
  EXPECT_EQ(ran.exit_code, curl_connection_failed) << ran.output;
  const std::uint32_t connections = server.counts().connections;
  EXPECT_GE(connections, 1u);
  EXPECT_EQ(counted(server), (Counted{.connections = connections, .resets = connections}));
}

// curl reports no reply (52); its nghttp2 has failed the connection with
// GOAWAY(COMPRESSION_ERROR), which the server saw.
TEST(ClientH2Server, BadHpackFailsTheClientsConnection) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::bad_hpack);
  const ShellRun ran = curl(server, "");
  EXPECT_EQ(ran.exit_code, curl_empty_reply) << ran.output;
  EXPECT_EQ(server.counts().bad_headers, 1u);
  EXPECT_EQ(counted(server), (Counted{.connections = 1, .requests = 1}));
  EXPECT_TRUE(eventually([&] { return server.counts().client_goaways == 1; })) << ran.output;
  EXPECT_EQ(server.counts().client_goaway_error, h2_error::compression_error);
}

// The first connection's only request is refused; curl sends it again on a
// new connection.
TEST(ClientH2Server, RstRefusedIsRetriedOnANewConnection) {
  NEEDS_CURL();
  H2Server server(H2Behaviour::rst_refused, {.misbehaving_connections = 1});
  const ShellRun ran = curl(server, "");
  EXPECT_EQ(ran.exit_code, curl_ok) << ran.output;
  EXPECT_EQ(ran.output, "Hello, World! v2\n");
  EXPECT_EQ(counted(server), (Counted{.connections = 2, .requests = 2, .responses = 1, .resets = 1}));
}

TEST(NginxHttp2, TlsSelectsH2AndPlainSpeaksH2c) {
  NEEDS_CURL();
  ASSERT_TRUE(nginx_installed());
  Nginx tls({.tls = true, .http2 = true});
  std::string command = curl_for(max_time_s);
  command += "-w ' v%{http_version}' --http2 -k ";
  command += tls.url();
  const ShellRun over_tls = run_shell(command);
  EXPECT_EQ(over_tls.exit_code, curl_ok) << over_tls.output;
  EXPECT_EQ(over_tls.output, "Hello, World! v2") << over_tls.output;
  Nginx plain({.http2 = true});
  command = curl_for(max_time_s);
  command += "-w ' v%{http_version}' --http2-prior-knowledge ";
  command += plain.url();
  const ShellRun h2c = run_shell(command);
  EXPECT_EQ(h2c.exit_code, curl_ok) << h2c.output;
  EXPECT_EQ(h2c.output, "Hello, World! v2") << h2c.output;
}

}  // namespace
}  // namespace socket_test
