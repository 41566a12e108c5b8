#pragma once
// What one worker measured: written by the worker's thread only, read by
// the main thread after join (and, for the progress line, the live counters
// while it runs).

#include <array>
#include <cstdint>
#include <vector>

#include "client/results/histogram.hpp"
#include "core/io/completion.hpp"
#include "core/metrics/counter.hpp"

namespace ringhttp::client {

// Each way a request can fail has its own class, so a report never hides one
// kind of failure behind another.
enum class ErrorClass : std::uint8_t {
  connect,  // connect() failed (refused, no ports, ...)
  read,     // receive failed (reset by peer, ...)
  write,    // send failed (broken pipe, reset, ...)
  timeout,  // no complete response (or connection) within --timeout
  parse,    // the response bytes are not valid HTTP/1.x
  status,   // a complete response with a status outside --expect-status
  body,     // a complete response whose body differs from --expect-body
  closed,   // the peer closed with requests unanswered or a response cut short
  tls,      // https: the handshake failed (certificate, alert, protocol) or a record was bad
  count_,
};
inline constexpr std::size_t error_classes = std::size_t(ErrorClass::count_);
// Complete responses by status class, 1xx to 5xx (the parser refuses codes
// outside 100..599).
inline constexpr std::size_t status_classes = 5;
using StatusCounts = std::array<std::uint64_t, status_classes>;
const char* error_name(ErrorClass error);

// One interval of the --hdr-log (a second of the measured window, the last
// one shorter): its latency counts, kept sparse.
struct LatencyInterval {
  std::uint64_t index = 0;   // the interval's number from the window's start
  std::uint64_t end_ns = 0;  // monotonic; the start is the window's start + index seconds
  Histogram::Sparse latency;
};

struct WorkerStats {
  // Closed model: from the send of the request's batch. Rate model: from the
  // request's intended send time (coordinated omission corrected).
  Histogram latency;
  // Rate model only: from the actual send, as a closed-model tool would say.
  Histogram uncorrected;
  std::uint64_t responses = 0;       // complete responses, whatever their status
  std::uint64_t bytes_received = 0;  // response bytes, framing included
  std::array<std::uint64_t, error_classes> errors{};
  StatusCounts statuses{};                 // responses by status class, whether expected or not
  std::uint64_t reconnects = 0;            // connections reopened after the peer or an error closed them
  std::uint64_t tls_handshakes = 0;        // https: handshakes completed
  std::uint64_t tls_resumed = 0;           // ... of which resumed an earlier session
  io::SyscallCounts syscalls;              // what the backend made, the measured window's
  std::vector<LatencyInterval> intervals;  // --hdr-log only; not merged (the runner aligns them by index)

  void reset();
  void merge(const WorkerStats& other);
  std::uint64_t error_total() const;
};

// Read by the main thread's progress line while the worker runs.
struct LiveCounters {
  metrics::Counter responses;
  metrics::Counter errors;
};

}  // namespace ringhttp::client
