#pragma once
// The server's per-shard counters. Each shard writes only its own; /metrics
// sums every shard's on read (see core/metrics/counter.hpp for why that
// needs no lock and no atomic read-modify-write).

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "core/http/request_parser.hpp"
#include "core/metrics/counter.hpp"

namespace ringhttp::server {

// The statuses this server can send; one counter each.
inline constexpr std::array<std::uint16_t, 13> counted_statuses = {100, 200, 400, 404, 405, 408, 413,
                                                                   414, 431, 500, 501, 503, 0};

constexpr std::size_t status_index(std::uint16_t status) {
  for (std::size_t i = 0; i + 1 < counted_statuses.size(); ++i) {
    if (counted_statuses[i] == status) return i;
  }
  return counted_statuses.size() - 1;  // "other": a status added without a counter
}

struct ShardCounters {
  using Counter = metrics::Counter;
  Counter requests;
  std::array<Counter, counted_statuses.size()> responses;
  Counter connections_accepted;
  Counter connections_closed;
  Counter sends;
  Counter sends_short;
  Counter cancellations;
  Counter bytes_received;
  Counter bytes_sent;
  std::array<Counter, http::parse_error_kinds> parse_errors;
  Counter timeouts_header;
  Counter timeouts_idle;
  Counter accept_errors_fd_limit;
  Counter accept_errors_table_full;
  Counter accept_errors_other;
  Counter recv_no_buffers;
  Counter input_overflow;
  Counter stale_completions;
  Counter sq_full_flushes;
};

// Renders the sum over `shards` in Prometheus text format into `out`.
void render_metrics(std::span<const ShardCounters* const> shards, std::string& out);

}  // namespace ringhttp::server
