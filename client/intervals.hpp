#pragma once
// The per-second interval histograms of the measured window, merged over
// the workers: written as HdrHistogram's interval log (--hdr-log) and
// judged one group at a time (--threshold-interval).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/load/worker.hpp"
#include "client/options.hpp"
#include "client/results/histogram.hpp"
#include "client/results/threshold.hpp"

namespace ringhttp::client {

// The workers' intervals of the same index, merged, one line each (for
// --hdr-log and --threshold-interval). Interval k covers [measure + k s,
// measure + (k+1) s), the last one ending with the window; times are from
// the window's start.
//
// Every response the report counts is in some line. A worker dispatches the
// batch in which it notices the window's end (or a stop) before it stops, so
// its last interval can begin at or after the window's end; and a worker can
// finish its -n share before this thread has opened the window. Such an
// interval has no time of its own in the window: its counts go into the line
// before it, or, with none before, into a line of zero length.
struct IntervalLine {
  double start_s = 0;
  double length_s = 0;
  Histogram::Sparse latency;
};

std::vector<IntervalLine> interval_lines(std::uint64_t window_start_ns, const Timeline& timeline,
                                         std::uint64_t window_end_ns,
                                         const std::vector<std::unique_ptr<WorkerBase>>& workers);

// --hdr-log: the lines written to `path` as an interval log, headed by the
// run's start and options. Returns "" or what went wrong.
std::string write_interval_log(const std::string& path, const Options& options, double start_epoch_s,
                               const std::vector<IntervalLine>& lines);

// --threshold-interval: the lines in groups of the interval's seconds (the
// last group may be shorter: the window's end), each judged.
std::vector<IntervalFailure> judge_intervals(const Options& options, const std::vector<IntervalLine>& lines);

}  // namespace ringhttp::client
