#pragma once
// The server's per-shard counters. Each shard writes only its own; /metrics
// sums every shard's on read (see core/metrics/counter.hpp for why that
// needs no lock and no atomic read-modify-write).

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "core/auth/jwt.hpp"
#include "core/io/completion.hpp"
#include "core/http/request_parser.hpp"
#include "core/http/status.hpp"
#include "core/metrics/counter.hpp"
#include "core/tls/session.hpp"
#include "server/db/counters.hpp"

namespace ringhttp::server {

// One response counter per status of http::statuses (core/http/status.hpp),
// at its index there, and a last one for any other.
inline constexpr std::size_t counted_statuses = http::statuses.size() + 1;
using http::status_index;

// HTTPS handshakes that failed, by reason: the session's own classes
// (tls::Failure, from 1), then the shard's.
inline constexpr std::size_t tls_timeout = tls::failure_kinds;      // past --tls-handshake-timeout-ms
inline constexpr std::size_t tls_closed = tls::failure_kinds + 1;   // the peer left (FIN or reset)
inline constexpr std::size_t tls_refused = tls::failure_kinds + 2;  // over Shard::tls_handshakes_max
inline constexpr std::size_t tls_handshake_failure_kinds = tls::failure_kinds + 3;

struct ShardCounters {
  using Counter = metrics::Counter;
  Counter requests;
  std::array<Counter, counted_statuses> responses;
  Counter connections_accepted;
  Counter connections_closed;
  Counter sends;
  Counter sends_short;
  Counter sends_again;  // nothing written (EAGAIN): made again
  Counter cancellations;         // cancels the shard asked for when closing a connection
  Counter operations_cancelled;  // cancels the backend carried out (completed 0)
  Counter bytes_received;
  Counter bytes_sent;
  std::array<Counter, http::parse_error_kinds> parse_errors;
  Counter timeouts_header;
  Counter timeouts_idle;
  Counter timeouts_body;
  Counter timeouts_send;
  Counter connections_reclaimed;
  Counter accept_errors_fd_limit;
  Counter accept_errors_memory;  // -ENOMEM / -ENOBUFS: backed off like fd_limit
  Counter accept_errors_table_full;
  Counter accept_errors_other;
  Counter recv_no_buffers;
  Counter recv_bundles;  // receive completions that took more than one provided buffer (recv-bundle)
  Counter input_overflow;
  metrics::Gauge input_buffers_held;  // provided receive buffers held by paused connections now
  metrics::Gauge spill_blocks_used;   // spill blocks holding paused connections' input now
  Counter stale_completions;
  Counter sq_full_flushes;
  Counter zc_notifications;
  Counter zc_copied;
  std::array<Counter, std::size_t(auth::TokenError::count_)> token_refusals;  // none's slot stays 0
  Counter rate_limited;
  Counter rate_limit_evictions;       // clients forgotten because their set of the limiter's table was full
  metrics::Gauge output_blocks_lent;  // output blocks lent to connections now
  Counter output_block_waits;         // connections that found every block lent and waited
  Counter output_block_refusals;      // closed unanswered for want of a block (waited too long, or a 408 unsent)
  metrics::Gauge held_rings_lent;     // rings of held input lent to paused connections now
  db::Counters db;                    // the shard's database connections (--db)
  // HTTPS.
  Counter tls_handshakes_full;
  Counter tls_handshakes_resumed;
  std::array<Counter, tls_handshake_failure_kinds> tls_handshake_failures;  // [0] stays 0
  Counter tls_failures;              // connections whose TLS failed after the handshake
  metrics::Gauge tls_handshakes_inflight;
  Counter tls_plaintext_in;          // bytes the sessions decrypted
  Counter tls_plaintext_out;         // bytes they encrypted
  // The system calls the shard's backend made, by kind: its own counts,
  // published once its backend is set up (null before).
  std::atomic<const io::SyscallCounts*> syscalls{nullptr};
};

// Renders the sum over `shards` in Prometheus text format into `out`.
void render_metrics(std::span<const ShardCounters* const> shards, std::string& out);

// The metrics as a Markdown table (name, type, label and its values,
// help), for docs/SERVER.md: tools/docs_tables writes it there.
std::string metrics_reference();

}  // namespace ringhttp::server
