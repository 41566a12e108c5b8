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

#include "client/histogram.hpp"

namespace ringhttp::client {

struct Threshold {
  enum class Metric : std::uint8_t { percentile, max, mean, errors, rps, requests };
  enum class Op : std::uint8_t { lt, le, gt, ge, eq };
  std::string text;  // as given
  Metric metric = Metric::percentile;
  double percentile = 0;  // for Metric::percentile, 0 to 100
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
};

struct Verdict {
  double measured = 0;  // in the threshold's unit (ns for latency)
  bool met = false;
};
Verdict judge(const Threshold& t, const Measured& m);

// "  threshold p99<=5ms: met (measured 1.23ms)\n" for each; and the JSON array.
std::string thresholds_text(const std::vector<Threshold>& ts, const Measured& m, bool& all_met);
std::string thresholds_json(const std::vector<Threshold>& ts, const Measured& m);

}  // namespace ringhttp::client
