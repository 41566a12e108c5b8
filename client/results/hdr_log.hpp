#pragma once
// HdrHistogram's interval log (format 1.3) with V2 compressed histograms, as
// HdrHistogram's HistogramLogWriter writes it, so that runs on several
// machines can be merged by HdrHistogram's own HistogramLogProcessor. The
// client writes one interval per second of the measured window.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client/results/histogram.hpp"

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

// The reverse, for histograms this client wrote (3 significant digits, its
// range): `text` is base64 of a V2 compressed histogram. Its counts are
// added to `out` (the exact minimum and maximum are not in the encoding:
// those of the lowest and highest buckets counted stand for them, as in
// HdrHistogram). False, with `error` set, for anything else.
bool add_compressed_v2(std::string_view text, Histogram& out, std::string& error);

struct HdrLogInterval {
  double start_s = 0;   // from the log's StartTime (the measured window's start)
  double length_s = 0;  // monotonic clock
  const Histogram* latency = nullptr;
};

// The log's header. `start_epoch_s`: wall-clock time of the window's start,
// the log's StartTime (a label for merging logs; nothing is measured with it).
// `run_json`, when not empty, is written as a comment "#[ringhttp run: …]"
// (the run's shard and options, as in the --json report), which `client
// merge` checks logs against one another with; HdrHistogram's readers skip it.
std::string hdr_log_header(double start_epoch_s, const std::string& run_json = {});

// A log read back: every untagged interval line, its start made absolute
// (BaseTime, else StartTime, plus the line's own), its histogram still
// encoded (a view into the text read).
struct HdrLogEntry {
  double start_s = 0;  // Unix seconds
  double length_s = 0;
  std::string_view histogram;  // base64 of a V2 compressed histogram
};
struct HdrLogRead {
  std::string_view run_json;  // the "#[ringhttp run: …]" comment, empty when the log has none
  std::vector<HdrLogEntry> entries;
};
// False, with `error` naming the line, for a line that is not a comment, the
// legend or an interval line, and for a tagged interval line (another
// histogram than the latency).
bool read_hdr_log(std::string_view text, HdrLogRead& out, std::string& error);
// One interval's line; empty on a zlib failure.
std::string hdr_log_line(const HdrLogInterval& interval);

}  // namespace ringhttp::client
