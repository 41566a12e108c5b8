#include "client/results/hgrm.hpp"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace ringhttp::client {
namespace {

void append(std::string& out, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void append(std::string& out, const char* fmt, ...) {
  char line[256];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  if (n > 0) out.append(line, std::size_t(n) < sizeof line ? std::size_t(n) : sizeof line - 1);
}

}  // namespace

std::string format_hgrm(const Histogram& h) {
  constexpr int digits = Histogram::significant_digits;
  const double scale = hgrm_value_unit_ns;
  std::string out;
  append(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
  const std::uint64_t total = h.total();
  if (total > 0) {
    // HdrHistogram's percentile iteration: step through the counts; each
    // time the cumulative count reaches the next reporting percentile, write
    // a line and move the next percentile closer to 100% (ticks double with
    // each halving of the distance to 100%).
    double next_percentile = 0.0;
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < Histogram::counts_len && cumulative < total; ++i) {
      const std::uint64_t count = h.count_at_index(i);
      if (count == 0) continue;
      cumulative += count;
      const double value = double(Histogram::highest_equivalent(Histogram::value_at_index(i))) / scale;
      // At the last count only one tick line comes before the 100% line, as
      // HdrHistogram's iterator writes it.
      while (100.0 * double(cumulative) / double(total) >= next_percentile) {
        const double p = next_percentile / 100.0;
        append(out, "%12.*f %2.12f %10" PRIu64 " %14.2f\n", digits, value, p, cumulative, 1.0 / (1.0 - p));
        const double half_distance =
            std::pow(2.0, std::floor(std::log(100.0 / (100.0 - next_percentile)) / std::log(2.0)) + 1);
        next_percentile += 100.0 / (hgrm_ticks_per_half_distance * half_distance);
        if (cumulative == total) break;
      }
      if (cumulative == total) {
        append(out, "%12.*f %2.12f %10" PRIu64 "\n", digits, value, 1.0, cumulative);
      }
    }
  }
  append(out, "#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", digits, h.mean() / scale, digits, h.stdev() / scale);
  append(out, "#[Max     = %12.*f, Total count    = %12" PRIu64 "]\n", digits,
         double(Histogram::highest_equivalent(h.max())) / scale, total);
  append(out, "#[Buckets = %12u, SubBuckets     = %12" PRIu64 "]\n", Histogram::bucket_count,
         Histogram::sub_bucket_count);
  return out;
}

std::string write_hgrm_file(const std::string& path, const Histogram& histogram) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "cannot write --hdr-out " + path + ": " + std::strerror(errno);
  const std::string text = format_hgrm(histogram);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) return "cannot write --hdr-out " + path + ": " + std::strerror(errno);
  return {};
}

}  // namespace ringhttp::client
