#pragma once
// GET /metrics on an address of its own (--metrics-address), so that the
// counters, token refusals by kind among them, are told only to whoever can
// reach that address and not to every client of the main port.
//
// One thread serves one connection at a time, in blocking steps that are
// each bounded by poll() and a deadline: a scraper asks every few seconds,
// and that needs no more. It never slows a shard: it only reads their
// counters, which any thread may (core/metrics/counter.hpp), and writes
// none of them, since each has exactly one writer, its shard.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>

#include "core/net/address.hpp"

namespace ringhttp::server {

struct ShardCounters;

// Connections the kernel queues while one is served: a few scrapers at once.
inline constexpr int metrics_listen_backlog = 16;
// After the answer, a client's unread input is drained for this long and up
// to this much before the close: closing with input unread resets the
// connection, and a reset can destroy the answer before the client reads it.
inline constexpr std::uint32_t metrics_linger_ms = 1'000;
inline constexpr std::size_t metrics_linger_bytes_max = 64 * 1024;
// The pause before accepting again when the process is out of descriptors
// or memory, instead of spinning on the same error.
inline constexpr std::uint32_t metrics_accept_backoff_ms = 100;

class MetricsEndpoint {
 public:
  // `shards` must outlive the endpoint. `timeout_ms` bounds the arrival of
  // a client's request, and then again the departure of its answer.
  MetricsEndpoint(std::span<const ShardCounters* const> shards, std::uint32_t timeout_ms);
  ~MetricsEndpoint();  // stops and joins the thread if it still runs
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Listens on `address` (port 0: the kernel picks one). Called before any
  // thread starts, so that a bad or busy address stops the server at once.
  // Returns an empty string, or why it failed.
  std::string open(const net::Address& address);
  // The address really listened on, its port resolved.
  const net::Address& address() const { return address_; }

  void start();
  // Wakes the thread wherever it waits; it closes its client and returns.
  void request_stop();
  void join();

 private:
  using Clock = std::chrono::steady_clock;
  enum class Wait : std::uint8_t { ready, timed_out, stopping };

  // Waits for `events` on `fd` until `deadline` (time_point::max(): no
  // deadline), or until request_stop().
  Wait wait_for(int fd, short events, Clock::time_point deadline) const;
  void run();
  void serve(int client);
  bool send_answer(int client);
  void linger(int client) const;

  std::span<const ShardCounters* const> shards_;
  std::chrono::milliseconds timeout_;
  net::Address address_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd: readable once request_stop() has run
  std::thread thread_;
  std::string metrics_text_;  // the exposition, rendered per scrape into memory kept between them
  std::string answer_;        // the bytes of the answer being sent
};

}  // namespace ringhttp::server
