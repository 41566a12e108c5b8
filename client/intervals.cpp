#include "client/intervals.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "client/results/hdr_log.hpp"
#include "client/results/report.hpp"

namespace ringhttp::client {

std::vector<IntervalLine> interval_lines(std::uint64_t window_start_ns, const Timeline& timeline,
                                         std::uint64_t window_end_ns,
                                         const std::vector<std::unique_ptr<WorkerBase>>& workers) {
  std::size_t count = 0;
  for (const auto& w : workers) count = std::max(count, w->stats().intervals.size());
  std::vector<IntervalLine> lines;
  Histogram line;  // the counts of the line being gathered
  bool gathering = false;
  std::uint64_t line_start_ns = 0;
  std::uint64_t line_end_ns = 0;
  const auto close_line = [&] {
    lines.push_back({double(line_start_ns - window_start_ns) / 1e9, double(line_end_ns - line_start_ns) / 1e9,
                     line.sparse()});
  };
  for (std::size_t k = 0; k < count; ++k) {
    std::uint64_t end_ns = 0;
    for (const auto& w : workers) {
      const std::vector<LatencyInterval>& intervals = w->stats().intervals;
      if (k < intervals.size()) end_ns = std::max(end_ns, std::min(intervals[k].end_ns, window_end_ns));
    }
    const std::uint64_t start_ns = std::max(timeline.measure_ns + k * WorkerBase::log_interval_ns, window_start_ns);
    if (!gathering || end_ns > start_ns) {
      if (gathering) close_line();
      line.reset();
      gathering = true;
      line_start_ns = start_ns;
      line_end_ns = std::max(start_ns, end_ns);
    }
    for (const auto& w : workers) {
      const std::vector<LatencyInterval>& intervals = w->stats().intervals;
      if (k >= intervals.size()) continue;
      assert(intervals[k].index == k);
      line.add(intervals[k].latency);
    }
  }
  if (gathering) close_line();
  return lines;
}

std::string write_interval_log(const std::string& path, const Options& options, double start_epoch_s,
                               const std::vector<IntervalLine>& lines) {
  // The run's shard and options, as in the --json report: `client merge`
  // checks logs of one run against one another with them.
  std::string text = hdr_log_header(start_epoch_s, "{\"shard\":" + report_shard_json(options) +
                                                       ",\"options\":" + report_options_json(options) + "}");
  Histogram h;
  for (const IntervalLine& line : lines) {
    h.reset();
    h.add(line.latency);
    const std::string written = hdr_log_line({line.start_s, line.length_s, &h});
    if (written.empty()) return "cannot compress a histogram for --hdr-log";
    text += written;
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "cannot write --hdr-log " + path + ": " + std::strerror(errno);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) return "cannot write --hdr-log " + path + ": " + std::strerror(errno);
  return {};
}

std::vector<IntervalFailure> judge_intervals(const Options& options, const std::vector<IntervalLine>& lines) {
  std::vector<IntervalFailure> failures;
  const std::size_t per_group = std::size_t(options.threshold_interval_ns / WorkerBase::log_interval_ns);
  Histogram h;
  for (std::size_t first = 0; first < lines.size(); first += per_group) {
    h.reset();
    double length_s = 0;
    for (std::size_t k = first; k < std::min(lines.size(), first + per_group); ++k) {
      h.add(lines[k].latency);
      length_s += lines[k].length_s;
    }
    if (length_s <= 0) continue;  // a line of no time of its own (see interval_lines)
    judge_interval(options.thresholds, {lines[first].start_s, length_s, &h}, failures);
  }
  return failures;
}

}  // namespace ringhttp::client
