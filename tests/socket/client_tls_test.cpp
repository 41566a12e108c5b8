// The client over HTTPS and Unix sockets, against Debian's nginx with a CA
// the test makes (support/nginx.hpp): verification with --cacert, -k,
// virtual hosts by name, the wrong CA or the wrong name refused with
// OpenSSL's reason and exit 1, resumption on reconnects counted on both
// sides, servers that close or answer garbage in the handshake, and
// --unix-socket. Loopback only.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support/client_process.hpp"
#include "support/eventually.hpp"
#include "support/json_report.hpp"
#include "support/nginx.hpp"

namespace socket_test {
namespace {

// tools/install-deps.sh installs nginx and openssl: without them the test
// fails, naming the package.
#define NEEDS_NGINX() ASSERT_TRUE(nginx_installed())

std::string port_of(const Nginx& nginx) { return std::to_string(nginx.port()); }

TEST(ClientTls, verified_with_cacert_every_request_checked_and_counted_by_nginx) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true, .access_log = true});
  const ClientRun run = run_client({"-n", "200", "-c", "4", "--json", "--cacert", nginx.ca_file(), "--expect-body",
                                    "Hello, World!", nginx.url_for("localhost", "/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 200u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.text("/tls/protocol"), "TLSv1.3");
  EXPECT_FALSE(report.text("/tls/cipher").empty());
  EXPECT_EQ(report.number("/tls/handshakes"), 4u) << "one a connection, all in the window (-n)";
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 200; })) << nginx.logged_requests();
  // The start-up check's handshake sends no request: the log has the four.
  EXPECT_EQ(nginx.logged_connections(), 4u);
  for (const Nginx::LogLine& line : nginx.access_log()) EXPECT_EQ(line.ssl_protocol, "TLSv1.3");
}

TEST(ClientTls, names_pinned_with_resolve_reach_their_virtual_hosts) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  for (const std::string name : {"a", "b"}) {
    const std::string host = name + ".test";
    const ClientRun run = run_client({"-n", "20", "--json", "--cacert", nginx.ca_file(), "--resolve",
                                      host + ":" + port_of(nginx) + ":127.0.0.1", "--expect-body", "vhost " + name,
                                      nginx.url_for(host, "/")});
    ASSERT_EQ(run.exit_code, 0) << host << run.err << run.out;
    EXPECT_EQ(JsonReport(run).number("/requests"), 20u) << host;
  }
}

TEST(ClientTls, the_wrong_ca_stops_the_run_with_the_reason_and_k_skips_the_check) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  const ClientRun refused = run_client({"-n", "20", "--cacert", nginx.wrong_ca_file(), nginx.url_for("localhost")});
  EXPECT_EQ(refused.exit_code, 1) << refused.err;
  EXPECT_NE(refused.err.find("TLS handshake with localhost"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("certificate"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.out.find("requests/s"), std::string::npos) << "nothing ran:\n" << refused.out;
  const ClientRun insecure =
      run_client({"-n", "20", "--json", "-k", "--cacert", nginx.wrong_ca_file(), nginx.url_for("localhost")});
  ASSERT_EQ(insecure.exit_code, 0) << insecure.err << insecure.out;
  EXPECT_EQ(JsonReport(insecure).number("/requests"), 20u);
}

TEST(ClientTls, a_certificate_for_another_name_is_refused) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  // The certificate covers localhost, a.test and b.test, not this name.
  const ClientRun run = run_client({"-n", "5", "--cacert", nginx.ca_file(), "--resolve",
                                    "other.test:" + port_of(nginx) + ":127.0.0.1", nginx.url_for("other.test")});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("other.test"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("mismatch"), std::string::npos) << run.err;
}

TEST(ClientTls, reconnects_resume_their_session_counted_on_both_sides) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true, .access_log = true});
  // 10 connections of 10 requests, one after another on one slot: every
  // connection after the first offers the ticket the one before received.
  const ClientRun run = run_client({"-n", "100", "-c", "1", "--json", "--requests-per-connection", "10",
                                    "--cacert", nginx.ca_file(), "--expect-body", "Hello, World!",
                                    nginx.url_for("localhost")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 100u);
  EXPECT_EQ(report.number("/tls/handshakes"), 10u);
  EXPECT_EQ(report.number("/tls/resumed"), 9u);
  EXPECT_EQ(report.number("/reconnects"), 9u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 100; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 10u);
  EXPECT_EQ(nginx.logged_resumed_connections(), 9u);
}

TEST(ClientTls, merged_shards_add_their_handshakes) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  std::vector<std::string> reports;
  for (const std::string shard : {"0/2", "1/2"}) {
    const ClientRun run = run_client({"--shard", shard, "-n", "40", "-c", "4", "--json", "--cacert", nginx.ca_file(),
                                      nginx.url_for("localhost")});
    ASSERT_EQ(run.exit_code, 0) << shard << run.err;
    reports.push_back(testing::TempDir() + "client_tls_shard" + std::to_string(reports.size()) + ".json");
    std::ofstream(reports.back()) << run.out;
  }
  const ClientRun merged = run_client({"merge", "--json", reports[0], reports[1]});
  for (const std::string& r : reports) std::remove(r.c_str());
  ASSERT_EQ(merged.exit_code, 0) << merged.err << merged.out;
  const JsonReport report(merged);
  EXPECT_EQ(report.number("/requests"), 40u);
  EXPECT_EQ(report.number("/tls/handshakes"), 4u) << "two connections a shard";
  EXPECT_EQ(report.text("/tls/protocol"), "TLSv1.3");
  EXPECT_NE(merged.err.find("handshakes in the window"), std::string::npos) << merged.err;
}

