// A deliberately misbehaving HTTP server for client tests: it answers every
// request it reads with the same canned bytes, then closes or keeps the
// connection open, as the test asks. Runs on its own thread on 127.0.0.1.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace socket_test {

class CannedServer {
 public:
  enum class After { keep_open, close };
  // As `reply`: answer each request with its own body (200, Content-Length).
  static constexpr const char* echo = "(echo)";
  // As `reply`: answer each request with its Host header's value as the body.
  static constexpr const char* echo_host = "(host)";
  // `reply` is sent once per request read (a request ends at its blank line;
  // bodies are not expected). With `reply` empty it never answers.
  CannedServer(std::string reply, After after);
  // Before answering request number `after_requests` (counted from 1 over
  // all connections), sleep `stall_ms`: a server that stops for a while.
  void stall_once(std::uint32_t after_requests, std::uint32_t stall_ms) {
    stall_after_ = after_requests;
    stall_ms_ = stall_ms;
  }
  // Sleep `delay_ms` before every answer: a server whose round trip is
  // at least that.
  void delay_each(std::uint32_t delay_ms) { delay_ms_ = delay_ms; }
  ~CannedServer();
  CannedServer(const CannedServer&) = delete;
  CannedServer& operator=(const CannedServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url(const std::string& path = "/") const;

 private:
  void serve();
  void serve_connection(int fd);

  const std::string reply_;
  const After after_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> answered_{0};
  std::atomic<std::uint32_t> stall_after_{0};
  std::atomic<std::uint32_t> stall_ms_{0};
  std::atomic<std::uint32_t> delay_ms_{0};
  std::thread thread_;
};

}  // namespace socket_test
