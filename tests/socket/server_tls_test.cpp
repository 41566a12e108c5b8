// The server over HTTPS (--tls-cert, --tls-key): curl and openssl s_client
// talk to it, our own TLS session sends exactly the records a test needs,
// and every refusal is counted by its reason. Certificates are made by the
// openssl command (support/certificates.hpp).

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>
#include <vector>

#include "support/certificates.hpp"
#include "support/client_process.hpp"
#include "support/connection.hpp"
#include "support/eventually.hpp"
#include "support/json_report.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/shell.hpp"
#include "support/stream_pattern.hpp"
#include "support/tls_connection.hpp"

namespace socket_test {
namespace {

const std::string plaintext_request = "GET /plaintext HTTP/1.1\r\nHost: localhost\r\n\r\n";
const std::string ok_line = "HTTP/1.1 200 OK\r\n";

std::string handshakes_failed(const std::string& reason) {
  return "ringhttp_tls_handshakes_failed_total{reason=\"" + reason + "\"}";
}
const std::string handshakes_full = "ringhttp_tls_handshakes_total";
const std::string handshakes_resumed = "ringhttp_tls_handshakes_resumed_total";
const std::string handshakes_in_progress = "ringhttp_tls_handshakes_in_progress";

class ServerTls : public testing::Test {
 protected:
  // One shard, /metrics on a plain port of its own, HTTPS on the main one.
  std::vector<std::string> args(std::vector<std::string> extra = {}) const {
    std::vector<std::string> a = {"--shards",   "1", "--metrics-address", "127.0.0.1:0", "--tls-cert",
                                  certs_.files().cert_file, "--tls-key", certs_.files().key_file};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  static Metrics metrics(const ServerProcess& server) { return scrape_metrics(*server.metrics_port()); }
  std::unique_ptr<ringhttp::tls::ClientContext> client(const std::string& alpn = "http/1.1") const {
    return make_tls_client(certs_.files().ca_file, alpn);
  }
  std::string curl(const ServerProcess& server, const std::string& path, const std::string& extra = "") const {
    const std::string port = std::to_string(server.port());
    const ShellRun run = run_shell("curl -sS --max-time 10 --cacert " + certs_.files().ca_file + " --resolve localhost:" +
                                   port + ":127.0.0.1 " + extra + " https://localhost:" + port + path + " 2>&1");
    return run.output;
  }

  TempCertificates certs_;
};

TEST_F(ServerTls, tls_flags_that_cannot_work_are_refused_with_their_reason) {
  const std::string server = server_path();
  const std::string cert = " --tls-cert " + certs_.files().cert_file;
  const std::string key = " --tls-key " + certs_.files().key_file;
  struct Case {
    std::string args;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {cert, 2, "--tls-cert and --tls-key go together"},
      {key, 2, "--tls-cert and --tls-key go together"},
      {cert + key + " --send zc", 2, "--send zc cannot carry TLS"},
      {cert + key + " --tls-min-version 1.1", 2, "bad value '1.1' for --tls-min-version"},
      {cert + key + " --tls-tickets maybe", 2, "bad value 'maybe' for --tls-tickets"},
      {" --tls-cert /nonexistent.pem" + key, 1, "cannot load the certificate chain /nonexistent.pem"},
      {cert + " --tls-key " + certs_.files().ca_key_file, 1, "does not match the certificate"},
      {cert + key + " --tls-ciphers NOTACIPHER", 1, "bad cipher list \"NOTACIPHER\""},
  };
  for (const Case& c : cases) {
    const ShellRun ran = run_shell(server + " --port 0" + c.args + " 2>&1");
    EXPECT_EQ(ran.exit_code, c.exit_code) << c.args << ": " << ran.output;
    EXPECT_NE(ran.output.find(c.says), std::string::npos) << c.args << ": " << ran.output;
  }
}

TEST_F(ServerTls, curl_gets_answers_over_https_each_counted_by_the_server) {
  ServerProcess server(args());
  EXPECT_NE(server.startup_line().find(" tls=TLSv1.2+,tickets,"), std::string::npos) << server.startup_line();
  EXPECT_EQ(curl(server, "/plaintext", "-w ' %{http_code} %{http_version}'"), "Hello, World! 200 1.1");
  EXPECT_EQ(curl(server, "/json"), R"({"message":"Hello, World!"})");
  // Two requests on one connection: one handshake for both (the second
  // transfer made no connection of its own).
  const std::string port = std::to_string(server.port());
  EXPECT_EQ(curl(server, "/plaintext", "https://localhost:" + port + "/plaintext -w ' %{num_connects}'"),
            "Hello, World! 1Hello, World! 0");
  const Metrics m = metrics(server);
  EXPECT_EQ(m.value(handshakes_full), 3);
  EXPECT_EQ(m.value(metric::responses(200)), 4);
  EXPECT_EQ(m.value(handshakes_in_progress), 0);
}

TEST_F(ServerTls, our_client_over_https_and_the_server_count_the_same_requests_and_handshakes) {
  ServerProcess server(args());
  const std::string url = "https://localhost:" + std::to_string(server.port()) + "/plaintext";
  // Keep-alive, then a new connection per request (resumed by ticket).
  const ClientRun kept = run_client({"-n", "300", "-c", "4", "-p", "4", "--json", "--cacert",
                                     certs_.files().ca_file, "--resolve",
                                     "localhost:" + std::to_string(server.port()) + ":127.0.0.1",
                                     "--expect-body", "Hello, World!", url});
  ASSERT_EQ(kept.exit_code, 0) << kept.err << kept.out;
  const JsonReport report(kept);
  EXPECT_EQ(report.number("/requests"), 300u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.text("/tls/protocol"), "TLSv1.3");
  const ClientRun churn = run_client({"-n", "40", "-c", "2", "--requests-per-connection", "1", "--json", "--cacert",
                                      certs_.files().ca_file, "--resolve",
                                      "localhost:" + std::to_string(server.port()) + ":127.0.0.1", url});
  ASSERT_EQ(churn.exit_code, 0) << churn.err << churn.out;
  const JsonReport churned(churn);
  EXPECT_EQ(churned.number("/requests"), 40u);
  EXPECT_EQ(churned.number("/tls/handshakes"), 40u);
  EXPECT_GT(churned.number("/tls/resumed"), 0u);
  // curl's --no-sessionid: every handshake a full one.
  const ClientRun full = run_client({"-n", "20", "-c", "2", "--requests-per-connection", "1", "--no-sessionid",
                                     "--json", "--cacert", certs_.files().ca_file, "--resolve",
                                     "localhost:" + std::to_string(server.port()) + ":127.0.0.1", url});
  ASSERT_EQ(full.exit_code, 0) << full.err << full.out;
  const JsonReport fulls(full);
  EXPECT_EQ(fulls.number("/tls/handshakes"), 20u);
  EXPECT_EQ(fulls.number("/tls/resumed"), 0u);
  const Metrics m = metrics(server);
  EXPECT_EQ(m.value(metric::responses(200)), 360);
  // Every connection's handshake on both sides: the runs' connections and
  // each run's start-up check, which makes one without a request.
  const double handshakes = m.value(handshakes_full) + m.value(handshakes_resumed);
  EXPECT_EQ(handshakes, report.number("/tls/handshakes") + 40 + 20 + 3);
  EXPECT_EQ(m.value(handshakes_resumed), churned.number("/tls/resumed"));
}

TEST_F(ServerTls, plain_http_on_the_https_port_is_answered_400_in_plain_http_and_closed) {
  ServerProcess server(args());
  Connection connection(server.port());
  connection.send_all(plaintext_request);
  const Response response = connection.read_response();
  EXPECT_EQ(response.status, 400);
  EXPECT_NE(response.body.find("HTTPS"), std::string::npos) << response.body;
  EXPECT_TRUE(connection.expect_closed());
  EXPECT_EQ(metrics(server).value(handshakes_failed("plain_http")), 1);
}

TEST_F(ServerTls, a_client_offering_only_h2_is_refused_with_the_alert) {
  ServerProcess server(args());
  auto context = client("h2");
  TlsConnection connection(server.port(), *context);
  const testing::AssertionResult result = connection.handshake();
  ASSERT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("no application protocol"), std::string::npos) << result.message();
  EXPECT_EQ(metrics(server).value(handshakes_failed("no_protocol")), 1);
  // A client that offers no ALPN at all is served HTTP/1.1.
  auto plain = client("");
  TlsConnection served(server.port(), *plain);
  ASSERT_TRUE(served.handshake());
  served.send(plaintext_request);
  EXPECT_NE(served.read_until_count(ok_line, 1).find("Hello, World!"), std::string::npos);
}

TEST_F(ServerTls, a_second_connection_resumes_by_ticket_unless_tickets_are_off) {
  for (const bool tickets : {true, false}) {
    SCOPED_TRACE(tickets ? "tickets on" : "tickets off");
    ServerProcess server(args({"--tls-tickets", tickets ? "on" : "off"}));
    auto context = client();
    for (int i = 0; i < 2; ++i) {
      TlsConnection connection(server.port(), *context);
      ASSERT_TRUE(connection.handshake());
      EXPECT_EQ(connection.session().resumed(), tickets && i == 1);
      // TLS 1.3 tickets come after the handshake: read a response first.
      connection.send(plaintext_request);
      connection.read_until_count(ok_line, 1);
    }
    const Metrics m = metrics(server);
    EXPECT_EQ(m.value(handshakes_full), tickets ? 1 : 2);
    EXPECT_EQ(m.value(handshakes_resumed), tickets ? 1 : 0);
  }
}

TEST_F(ServerTls, tls_1_2_is_served_by_default_and_refused_with_min_version_1_3) {
  for (const bool tls13_only : {false, true}) {
    ServerProcess server(tls13_only ? args({"--tls-min-version", "1.3"}) : args());
    const ShellRun run = run_shell("echo | timeout 10 openssl s_client -tls1_2 -connect 127.0.0.1:" +
                                   std::to_string(server.port()) + " -CAfile " + certs_.files().ca_file + " 2>&1");
    if (tls13_only) {
      EXPECT_NE(run.output.find("alert protocol version"), std::string::npos) << run.output;
      EXPECT_TRUE(eventually([&] { return metrics(server).value(handshakes_failed("version")) == 1; }));
    } else {
      EXPECT_NE(run.output.find("Protocol  : TLSv1.2"), std::string::npos) << run.output;
      EXPECT_NE(run.output.find("Verify return code: 0 (ok)"), std::string::npos) << run.output;
    }
  }
}

TEST_F(ServerTls, pipelined_requests_beyond_the_queue_are_held_as_plaintext_and_all_answered) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection connection(server.port(), *context);
  ASSERT_TRUE(connection.handshake());
  // 300 requests in full records, sent at once: far more than a
  // connection's queue of responses, so the parser pauses mid-record and
  // the rest of that record's plaintext waits in spill blocks.
  constexpr std::size_t requests = 300;
  std::string batch;
  for (std::size_t i = 0; i < requests; ++i) batch += plaintext_request;
  connection.send(batch);
  const std::string answers = connection.read_until_count(ok_line, requests);
  EXPECT_EQ(metrics(server).value(metric::responses(200)), requests);
  EXPECT_EQ(answers.find("HTTP/1.1 4"), std::string::npos);
}

TEST_F(ServerTls, a_request_sent_in_one_byte_records_is_answered) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection connection(server.port(), *context);
  ASSERT_TRUE(connection.handshake());
  connection.send(plaintext_request + plaintext_request, 1);
  EXPECT_NE(connection.read_until_count(ok_line, 2).find("Hello, World!"), std::string::npos);
}

