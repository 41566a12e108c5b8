#pragma once
// HdrHistogram's interval log (format 1.3) with V2 compressed histograms, as
// HdrHistogram's HistogramLogWriter writes it, so that runs on several
// machines can be merged by HdrHistogram's own HistogramLogProcessor. The
// client writes one interval: the whole measured window.

#include <cstdint>
#include <string>

#include "client/histogram.hpp"

namespace ringhttp::client {

// The log's Interval_Max column is in these units of the recorded
// nanoseconds: milliseconds, HistogramLogWriter's default ratio.
inline constexpr double hdr_log_max_value_unit_ns = 1e6;

// V2 encoding (cookie 0x1c849313): a 40-byte big-endian header, then the
// counts up to the maximum as zig-zag LEB128, runs of zeros as one negative.
std::string encode_v2(const Histogram& histogram);
// V2 compressed (cookie 0x1c849314): cookie, length, zlib-deflated encode_v2.
// Empty on a zlib failure.
std::string compress_v2(const Histogram& histogram);
std::string base64(const std::string& bytes);

struct HdrLogInterval {
  double start_epoch_s = 0;  // wall-clock time of the measured window's start (metadata only)
  double length_s = 0;       // the measured window, from the monotonic clock
};

std::string format_hdr_log(const Histogram& histogram, const HdrLogInterval& interval);
// Returns an empty string, or why the file could not be written.
std::string write_hdr_log_file(const std::string& path, const Histogram& histogram, const HdrLogInterval& interval);

}  // namespace ringhttp::client
