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
  reset,     // HTTP/2: the server reset the stream (RST_STREAM, any code but REFUSED_STREAM)
  goaway,    // HTTP/2: the server sent GOAWAY with an error code (NO_ERROR is a graceful close)
  protocol,  // HTTP/2: the server broke the protocol (framing, HPACK, a stream error), or chose no h2 by ALPN
  count_,
};
inline constexpr std::size_t error_classes = std::size_t(ErrorClass::count_);
// Complete responses by status class, 1xx to 5xx (the parser refuses codes
// outside 100..599).
inline constexpr std::size_t status_classes = 5;
using StatusCounts = std::array<std::uint64_t, status_classes>;
const char* error_name(ErrorClass error);
// HTTP/2's error codes, RFC 9113 section 7: NO_ERROR (0) to
// HTTP_1_1_REQUIRED (0xd); a code above that is counted in the last place.
inline constexpr std::size_t h2_error_codes = 0xd + 2;
using H2ResetCounts = std::array<std::uint64_t, h2_error_codes>;
// The code's name ("INTERNAL_ERROR"), or "other" for the last place.
const char* h2_error_code_name(std::size_t code_index);

// HTTP/2: what the server's GOAWAYs and resets did.
struct H2Counts {
  // Streams the server refused (REFUSED_STREAM, or above a GOAWAY's last
  // stream), each sent again on a new stream: not errors.
  std::uint64_t refused = 0;
  std::uint64_t goaways = 0;  // GOAWAY frames received, graceful or not
  H2ResetCounts resets{};     // streams reset, by RST_STREAM's code (their sum is the reset errors)

  void merge(const H2Counts& other) {
    refused += other.refused;
    goaways += other.goaways;
    for (std::size_t i = 0; i < h2_error_codes; ++i) resets[i] += other.resets[i];
  }
};

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
  H2Counts h2;                             // HTTP/2 only
  std::uint32_t batch_wait_us_max = 0;     // the longest batching wait in the window (--batch-wait), µs
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