TEST_F(ServerTls, a_long_stream_leaves_in_many_records_and_arrives_whole) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection connection(server.port(), *context);
  ASSERT_TRUE(connection.handshake());
  constexpr std::uint64_t bytes = 1'000'000;
  connection.send("GET /stream?bytes=" + std::to_string(bytes) + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
  std::string all;
  std::size_t body_at = std::string::npos;
  while (body_at == std::string::npos || all.size() < body_at + bytes) {
    const std::string some = connection.read_some();
    ASSERT_FALSE(some.empty()) << "closed after " << all.size() << " bytes";
    all += some;
    if (body_at == std::string::npos && all.find("\r\n\r\n") != std::string::npos) body_at = all.find("\r\n\r\n") + 4;
  }
  ASSERT_EQ(all.size(), body_at + bytes);
  for (std::uint64_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(all[body_at + i], stream_byte(i)) << "at body byte " << i;
  }
}

TEST_F(ServerTls, connection_close_is_answered_then_a_close_notify_precedes_the_fin) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection connection(server.port(), *context);
  ASSERT_TRUE(connection.handshake());
  connection.send("GET /plaintext HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  connection.read_until_count(ok_line, 1);
  std::string rest;
  while (true) {
    const std::string some = connection.read_some();
    if (some.empty()) break;
    rest += some;
  }
  EXPECT_TRUE(connection.closed_by_notify());
}

