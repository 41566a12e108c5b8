#pragma once
// Pass/fail thresholds (--threshold, repeatable), as k6's but judged on the
// exact histogram (merged ones too): `p99<=5ms`, `p99.9<20ms`, `max<1s`,
// `mean<2ms`, `errors==0`, `rps>=100000`, `requests>=1000000`. Latency
// figures are the corrected latency in rate mode. A run whose thresholds
// fail exits 3 (1 stays "a request failed", 2 "bad usage").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/results/histogram.hpp"
#include "client/results/stats.hpp"

namespace ringhttp::client {

struct Threshold {
  enum class Metric : std::uint8_t { percentile, max, mean, errors, rps, requests, status };
  enum class Op : std::uint8_t { lt, le, gt, ge, eq };
  std::string text;  // as given
  Metric metric = Metric::percentile;
  double percentile = 0;  // for Metric::percentile, 0 to 100
  std::uint8_t status_class = 0;  // for Metric::status: 1 to 5 (status_5xx: responses 500..599)
  Op op = Op::le;
  double value = 0;  // nanoseconds for latency figures, else a count or a rate
};

// "p99<=5ms" and kin; an empty optional with `error` set when malformed.
std::optional<Threshold> parse_threshold(std::string_view text, std::string& error);

// What a run (or a merge) measured, for judging.
struct Measured {
  const Histogram* latency = nullptr;
  std::uint64_t errors = 0;
  std::uint64_t requests = 0;
  double rps = 0;
  const StatusCounts* statuses = nullptr;  // none: every status class counts 0
};

struct Verdict {
  double measured = 0;  // in the threshold's unit (ns for latency)
  bool met = false;
};
Verdict judge(const Threshold& t, const Measured& m);

// A threshold that failed in one interval of the window (--threshold-interval).
struct IntervalFailure {
  std::size_t threshold = 0;  // its index in the options' list
  double start_s = 0;         // from the window's start
  double length_s = 0;
  double measured = 0;        // in the threshold's unit (ns for latency)
};

// Whether a threshold is judged per interval: latency, requests and rps
// (errors are counted for the whole window only).
bool judged_per_interval(const Threshold& t);

// One interval's figures, for judging it.
struct IntervalFigures {
  double start_s = 0;
  double length_s = 0;
  const Histogram* latency = nullptr;
};
// Appends to `out` each threshold judged per interval that fails in `interval`.
void judge_interval(const std::vector<Threshold>& ts, const IntervalFigures& interval,
                    std::vector<IntervalFailure>& out);

// Every threshold met over the whole window and in no interval failed.
bool thresholds_met(const std::vector<Threshold>& ts, const Measured& m,
                    const std::vector<IntervalFailure>& interval_failures = {});

// "  threshold p99<=5ms: met (measured 1.23ms)\n" for each, then the
// intervals where one failed; and the JSON array.
std::string thresholds_text(const std::vector<Threshold>& ts, const Measured& m, bool& all_met,
                            const std::vector<IntervalFailure>& interval_failures = {});
std::string thresholds_json(const std::vector<Threshold>& ts, const Measured& m,
                            const std::vector<IntervalFailure>& interval_failures = {});

}  // namespace ringhttp::client