// A TCP server on 127.0.0.1 that reads what a client sends and then either
// closes or answers with bytes that are not TLS, for every connection; or,
// with `forward_first`, passes its first connection through to that port
// (a real TLS server: the client's start-up check, which connects and
// shakes hands on one connection) and fails the others.
class NotTls {
 public:
  explicit NotTls(std::string answer, std::uint16_t forward_first = 0)
      : answer_(std::move(answer)), forward_first_(forward_first) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 64);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        if (forward_first_ > 0 && forwarded_ < 1) {
          ++forwarded_;
          forward(c);
          ::close(c);
          continue;
        }
        pollfd q{c, POLLIN, 0};
        char hello[2048];
        if (::poll(&q, 1, 2000) > 0 && ::recv(c, hello, sizeof hello, 0) > 0 && !answer_.empty()) {
          (void)::send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
        }
        ::close(c);
      }
    });
  }
  ~NotTls() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/"; }

 private:
  // Both ways until either side closes.
  void forward(int c) {
    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(forward_first_);
    if (::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      pollfd both[2] = {{c, POLLIN, 0}, {up, POLLIN, 0}};
      char buffer[16384];
      for (bool open = true; open && !stop_;) {
        if (::poll(both, 2, 50) <= 0) continue;
        for (int i = 0; i < 2 && open; ++i) {
          if (both[i].revents == 0) continue;
          const ssize_t n = ::recv(both[i].fd, buffer, sizeof buffer, 0);
          open = n > 0 && ::send(both[1 - i].fd, buffer, std::size_t(n), MSG_NOSIGNAL) == n;
        }
      }
    }
    ::close(up);
  }

  std::string answer_;
  std::uint16_t forward_first_ = 0;
  int forwarded_ = 0;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(ClientTls, garbage_or_a_close_instead_of_a_server_hello_is_a_clear_failure) {
  {
    NotTls server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
    const ClientRun run = run_client({"-n", "5", "-k", server.url()});
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("TLS handshake with 127.0.0.1"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("failed: "), std::string::npos) << run.err;
  }
  {
    NotTls server("");
    const ClientRun run = run_client({"-n", "5", "-k", server.url()});
    EXPECT_EQ(run.exit_code, 1) << run.err;
    EXPECT_NE(run.err.find("closed the connection"), std::string::npos) << run.err;
  }
}

TEST(ClientTls, handshakes_that_fail_during_the_run_are_tls_errors_and_the_worker_gives_up) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  // The start-up check goes through to nginx; every connection of the run
  // gets an HTTP answer to its ClientHello.
  NotTls server("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", nginx.port());
  const ClientRun run = run_client({"-c", "2", "-w", "0", "-d", "10s", "--json", "-k", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_GT(report.number("/errors/tls"), 0u);
  EXPECT_EQ(report.number("/requests"), 0u);
  // 200 handshakes in a row failed: the worker stopped (well before -d) and said why.
  EXPECT_NE(run.err.find("TLS handshakes in a row failed"), std::string::npos) << run.err;
}

TEST(ClientTls, a_server_that_never_answers_the_hello_times_out_at_the_connect_timeout) {
  // A listener nobody accepts on: the kernel completes the TCP handshake,
  // and the ClientHello waits in its queue forever.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 16), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const ClientRun run =
      run_client({"-n", "1", "-k", "--connect-timeout", "300ms", "https://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/"});
  ::close(fd);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("no answer within the connect timeout"), std::string::npos) << run.err;
}

TEST(ClientTls, a_unix_socket_is_loaded_with_the_urls_host_and_path) {
  NEEDS_NGINX();
  Nginx nginx({.unix_socket = true, .access_log = true});
  const ClientRun run = run_client({"-n", "30", "-c", "2", "--json", "--unix-socket", nginx.unix_socket_path(),
                                    "--expect-body", "vhost a", "http://a.test/anything"});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).number("/requests"), 30u);
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 30; })) << nginx.logged_requests();
  for (const Nginx::LogLine& line : nginx.access_log()) {
    EXPECT_EQ(line.host, "a.test");
    EXPECT_EQ(line.request, "GET /anything HTTP/1.1");
  }
}

}  // namespace
}  // namespace socket_test

namespace socket_test {
namespace {

// --tls13-ciphers and --ciphers (curl's) are what the handshake offers: the
// suite or cipher named alone is the one agreed, where OpenSSL's defaults
// would agree on AES-256-GCM.
TEST(ClientTls, the_ciphers_offered_are_the_ones_asked_for) {
  NEEDS_NGINX();
  Nginx nginx({.tls = true});
  const ClientRun tls13 = run_client({"-n", "20", "-c", "2", "--json", "--cacert", nginx.ca_file(),
                                      "--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256", nginx.url_for("localhost", "/")});
  ASSERT_EQ(tls13.exit_code, 0) << tls13.err << tls13.out;
  EXPECT_EQ(JsonReport(tls13).text("/tls/protocol"), "TLSv1.3");
  EXPECT_EQ(JsonReport(tls13).text("/tls/cipher"), "TLS_CHACHA20_POLY1305_SHA256");

  Nginx tls12({.tls = true, .tls12_only = true});
  const ClientRun run = run_client({"-n", "20", "-c", "2", "--json", "--cacert", tls12.ca_file(), "--ciphers",
                                    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305",
                                    tls12.url_for("localhost", "/")});
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
  EXPECT_EQ(JsonReport(run).text("/tls/protocol"), "TLSv1.2");
  EXPECT_NE(JsonReport(run).text("/tls/cipher").find("CHACHA20-POLY1305"), std::string::npos) << run.out;

  // Names OpenSSL does not know are a usage error, before any connection.
  const ClientRun bad = run_client({"--tls13-ciphers", "TLS_NOT_A_SUITE", nginx.url_for("localhost", "/")});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("TLS_NOT_A_SUITE"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace socket_test
