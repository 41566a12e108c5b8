#include "client/results/stats.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>

namespace ringhttp::client {

const char* error_name(ErrorClass error) {
  switch (error) {
    case ErrorClass::connect: return "connect";
    case ErrorClass::read: return "read";
    case ErrorClass::write: return "write";
    case ErrorClass::timeout: return "timeout";
    case ErrorClass::parse: return "parse";
    case ErrorClass::status: return "status";
    case ErrorClass::body: return "body";
    case ErrorClass::closed: return "closed";
    case ErrorClass::tls: return "tls";
    case ErrorClass::reset: return "reset";
    case ErrorClass::goaway: return "goaway";
    case ErrorClass::protocol: return "protocol";
    case ErrorClass::count_: break;
  }
  return "unknown";
}

const char* h2_error_code_name(std::size_t code_index) {
  if (code_index + 1 >= h2_error_codes) return "other";
  return nghttp2_http2_strerror(std::uint32_t(code_index));
}

void WorkerStats::reset() {
  latency.reset();
  uncorrected.reset();
  responses = bytes_received = reconnects = tls_handshakes = tls_resumed = 0;
  h2 = {};
  batch_wait_us_max = 0;
  errors.fill(0);
  statuses.fill(0);
  syscalls = {};
  intervals.clear();
}

void WorkerStats::merge(const WorkerStats& other) {
  latency.merge(other.latency);
  uncorrected.merge(other.uncorrected);
  responses += other.responses;
  bytes_received += other.bytes_received;
  reconnects += other.reconnects;
  tls_handshakes += other.tls_handshakes;
  tls_resumed += other.tls_resumed;
  h2.merge(other.h2);
  batch_wait_us_max = std::max(batch_wait_us_max, other.batch_wait_us_max);
  syscalls.merge(other.syscalls);
  for (std::size_t i = 0; i < error_classes; ++i) errors[i] += other.errors[i];
  for (std::size_t i = 0; i < status_classes; ++i) statuses[i] += other.statuses[i];
}

std::uint64_t WorkerStats::error_total() const {
  std::uint64_t total = 0;
  for (const std::uint64_t e : errors) total += e;
  return total;
}

}  // namespace ringhttp::client
