#pragma once
// The end-of-run report: the environment, the options, then what was
// measured, as human text or as one JSON object.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/options.hpp"
#include "client/results/environment.hpp"
#include "client/results/stats.hpp"

namespace ringhttp::client {

struct Report {
  Environment environment;
  const Options* options = nullptr;
  WorkerStats totals;
  std::uint64_t window_ns = 0;  // the measured window
  double window_start_unix_s = 0;
  std::string host;  // this machine's name, to tell shards' reports apart  // wall clock at the window's start (aligns shards' reports)
  std::uint64_t client_cpu_ns = 0;
  std::optional<std::uint64_t> server_cpu_ns;
  std::vector<std::string> notes;  // things the reader must know (a worker gave up, ...)
  bool interrupted = false;        // SIGINT/SIGTERM ended the window early
  std::vector<IntervalFailure> interval_failures;  // --threshold-interval
  // https: what the first handshake agreed (empty for http://).
  std::string tls_protocol;
  std::string tls_cipher;

  bool failed() const { return totals.error_total() > 0 || totals.responses == 0 || !notes.empty(); }
  bool thresholds_met() const;  // every --threshold (true without any)
};

// What thresholds are judged on: the corrected latency, errors, requests, rate.
Measured measured(const Report& r);

std::string format_text(const Report& report);
std::string format_json(const Report& report);

// "12.3us", "4.56ms", "1.23s": three significant digits, like the histogram.
std::string format_latency(double ns);

// The pieces `client merge` formats its report with, as a run's.
std::string report_json_escape(std::string_view s);
std::string report_latency_row(const char* label, const Histogram& h);  // "  latency  p50 ... stdev ...\n"
std::string report_latency_json(const Histogram& h);                    // {"p50":…,"count":…}, in µs
std::string report_options_json(const Options& o);  // the report's "options" object
std::string report_shard_json(const Options& o);    // its "shard" object
std::string report_statuses_row(const StatusCounts& s);                 // "  statuses    1xx 0 2xx 500 ...\n"
std::string report_statuses_json(const StatusCounts& s);                // {"1xx":0,"2xx":500,…}
// "  http2       16 streams per connection, 2 GOAWAYs, 0 refused ... resets INTERNAL_ERROR 3\n"
std::string report_http2_row(std::uint32_t max_streams, const H2Counts& h);
// {"goaways":…,"refused":…,"resets":{"NO_ERROR":…,…}}
std::string report_http2_json(const H2Counts& h);
// "  syscalls    2.01/request: recv 1.000 send 1.000 ...\n", the kinds made
std::string report_syscalls_row(const io::SyscallCounts& s, std::uint64_t requests);
// "  batch wait  auto: up to 50 us in the window, ...\n": --batch-wait by
// its name in the options ("auto", "off", "20us"), and the longest used.
std::string report_batch_wait_row(std::string_view name, std::uint64_t longest_us);
// {"counts":{"io_uring_enter":…,…},"per_request":…}
std::string report_syscalls_json(const io::SyscallCounts& s, std::uint64_t requests);

}  // namespace ringhttp::client
