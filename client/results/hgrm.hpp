#pragma once
// HdrHistogram's percentile-distribution text (.hgrm), as its Java
// outputPercentileDistribution writes it: readable by HdrHistogram's plotter
// and comparable with any other tool that writes it (wrk2, ...). Values are
// written in milliseconds (the histogram records nanoseconds).

#include <string>

#include "client/results/histogram.hpp"

namespace ringhttp::client {

// Percentile ticks per half distance to 100%, HdrHistogram's default.
inline constexpr int hgrm_ticks_per_half_distance = 5;
inline constexpr double hgrm_value_unit_ns = 1e6;  // milliseconds

std::string format_hgrm(const Histogram& histogram);
// Returns an empty string, or why the file could not be written.
std::string write_hgrm_file(const std::string& path, const Histogram& histogram);

}  // namespace ringhttp::client
