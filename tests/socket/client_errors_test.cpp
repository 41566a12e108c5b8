// The client's error classes that client_test.cpp does not reach (a failed
// reconnect is `connect`, a reset while waiting is `read`), its handling of
// interim 1xx responses, and a run ended by a signal: during the warm-up one
// line and exit 1, during the measured window a report of that window that
// says it was interrupted. Each against a real socket; no timing thresholds.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "support/background_client.hpp"
#include "support/canned_server.hpp"
#include "support/client_process.hpp"
#include "support/json_report.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

// A listener on 127.0.0.1 that answers the first request it reads with a
// response and then behaves as `Ending` says. Connections that send nothing
// (the client's reachability probe) are closed and not counted.
class OneShotServer {
 public:
  enum class Ending {
    // Close the listener, then answer with Connection: close and close:
    // the client's reconnect is refused.
    refuse_reconnects,
    // Read the request, then reset the connection (SO_LINGER 0) without
    // answering: the client is waiting for its response.
    reset_while_waiting,
  };

  explicit OneShotServer(Ending ending) : ending_(ending) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 16) != 0) {
      throw std::runtime_error("OneShotServer: bind/listen failed");
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~OneShotServer() {
    stop_ = true;
    if (listen_fd_ >= 0) ::shutdown(listen_fd_, SHUT_RDWR);  // wakes accept
    thread_.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }
  OneShotServer(const OneShotServer&) = delete;
  OneShotServer& operator=(const OneShotServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/"; }
  bool done() const { return done_; }

 private:
  void serve() {
    while (!stop_ && !done_) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, std::size_t(n));
      }
      if (request.find("\r\n\r\n") == std::string::npos) {  // the probe, or a peer that left
        ::close(fd);
        continue;
      }
      if (ending_ == Ending::refuse_reconnects) {
        ::close(listen_fd_);
        listen_fd_ = -1;
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        ::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(fd);
      } else {
        const linger abortive{1, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, sizeof abortive);
        ::close(fd);
      }
      done_ = true;
    }
  }

  const Ending ending_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

TEST(ClientErrors, a_refused_reconnect_is_a_connect_error) {
  OneShotServer server(OneShotServer::Ending::refuse_reconnects);
  const ClientRun run = run_client({"-n", "3", "-c", "1", "-d", "20s", "--json", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(server.done());
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 1u) << run.out;
  EXPECT_GE(report.number("/errors/connect"), 1u) << run.out;
  EXPECT_EQ(report.number("/errors/read"), 0u) << run.out;
  EXPECT_EQ(report.number("/errors/closed"), 0u) << run.out;
}

TEST(ClientErrors, a_reset_while_waiting_for_a_response_is_a_read_error) {
  OneShotServer server(OneShotServer::Ending::reset_while_waiting);
  // One request on one connection; the reset ends it. Later connects find
  // the listener still there but nobody answering: --timeout bounds them.
  const ClientRun run = run_client({"-n", "1", "-c", "1", "-d", "2s", "--timeout", "500ms", "--json", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(server.done());
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 0u) << run.out;
  EXPECT_GE(report.number("/errors/read"), 1u) << run.out;
  EXPECT_EQ(report.number("/errors/closed"), 0u) << run.out;
  EXPECT_EQ(report.number("/errors/parse"), 0u) << run.out;
}

TEST(ClientErrors, interim_1xx_responses_are_skipped_not_counted) {
  CannedServer server(
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!",
      CannedServer::After::keep_open);
  const ClientRun run =
      run_client({"-n", "20", "-c", "2", "--json", "--expect-body", "Hello, World!", server.url("/plaintext")});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 20u) << run.out;
  EXPECT_EQ(report.number("/errors_total"), 0u) << run.out;
}

std::string url(const ServerProcess& server) { return "http://127.0.0.1:" + std::to_string(server.port()) + "/plaintext"; }

TEST(ClientSignals, sigint_during_the_warm_up_is_one_line_and_exit_1) {
  ServerProcess server({"--shards", "1"});
  BackgroundClient client({"-c", "1", "-w", "60s", "-d", "60s", "--json", url(server)});
  // The warm-up is under way once the server has answered something.
  ASSERT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(metric::requests) >= 10; }));
  client.signal(SIGINT);
  EXPECT_EQ(client.wait(), 1) << client.err();
  EXPECT_NE(client.err().find("interrupted during the warm-up"), std::string::npos) << client.err();
  EXPECT_EQ(client.out(), "") << "no report: nothing was measured";
}

TEST(ClientSignals, sigterm_in_the_measured_window_reports_that_window_and_says_so) {
  // Scraped on a port of its own, so the scrapes are not requests it counts.
  ServerProcess server({"--shards", "1", "--metrics-address", "127.0.0.1:0"});
  ASSERT_TRUE(server.metrics_port());
  const std::uint16_t metrics = *server.metrics_port();
  BackgroundClient client({"-c", "1", "-w", "0", "-d", "60s", "--json", url(server)});
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(metric::requests) >= 50; }));
  client.signal(SIGTERM);
  ASSERT_EQ(client.wait(), 0) << client.err();
  const std::string out = client.out();
  const JsonReport report(out, client.err());
  EXPECT_TRUE(report.flag("/interrupted")) << out;
  EXPECT_EQ(report.number("/errors_total"), 0u) << out;
  // One connection, one request at a time: the client counted every answer
  // the server gave but perhaps the one in flight at the signal.
  const auto answered = std::uint64_t(scrape_metrics(metrics).value(metric::requests));
  const std::uint64_t reported = report.number("/requests");
  EXPECT_GE(reported + 1, answered);
  EXPECT_LE(reported, answered);
  EXPECT_NE(client.err().find("interrupted"), std::string::npos) << client.err();
}

}  // namespace
}  // namespace socket_test