TEST_F(ServerTls, a_handshake_that_stalls_is_closed_at_its_deadline_and_counted) {
  ServerProcess server(args({"--tls-handshake-timeout-ms", "300"}));
  // Nothing at all, then a record header with no record after it.
  Connection silent(server.port());
  Connection partial(server.port());
  partial.send_all(std::string("\x16\x03\x01\x02\x00", 5));
  EXPECT_TRUE(silent.expect_closed());
  EXPECT_TRUE(partial.expect_closed());
  EXPECT_TRUE(eventually([&] { return metrics(server).value(handshakes_failed("timeout")) == 2; }));
  EXPECT_EQ(metrics(server).value(handshakes_in_progress), 0);
}

TEST_F(ServerTls, garbage_or_a_reset_instead_of_a_handshake_is_counted_and_disturbs_no_one) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection bystander(server.port(), *context);
  ASSERT_TRUE(bystander.handshake());
  {
    Connection garbage(server.port());
    garbage.send_all(std::string(64, '\x07'));
    EXPECT_TRUE(garbage.expect_closed());
  }
  {
    // A ClientHello's first bytes, then a reset.
    Connection reset(server.port());
    reset.send_all(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11));
    reset.reset();
  }
  EXPECT_TRUE(eventually([&] {
    const Metrics m = metrics(server);
    return m.value(handshakes_failed("other")) + m.value(handshakes_failed("version")) == 1 &&
           m.value(handshakes_failed("closed")) == 1;
  }));
  bystander.send(plaintext_request);
  EXPECT_NE(bystander.read_until_count(ok_line, 1).find("Hello, World!"), std::string::npos);
}

