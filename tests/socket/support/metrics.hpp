// Reads the server's /metrics and parses the Prometheus text exposition.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace socket_test {

struct Metrics {
  // Keyed by the full series name including labels, exactly as exposed,
  // e.g. ringhttp_responses_total{status="200"}.
  std::map<std::string, double> series;

  bool has(const std::string& name) const { return series.contains(name); }
  // The value, or 0 for a series not (yet) exposed, as Prometheus reads an
  // absent labelled counter.
  double value(const std::string& name) const;

  static Metrics parse(std::string_view text);
};

// GET /metrics with Connection: close on a fresh connection (which counts as
// one active connection while it is scraped); throws std::runtime_error
// unless the answer is a 200.
Metrics scrape_metrics(std::uint16_t port);

// The counter names docs/SERVER.md documents.
namespace metric {
inline const std::string requests = "ringhttp_requests_total";
inline const std::string accepted = "ringhttp_connections_accepted_total";
inline const std::string active = "ringhttp_connections_active";
inline const std::string closed = "ringhttp_connections_closed_total";
inline const std::string sends = "ringhttp_sends_total";
inline const std::string sends_short = "ringhttp_sends_short_total";
inline const std::string cancellations = "ringhttp_cancellations_total";
inline const std::string bytes_received = "ringhttp_bytes_received_total";
// The bytes of HTTP a server took in: over TLS, the plaintext (the wire's
// count holds the handshakes and the records' overhead too).
inline std::string http_bytes_received(bool tls) {
  return tls ? "ringhttp_tls_plaintext_bytes_total{direction=\"in\"}" : bytes_received;
}
inline const std::string bytes_sent = "ringhttp_bytes_sent_total";
inline const std::string sq_full_flushes = "ringhttp_sq_full_flushes_total";
inline const std::string zc_notifications = "ringhttp_zc_notifications_total";
inline const std::string zc_copied = "ringhttp_zc_copied_total";
inline const std::string stale_completions = "ringhttp_stale_completions_total";

inline std::string responses(int status) {
  return "ringhttp_responses_total{status=\"" + std::to_string(status) + "\"}";
}
inline std::string parse_errors(std::string_view kind) {
  return "ringhttp_parse_errors_total{kind=\"" + std::string(kind) + "\"}";
}
inline std::string timeouts(std::string_view kind) {
  return "ringhttp_timeouts_total{kind=\"" + std::string(kind) + "\"}";
}
inline std::string accept_errors(std::string_view kind) {
  return "ringhttp_accept_errors_total{kind=\"" + std::string(kind) + "\"}";
}
}  // namespace metric

}  // namespace socket_test
