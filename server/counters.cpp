#include "server/counters.hpp"

#include "core/metrics/prometheus.hpp"

namespace ringhttp::server {
namespace {

template <typename Pick>
std::uint64_t sum(std::span<const ShardCounters* const> shards, Pick pick) {
  std::uint64_t total = 0;
  for (const ShardCounters* shard : shards) total += pick(*shard).read();
  return total;
}

}  // namespace

void render_metrics(std::span<const ShardCounters* const> shards, std::string& out) {
  metrics::PrometheusWriter w(out);
  auto counter = [&](const char* name, const char* help, auto pick) {
    w.family(name, "counter", help);
    w.sample(name, sum(shards, pick));
  };
  counter("ringhttp_requests_total", "Requests read completely.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.requests; });

  w.family("ringhttp_responses_total", "counter", "Responses queued, by status.");
  for (std::size_t i = 0; i < counted_statuses; ++i) {
    const std::uint64_t n =
        sum(shards, [i](const ShardCounters& c) -> const metrics::Counter& { return c.responses[i]; });
    const std::string status = i < http::statuses.size() ? std::to_string(http::statuses[i].code) : "other";
    w.sample("ringhttp_responses_total", "status", status, n);
  }

  const std::uint64_t accepted =
      sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.connections_accepted; });
  const std::uint64_t closed =
      sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.connections_closed; });
  w.family("ringhttp_connections_accepted_total", "counter", "Connections accepted.");
  w.sample("ringhttp_connections_accepted_total", accepted);
  w.family("ringhttp_connections_active", "gauge", "Connections open now.");
  w.sample("ringhttp_connections_active", accepted >= closed ? accepted - closed : 0);
  w.family("ringhttp_connections_closed_total", "counter", "Connections closed and their slots freed.");
  w.sample("ringhttp_connections_closed_total", closed);

  counter("ringhttp_sends_total", "Send operations submitted (one per corked batch of responses, plus resumptions).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.sends; });
  counter("ringhttp_sends_short_total", "Sends that wrote less than asked and were resumed.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.sends_short; });
  counter("ringhttp_cancellations_total", "Operations cancelled because the peer went away or timed out.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.cancellations; });
  counter("ringhttp_bytes_received_total", "Bytes received.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.bytes_received; });
  counter("ringhttp_bytes_sent_total", "Bytes sent.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.bytes_sent; });

  w.family("ringhttp_parse_errors_total", "counter", "Requests refused, by kind.");
  for (std::size_t i = 1; i < http::parse_error_kinds; ++i) {
    const std::uint64_t n =
        sum(shards, [i](const ShardCounters& c) -> const metrics::Counter& { return c.parse_errors[i]; });
    w.sample("ringhttp_parse_errors_total", "kind", http::metric_name(http::ParseError(i)), n);
  }

  w.family("ringhttp_timeouts_total", "counter", "Connections closed by a timeout, by kind.");
  w.sample("ringhttp_timeouts_total", "kind", "header",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.timeouts_header; }));
  w.sample("ringhttp_timeouts_total", "kind", "idle",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.timeouts_idle; }));
  w.sample("ringhttp_timeouts_total", "kind", "body",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.timeouts_body; }));
  w.sample("ringhttp_timeouts_total", "kind", "send",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.timeouts_send; }));

  w.family("ringhttp_accept_errors_total", "counter", "Accepts that failed or were refused, by cause.");
  w.sample("ringhttp_accept_errors_total", "kind", "fd_limit",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.accept_errors_fd_limit; }));
  w.sample("ringhttp_accept_errors_total", "kind", "memory",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.accept_errors_memory; }));
  w.sample("ringhttp_accept_errors_total", "kind", "table_full",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.accept_errors_table_full; }));
  w.sample("ringhttp_accept_errors_total", "kind", "other",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.accept_errors_other; }));

  counter("ringhttp_connections_reclaimed_total",
          "Idle connections closed, oldest first, to make room for a new one when the table was full.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.connections_reclaimed; });
  counter("ringhttp_recv_no_buffers_total", "Receives that found the provided-buffer ring empty (-ENOBUFS).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.recv_no_buffers; });
  counter("ringhttp_recv_bundles_total",
          "Receive completions that took more than one provided buffer at once (--uring recv-bundle).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.recv_bundles; });
  counter("ringhttp_input_overflow_total", "Connections closed because input kept arriving while reading was paused.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.input_overflow; });
  w.family("ringhttp_input_buffers_held", "gauge",
           "Provided receive buffers held now by connections whose input is paused (at most half the pool).");
  w.sample("ringhttp_input_buffers_held",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.input_buffers_held; }));
  w.family("ringhttp_input_spill_blocks_used", "gauge",
           "Spill blocks holding paused connections' input now (input beyond their share of receive buffers).");
  w.sample("ringhttp_input_spill_blocks_used",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.spill_blocks_used; }));
  counter("ringhttp_stale_completions_total", "Completions for a slot already reused (should stay 0).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.stale_completions; });
  counter("ringhttp_sq_full_flushes_total", "Times a full submission queue was flushed to make room.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.sq_full_flushes; });
  counter("ringhttp_zc_notifications_total",
          "Zero-copy send notifications: the kernel let go of a send's pages (one per send with --send zc).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.zc_notifications; });
  counter("ringhttp_zc_copied_total",
          "Zero-copy sends whose data the kernel copied anyway (IORING_NOTIF_USAGE_ZC_COPIED, as on loopback; "
          "counted where the kernel reports it, 6.2 on).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.zc_copied; });

  w.family("ringhttp_token_refusals_total", "counter", "Bearer tokens refused (401), by the check that failed.");
  for (std::size_t i = 1; i < std::size_t(auth::TokenError::count_); ++i) {
    const std::uint64_t n =
        sum(shards, [i](const ShardCounters& c) -> const metrics::Counter& { return c.token_refusals[i]; });
    w.sample("ringhttp_token_refusals_total", "kind", auth::metric_name(auth::TokenError(i)), n);
  }
  counter("ringhttp_rate_limited_total", "Requests refused by the rate limiter (429).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.rate_limited; });
  w.family("ringhttp_output_blocks_lent", "gauge",
           "Output blocks (the parser's buffers, a response queue and its iovecs) lent now to connections with a "
           "request in progress or output to make or send.");
  w.sample("ringhttp_output_blocks_lent",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.output_blocks_lent; }));
  w.family("ringhttp_held_input_rings_lent", "gauge",
           "Rings of received chunks lent now to connections whose input is paused.");
  w.sample("ringhttp_held_input_rings_lent",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.held_rings_lent; }));
  counter("ringhttp_output_block_waits_total",
          "Connections that found every output block lent and waited for one, input paused.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.output_block_waits; });
  counter("ringhttp_output_block_refusals_total",
          "Connections closed unanswered because every output block stayed lent: waiting longer than "
          "--header-timeout-ms, or owed a 408 with none to send it in.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.output_block_refusals; });
  w.family("ringhttp_db_connections_up", "gauge",
           "Database connections (--db) connected, with their statements prepared, ready for queries now.");
  w.sample("ringhttp_db_connections_up",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.db.links_up; }));
  w.family("ringhttp_db_queries_in_flight", "gauge",
           "Database queries sent and not yet answered now (at most --db-queue per shard).");
  w.sample("ringhttp_db_queries_in_flight",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.db.queries_in_flight; }));
  counter("ringhttp_db_queries_total", "Database queries sent.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.db.queries; });
  counter("ringhttp_db_sends_total",
          "Writes of queries to the database: one per batch and connection where the pool speaks the query "
          "protocol itself, one per query through libpq (TLS connections).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.db.sends; });
  w.family("ringhttp_db_refusals_total", "counter",
           "Requests answered 503 at once, without a query, by reason: the shard's queue was full, or no "
           "database connection was ready.");
  w.sample("ringhttp_db_refusals_total", "reason", "queue_full",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.refused_queue_full; }));
  w.sample("ringhttp_db_refusals_total", "reason", "unavailable",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.refused_unavailable; }));
  w.family("ringhttp_db_errors_total", "counter",
           "Database failures, by class: a connection attempt failed (connect), a ready connection failed or was "
           "closed by the server (lost), a query or connection attempt outlived its deadline (timeout), the "
           "database refused a query (query).");
  w.sample("ringhttp_db_errors_total", "class", "connect",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.errors_connect; }));
  w.sample("ringhttp_db_errors_total", "class", "lost",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.errors_lost; }));
  w.sample("ringhttp_db_errors_total", "class", "timeout",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.errors_timeout; }));
  w.sample("ringhttp_db_errors_total", "class", "query",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.db.errors_query; }));
  w.family("ringhttp_syscalls_total", "counter",
           "System calls the shards' backends made, by call: io_uring_enter on io_uring (and close, or with "
           "fixed-files io_uring_register, per connection closed); epoll_wait, recv, send, accept and the rest on "
           "epoll (--backend).");
  for (std::size_t i = 0; i < io::syscall_kinds; ++i) {
    std::uint64_t n = 0;
    for (const ShardCounters* shard : shards) {
      if (const io::SyscallCounts* s = shard->syscalls.load(std::memory_order_acquire); s != nullptr) n += (*s)[i];
    }
    w.sample("ringhttp_syscalls_total", "call", io::syscall_name(io::Syscall(i)), n);
  }
  counter("ringhttp_rate_limit_evictions_total",
          "Clients the rate limiter forgot (least recently used first) because their set of its table was full; "
          "a forgotten client starts again with a full bucket.",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.rate_limit_evictions; });

  counter("ringhttp_tls_handshakes_total", "TLS handshakes completed, full ones (a new session).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.tls_handshakes_full; });
  counter("ringhttp_tls_handshakes_resumed_total", "TLS handshakes completed by resuming a session (a ticket).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.tls_handshakes_resumed; });
  w.family("ringhttp_tls_handshakes_failed_total", "counter", "TLS handshakes that did not complete, by reason.");
  for (std::size_t i = 1; i < tls_handshake_failure_kinds; ++i) {
    const char* reason = i == tls_timeout  ? "timeout"
                         : i == tls_closed ? "closed"
                         : i == tls_refused ? "refused"
                                            : tls::failure_name(tls::Failure(i));
    w.sample("ringhttp_tls_handshakes_failed_total", "reason", reason,
             sum(shards, [i](const ShardCounters& c) -> const metrics::Counter& { return c.tls_handshake_failures[i]; }));
  }
  counter("ringhttp_tls_failures_total", "Connections whose TLS failed after the handshake (a bad record, an alert).",
          [](const ShardCounters& c) -> const metrics::Counter& { return c.tls_failures; });
  w.family("ringhttp_tls_handshakes_in_progress", "gauge", "TLS handshakes in progress now.");
  w.sample("ringhttp_tls_handshakes_in_progress",
           sum(shards, [](const ShardCounters& c) -> const metrics::Gauge& { return c.tls_handshakes_inflight; }));
  w.family("ringhttp_tls_plaintext_bytes_total", "counter",
           "Bytes of plaintext TLS carried, by direction (the wire's are ringhttp_bytes_*_total).");
  w.sample("ringhttp_tls_plaintext_bytes_total", "direction", "in",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.tls_plaintext_in; }));
  w.sample("ringhttp_tls_plaintext_bytes_total", "direction", "out",
           sum(shards, [](const ShardCounters& c) -> const metrics::Counter& { return c.tls_plaintext_out; }));
}

}  // namespace ringhttp::server
