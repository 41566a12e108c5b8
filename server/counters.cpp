#include "server/counters.hpp"

#include <cassert>
#include <string_view>

#include "core/metrics/prometheus.hpp"

namespace ringhttp::server {
namespace {

// The one table of the server's metrics: each family's name, type and
// help, the label it varies by, and how each of its samples is read from
// one shard's counters. /metrics is this table rendered, every sample the
// sum over the shards.
using Read = std::uint64_t (*)(const ShardCounters&);
using ReadAt = std::uint64_t (*)(const ShardCounters&, std::size_t);
using LabelAt = std::string (*)(std::size_t);

// A sample of a family with a fixed set of label values.
struct Sample {
  std::string_view value;
  Read read;
};

struct Family {
  std::string_view name;
  std::string_view type;
  std::string_view help;
  // One of three shapes: one sample without a label (read); a fixed set
  // (label and samples); one per index in [first, end) of an enum or an
  // array of counters (label, first, end, label_at and read_at).
  Read read = nullptr;
  std::string_view label = {};
  std::span<const Sample> samples = {};
  std::size_t first = 0;
  std::size_t end = 0;
  LabelAt label_at = nullptr;
  ReadAt read_at = nullptr;
};

constexpr std::string_view counter = "counter";
constexpr std::string_view gauge = "gauge";

const Sample timeouts[] = {
    {"header", [](const ShardCounters& c) { return c.timeouts_header.read(); }},
    {"idle", [](const ShardCounters& c) { return c.timeouts_idle.read(); }},
    {"body", [](const ShardCounters& c) { return c.timeouts_body.read(); }},
    {"send", [](const ShardCounters& c) { return c.timeouts_send.read(); }},
};
const Sample accept_errors[] = {
    {"fd_limit", [](const ShardCounters& c) { return c.accept_errors_fd_limit.read(); }},
    {"memory", [](const ShardCounters& c) { return c.accept_errors_memory.read(); }},
    {"table_full", [](const ShardCounters& c) { return c.accept_errors_table_full.read(); }},
    {"other", [](const ShardCounters& c) { return c.accept_errors_other.read(); }},
};
const Sample db_refusals[] = {
    {"queue_full", [](const ShardCounters& c) { return c.db.refused_queue_full.read(); }},
    {"unavailable", [](const ShardCounters& c) { return c.db.refused_unavailable.read(); }},
};
const Sample db_errors[] = {
    {"connect", [](const ShardCounters& c) { return c.db.errors_connect.read(); }},
    {"lost", [](const ShardCounters& c) { return c.db.errors_lost.read(); }},
    {"timeout", [](const ShardCounters& c) { return c.db.errors_timeout.read(); }},
    {"query", [](const ShardCounters& c) { return c.db.errors_query.read(); }},
};
const Sample tls_plaintext[] = {
    {"in", [](const ShardCounters& c) { return c.tls_plaintext_in.read(); }},
    {"out", [](const ShardCounters& c) { return c.tls_plaintext_out.read(); }},
};

// Connections open now, per shard: closed is read first, so that the
// accepted count read after it is never below it.
std::uint64_t active(const ShardCounters& c) {
  const std::uint64_t closed = c.connections_closed.read();
  const std::uint64_t accepted = c.connections_accepted.read();
  return accepted >= closed ? accepted - closed : 0;
}

const Family families[] = {
    {.name = "ringhttp_requests_total", .type = counter, .help = "Requests read completely.",
     .read = [](const ShardCounters& c) { return c.requests.read(); }},
    {.name = "ringhttp_responses_total", .type = counter, .help = "Responses queued, by status.",
     .label = "status", .first = 0, .end = counted_statuses,
     .label_at = [](std::size_t i) {
       return i < http::statuses.size() ? std::to_string(http::statuses[i].code) : std::string("other");
     },
     .read_at = [](const ShardCounters& c, std::size_t i) { return c.responses[i].read(); }},
    {.name = "ringhttp_connections_accepted_total", .type = counter, .help = "Connections accepted.",
     .read = [](const ShardCounters& c) { return c.connections_accepted.read(); }},
    {.name = "ringhttp_connections_active", .type = gauge, .help = "Connections open now.", .read = active},
    {.name = "ringhttp_connections_closed_total", .type = counter, .help = "Connections closed and their slots freed.",
     .read = [](const ShardCounters& c) { return c.connections_closed.read(); }},
    {.name = "ringhttp_sends_total", .type = counter,
     .help = "Send operations submitted (one per corked batch of responses, plus resumptions).",
     .read = [](const ShardCounters& c) { return c.sends.read(); }},
    {.name = "ringhttp_sends_short_total", .type = counter, .help = "Sends that wrote less than asked and were resumed.",
     .read = [](const ShardCounters& c) { return c.sends_short.read(); }},
    {.name = "ringhttp_sends_again_total", .type = counter,
     .help = "Sends that wrote nothing and were made again (EAGAIN: a wake-up found the socket still full).",
     .read = [](const ShardCounters& c) { return c.sends_again.read(); }},
    {.name = "ringhttp_cancellations_total", .type = counter,
     .help = "Cancels the shards asked for when closing a connection (the peer went away or timed out): one per "
             "operation it had in flight, and again for one a cancel missed.",
     .read = [](const ShardCounters& c) { return c.cancellations.read(); }},
    {.name = "ringhttp_operations_cancelled_total", .type = counter,
     .help = "Operations the backend cancelled: each cancel that found its operation still waiting and stopped it "
             "(io_uring: an ASYNC_CANCEL that completed 0; epoll: a waiting receive, send, connect or accept taken "
             "back), for a connection or the listener.",
     .read = [](const ShardCounters& c) { return c.operations_cancelled.read(); }},
    {.name = "ringhttp_bytes_received_total", .type = counter, .help = "Bytes received.",
     .read = [](const ShardCounters& c) { return c.bytes_received.read(); }},
    {.name = "ringhttp_bytes_sent_total", .type = counter, .help = "Bytes sent.",
     .read = [](const ShardCounters& c) { return c.bytes_sent.read(); }},
    {.name = "ringhttp_parse_errors_total", .type = counter, .help = "Requests refused, by kind.", .label = "kind",
     .first = 1, .end = http::parse_error_kinds,
     .label_at = [](std::size_t i) { return std::string(http::metric_name(http::ParseError(i))); },
     .read_at = [](const ShardCounters& c, std::size_t i) { return c.parse_errors[i].read(); }},
    {.name = "ringhttp_timeouts_total", .type = counter, .help = "Connections closed by a timeout, by kind.",
     .label = "kind", .samples = timeouts},
    {.name = "ringhttp_accept_errors_total", .type = counter, .help = "Accepts that failed or were refused, by cause.",
     .label = "kind", .samples = accept_errors},
    {.name = "ringhttp_connections_reclaimed_total", .type = counter,
     .help = "Idle connections closed, oldest first, to make room for a new one when the table was full.",
     .read = [](const ShardCounters& c) { return c.connections_reclaimed.read(); }},
    {.name = "ringhttp_recv_no_buffers_total", .type = counter,
     .help = "Receives that found the provided-buffer ring empty (-ENOBUFS).",
     .read = [](const ShardCounters& c) { return c.recv_no_buffers.read(); }},
    {.name = "ringhttp_recv_bundles_total", .type = counter,
     .help = "Receive completions that took more than one provided buffer at once (--uring recv-bundle).",
     .read = [](const ShardCounters& c) { return c.recv_bundles.read(); }},
    {.name = "ringhttp_input_overflow_total", .type = counter,
     .help = "Connections closed because input kept arriving while reading was paused.",
     .read = [](const ShardCounters& c) { return c.input_overflow.read(); }},
    {.name = "ringhttp_input_buffers_held", .type = gauge,
     .help = "Provided receive buffers held now by connections whose input is paused (at most half the pool).",
     .read = [](const ShardCounters& c) { return c.input_buffers_held.read(); }},
    {.name = "ringhttp_input_spill_blocks_used", .type = gauge,
     .help = "Spill blocks holding paused connections' input now (input beyond their share of receive buffers).",
     .read = [](const ShardCounters& c) { return c.spill_blocks_used.read(); }},
    {.name = "ringhttp_stale_completions_total", .type = counter,
     .help = "Completions for a slot already reused (should stay 0).",
     .read = [](const ShardCounters& c) { return c.stale_completions.read(); }},
    {.name = "ringhttp_sq_full_flushes_total", .type = counter,
     .help = "Times a full submission queue was flushed to make room.",
     .read = [](const ShardCounters& c) { return c.sq_full_flushes.read(); }},
    {.name = "ringhttp_zc_notifications_total", .type = counter,
     .help = "Zero-copy send notifications: the kernel let go of a send's pages (one per send with --send zc).",
     .read = [](const ShardCounters& c) { return c.zc_notifications.read(); }},
    {.name = "ringhttp_zc_copied_total", .type = counter,
     .help = "Zero-copy sends whose data the kernel copied anyway (IORING_NOTIF_USAGE_ZC_COPIED, as on loopback; "
             "counted where the kernel reports it, 6.2 on).",
     .read = [](const ShardCounters& c) { return c.zc_copied.read(); }},
    {.name = "ringhttp_token_refusals_total", .type = counter,
     .help = "Bearer tokens refused (401), by the check that failed.", .label = "kind", .first = 1,
     .end = std::size_t(auth::TokenError::count_),
     .label_at = [](std::size_t i) { return std::string(auth::metric_name(auth::TokenError(i))); },
     .read_at = [](const ShardCounters& c, std::size_t i) { return c.token_refusals[i].read(); }},
    {.name = "ringhttp_rate_limited_total", .type = counter, .help = "Requests refused by the rate limiter (429).",
     .read = [](const ShardCounters& c) { return c.rate_limited.read(); }},
    {.name = "ringhttp_output_blocks_lent", .type = gauge,
     .help = "Output blocks (the parser's buffers, a response queue and its iovecs) lent now to connections with a "
             "request in progress or output to make or send.",
     .read = [](const ShardCounters& c) { return c.output_blocks_lent.read(); }},
    {.name = "ringhttp_held_input_rings_lent", .type = gauge,
     .help = "Rings of received chunks lent now to connections whose input is paused.",
     .read = [](const ShardCounters& c) { return c.held_rings_lent.read(); }},
    {.name = "ringhttp_output_block_waits_total", .type = counter,
     .help = "Connections that found every output block lent and waited for one, input paused.",
     .read = [](const ShardCounters& c) { return c.output_block_waits.read(); }},
    {.name = "ringhttp_output_block_refusals_total", .type = counter,
     .help = "Connections closed unanswered because every output block stayed lent: waiting longer than "
             "--header-timeout-ms, or owed a 408 with none to send it in.",
     .read = [](const ShardCounters& c) { return c.output_block_refusals.read(); }},
    {.name = "ringhttp_db_connections_up", .type = gauge,
     .help = "Database connections (--db) connected, with their statements prepared, ready for queries now.",
     .read = [](const ShardCounters& c) { return c.db.links_up.read(); }},
    {.name = "ringhttp_db_queries_in_flight", .type = gauge,
     .help = "Database queries sent and not yet answered now (at most --db-queue per shard).",
     .read = [](const ShardCounters& c) { return c.db.queries_in_flight.read(); }},
    {.name = "ringhttp_db_queries_total", .type = counter, .help = "Database queries sent.",
     .read = [](const ShardCounters& c) { return c.db.queries.read(); }},
    {.name = "ringhttp_db_sends_total", .type = counter,
     .help = "Writes of queries to the database: one per batch and connection where the pool speaks the query "
             "protocol itself, one per query through libpq (TLS connections).",
     .read = [](const ShardCounters& c) { return c.db.sends.read(); }},
    {.name = "ringhttp_db_refusals_total", .type = counter,
     .help = "Requests answered 503 at once, without a query, by reason: the shard's queue was full, or no "
             "database connection was ready.",
     .label = "reason", .samples = db_refusals},
    {.name = "ringhttp_db_errors_total", .type = counter,
     .help = "Database failures, by class: a connection attempt failed (connect), a ready connection failed or was "
             "closed by the server (lost), a query or connection attempt outlived its deadline (timeout), the "
             "database refused a query (query).",
     .label = "class", .samples = db_errors},
    {.name = "ringhttp_syscalls_total", .type = counter,
     .help = "System calls the shards' backends made, by call: io_uring_enter on io_uring (and close, or with "
             "fixed-files io_uring_register, per connection closed); epoll_wait, recv, send, accept and the rest on "
             "epoll (--backend).",
     .label = "call", .first = 0, .end = io::syscall_kinds,
     .label_at = [](std::size_t i) { return std::string(io::syscall_name(io::Syscall(i))); },
     .read_at = [](const ShardCounters& c, std::size_t i) -> std::uint64_t {
       const io::SyscallCounts* s = c.syscalls.load(std::memory_order_acquire);
       return s != nullptr ? (*s)[i] : 0;  // null until the shard's backend is set up
     }},
    {.name = "ringhttp_rate_limit_evictions_total", .type = counter,
     .help = "Clients the rate limiter forgot (least recently used first) because their set of its table was full; "
             "a forgotten client starts again with a full bucket.",
     .read = [](const ShardCounters& c) { return c.rate_limit_evictions.read(); }},
    {.name = "ringhttp_tls_handshakes_total", .type = counter,
     .help = "TLS handshakes completed, full ones (a new session).",
     .read = [](const ShardCounters& c) { return c.tls_handshakes_full.read(); }},
    {.name = "ringhttp_tls_handshakes_resumed_total", .type = counter,
     .help = "TLS handshakes completed by resuming a session (a ticket).",
     .read = [](const ShardCounters& c) { return c.tls_handshakes_resumed.read(); }},
    {.name = "ringhttp_tls_handshakes_failed_total", .type = counter,
     .help = "TLS handshakes that did not complete, by reason.", .label = "reason", .first = 1,
     .end = tls_handshake_failure_kinds,
     .label_at = [](std::size_t i) {
       return std::string(i == tls_timeout  ? "timeout"
                          : i == tls_closed ? "closed"
                          : i == tls_refused ? "refused"
                                             : tls::failure_name(tls::Failure(i)));
     },
     .read_at = [](const ShardCounters& c, std::size_t i) { return c.tls_handshake_failures[i].read(); }},
    {.name = "ringhttp_tls_failures_total", .type = counter,
     .help = "Connections whose TLS failed after the handshake (a bad record, an alert).",
     .read = [](const ShardCounters& c) { return c.tls_failures.read(); }},
    {.name = "ringhttp_tls_handshakes_in_progress", .type = gauge, .help = "TLS handshakes in progress now.",
     .read = [](const ShardCounters& c) { return c.tls_handshakes_inflight.read(); }},
    {.name = "ringhttp_tls_plaintext_bytes_total", .type = counter,
     .help = "Bytes of plaintext TLS carried, by direction (the wire's are ringhttp_bytes_*_total).",
     .label = "direction", .samples = tls_plaintext},
};

template <typename Read, typename... Index>
std::uint64_t sum(std::span<const ShardCounters* const> shards, Read read, Index... i) {
  std::uint64_t total = 0;
  for (const ShardCounters* shard : shards) total += read(*shard, i...);
  return total;
}

}  // namespace

void render_metrics(std::span<const ShardCounters* const> shards, std::string& out) {
  metrics::PrometheusWriter w(out);
  for (const Family& f : families) {
    w.family(f.name, f.type, f.help);
    if (f.read != nullptr) {
      w.sample(f.name, sum(shards, f.read));
    } else if (!f.samples.empty()) {
      for (const Sample& s : f.samples) w.sample(f.name, f.label, s.value, sum(shards, s.read));
    } else {
      assert(f.read_at != nullptr && f.label_at != nullptr && f.first < f.end);
      for (std::size_t i = f.first; i < f.end; ++i) w.sample(f.name, f.label, f.label_at(i), sum(shards, f.read_at, i));
    }
  }
}

std::string metrics_reference() {
  std::string out = "| metric | type | label: values | what it counts |\n|---|---|---|---|\n";
  for (const Family& f : families) {
    std::string values;
    const auto add = [&](std::string_view value) {
      if (!values.empty()) values += ", ";
      values += value;
    };
    if (!f.samples.empty()) {
      for (const Sample& s : f.samples) add(s.value);
    } else if (f.read == nullptr) {
      for (std::size_t i = f.first; i < f.end; ++i) add(f.label_at(i));
    }
    out += "| `";
    out += f.name;
    out += "` | ";
    out += f.type;
    out += " | ";
    if (!f.label.empty()) {
      out += '`';
      out += f.label;
      out += "`: ";
      out += values;
    }
    out += " | ";
    out += f.help;
    out += " |\n";
  }
  return out;
}

}  // namespace ringhttp::server