TEST_F(ServerTls, a_close_notify_mid_request_ends_the_connection_and_the_request) {
  ServerProcess server(args());
  auto context = client();
  TlsConnection connection(server.port(), *context);
  ASSERT_TRUE(connection.handshake());
  connection.send("GET /plaintext HTTP/1.1\r\nHo");
  connection.send_close_notify();
  EXPECT_EQ(connection.read_some(), "");
  EXPECT_TRUE(eventually([&] { return metrics(server).value(metric::active) == 0; }));
  EXPECT_EQ(metrics(server).value(metric::requests), 0);
}

// A request, then at once the close_notify and the FIN (a client that
// half-closes over TLS): the close_notify starts the drain, and the FIN
// arriving in the same batch closed the connection before the answer was
// sent (found by the hostile driver over TLS). Now the answer goes first.
TEST_F(ServerTls, a_request_then_a_close_notify_and_the_fin_at_once_is_answered) {
  ServerProcess server(args());
  auto context = client();
  // Each try races the FIN against the answer; before the fix, most lost.
  for (int attempt = 0; attempt < 10; ++attempt) {
    TlsConnection connection(server.port(), *context);
    ASSERT_TRUE(connection.handshake());
    connection.send(plaintext_request);
    connection.send_close_notify();
    ::shutdown(connection.tcp().fd(), SHUT_WR);
    const std::string answer = connection.read_until_count(ok_line, 1);
    EXPECT_NE(answer.find("Hello, World!"), std::string::npos) << "attempt " << attempt;
  }
}

TEST_F(ServerTls, handshakes_in_progress_are_bounded_and_newcomers_past_it_refused) {
  ServerProcess server(args({"--tls-handshake-timeout-ms", "60000"}));
  // 512 connections that never send their ClientHello hold every place.
  std::vector<Connection> silent;
  for (int i = 0; i < 512; ++i) silent.emplace_back(server.port());
  ASSERT_TRUE(eventually([&] { return metrics(server).value(handshakes_in_progress) == 512; }));
  Connection refused(server.port());
  EXPECT_TRUE(refused.expect_closed());
  EXPECT_EQ(metrics(server).value(handshakes_failed("refused")), 1);
  // Places come back as handshakes end.
  silent.clear();
  ASSERT_TRUE(eventually([&] { return metrics(server).value(handshakes_in_progress) == 0; }));
  auto context = client();
  TlsConnection later(server.port(), *context);
  EXPECT_TRUE(later.handshake());
}

}  // namespace
}  // namespace socket_test
