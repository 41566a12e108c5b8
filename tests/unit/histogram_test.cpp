// The latency histogram: HdrHistogram's layout and precision, merging, and
// the .hgrm text it writes.

#include "client/results/histogram.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "client/results/hdr_log.hpp"
#include "client/results/hgrm.hpp"

namespace ringhttp::client {
namespace {

// 3 significant digits: a value comes back within 1/1000 of itself (HdrHistogram
// promises a relative error below 10^-3; with 2048 sub-buckets it is < 1/1024).
void expect_within_precision(std::uint64_t recorded, std::uint64_t reported) {
  const double error = std::abs(double(reported) - double(recorded));
  EXPECT_LE(error, double(recorded) / 1000.0 + 1) << "recorded " << recorded << " reported " << reported;
}

TEST(Histogram, every_value_in_the_range_keeps_three_significant_digits) {
  const std::vector<std::uint64_t> values = {1,    2,    999,     1000,      1023,       2047,        2048,
                                             2049, 4097, 123'456, 1'000'000, 12'345'678, 999'999'999, 100'000'000'000};
  for (const std::uint64_t v : values) {
    SCOPED_TRACE(v);
    const std::size_t i = Histogram::index_of(v);
    ASSERT_LT(i, Histogram::counts_len);
    EXPECT_LE(Histogram::lowest_equivalent(v), v);
    EXPECT_GE(Histogram::highest_equivalent(v), v);
    EXPECT_EQ(Histogram::value_at_index(i), Histogram::lowest_equivalent(v));
    expect_within_precision(v, Histogram::highest_equivalent(v));
    Histogram h;
    h.record(v);
    EXPECT_EQ(h.total(), 1u);
    expect_within_precision(v, h.value_at_percentile(50));
    EXPECT_EQ(h.max(), v);
    EXPECT_EQ(h.min(), v);
  }
}

TEST(Histogram, values_below_2048_are_exact) {
  for (std::uint64_t v = 1; v < 2048; ++v) {
    ASSERT_EQ(Histogram::lowest_equivalent(v), v);
    ASSERT_EQ(Histogram::highest_equivalent(v), v);
  }
}

TEST(Histogram, indexes_are_monotonic_and_cover_the_range) {
  std::size_t last = 0;
  for (std::uint64_t v = 1; v < Histogram::highest_trackable_ns; v = v + v / 7 + 1) {
    const std::size_t i = Histogram::index_of(v);
    ASSERT_GE(i, last);
    ASSERT_LT(i, Histogram::counts_len);
    last = i;
  }
  EXPECT_EQ(Histogram::index_of(Histogram::highest_trackable_ns), Histogram::counts_len - 1);
}

TEST(Histogram, values_above_the_range_are_clamped_and_counted) {
  Histogram h;
  h.record(Histogram::highest_trackable_ns * 4);
  EXPECT_EQ(h.clamped(), 1u);
  EXPECT_EQ(h.max(), Histogram::highest_trackable_ns);
}

TEST(Histogram, percentiles_of_a_uniform_ramp) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 100'000; ++v) h.record(v * 1000);  // 1 µs .. 100 ms
  EXPECT_EQ(h.total(), 100'000u);
  expect_within_precision(50'000'000, h.value_at_percentile(50));
  expect_within_precision(99'000'000, h.value_at_percentile(99));
  expect_within_precision(99'900'000, h.value_at_percentile(99.9));
  EXPECT_EQ(h.value_at_percentile(100), 100'000'000u);
  expect_within_precision(50'000'500, std::uint64_t(h.mean()));
  // The stdev of a uniform ramp 1..N (in µs) is N / sqrt(12).
  EXPECT_NEAR(h.stdev(), 100'000'000 / std::sqrt(12.0), 100'000'000 / std::sqrt(12.0) / 500);
}

// The client's percentiles must be the ones HdrHistogram's own reader
// computes from its logs (tests/socket/client_histograms_test.cpp), so they
// follow getValueAtPercentile of HdrHistogram Java 2.1.10 on (Debian ships
// 2.1.11): the count wanted is ceil(nextafter(p, -inf) * total / 100), at
// least 1; the value is the first one with that many counts at or below it.
// Each case is one where another plausible rule reports a different value:
// rounding the count to nearest, or rounding up without first lowering p by
// one ulp (p * total / 100 or p / 100 * total, each fails a case). The
// expected values were confirmed once with Debian's hdrhistogram.jar
// (2.1.11) on the same data. Values below 2048 have buckets of their own, so
// with 1..N each recorded once the value at a percentile is its count.
// 1, 2, ..., n, each recorded once.
Histogram one_of_each(std::uint64_t n) {
  Histogram h;
  for (std::uint64_t v = 1; v <= n; ++v) h.record(v);
  return h;
}

TEST(Histogram, percentiles_round_the_count_up_as_hdrhistogram_does) {
  // 52% of 10 is 5.2 counts: at least 52% of the values are at or below 6;
  // rounding to nearest would give 5, which only 50% are at or below.
  EXPECT_EQ(one_of_each(10).value_at_percentile(52), 6u);
  // 99.99% of 115,400 is 115,388.46 counts: the 115,389th value is the first
  // of the 12 slow ones (rounding to nearest: the fast ones' 1 µs).
  Histogram tail;
  for (int i = 0; i < 115'388; ++i) tail.record(1000);
  for (int i = 0; i < 12; ++i) tail.record(2000);
  ASSERT_EQ(tail.total(), 115'400u);
  EXPECT_EQ(tail.value_at_percentile(99.99), 2000u);
  EXPECT_EQ(tail.value_at_percentile(99.98), 1000u) << "115,376.92 counts: still a fast one";
}

TEST(Histogram, a_whole_count_is_not_rounded_up_by_floating_point_noise) {
  // 1.1 * 3000 / 100 comes out as 33.00000000000001 in doubles; with the
  // percentile one ulp lower it is 32.99999999999999, and its ceiling 33.
  EXPECT_EQ(one_of_each(3000).value_at_percentile(1.1), 33u);
  // 99.9 / 100 * 1000 comes out as 999.0000000000001; 99.9 one ulp lower,
  // in either order, is 998.9999999999999, and its ceiling 999.
  EXPECT_EQ(one_of_each(1000).value_at_percentile(99.9), 999u);
  // Whole products stay whole: 90% of 10 is the 9th value, 100% the last,
  // 0% the first (at least one count).
  EXPECT_EQ(one_of_each(10).value_at_percentile(90), 9u);
  EXPECT_EQ(one_of_each(10).value_at_percentile(100), 10u);
  EXPECT_EQ(one_of_each(10).value_at_percentile(0), 1u);
}

TEST(Histogram, merged_histograms_equal_one_fed_all_values) {
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> latency(11.0, 1.5);  // around 60 µs with a long tail
  Histogram all;
  Histogram parts[3];
  for (int i = 0; i < 30'000; ++i) {
    const auto v = std::uint64_t(latency(random)) + 1;
    all.record(v);
    parts[i % 3].record(v);
  }
  Histogram merged;
  for (const Histogram& part : parts) merged.merge(part);
  EXPECT_EQ(merged.total(), all.total());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  for (std::size_t i = 0; i < Histogram::counts_len; ++i) ASSERT_EQ(merged.count_at_index(i), all.count_at_index(i));
  for (const double p : {50.0, 90.0, 99.0, 99.9, 99.99})
    EXPECT_EQ(merged.value_at_percentile(p), all.value_at_percentile(p));
}

TEST(Histogram, sparse_counts_add_back_to_the_same_histogram) {
  Histogram h;
  for (std::uint64_t v = 1; v < 10'000'000; v = v * 3 + 1) h.record(v);
  Histogram copy;
  copy.add(h.sparse());
  EXPECT_EQ(copy.total(), h.total());
  EXPECT_EQ(copy.min(), h.min());
  EXPECT_EQ(copy.max(), h.max());
  for (std::size_t i = 0; i < Histogram::counts_len; ++i) ASSERT_EQ(copy.count_at_index(i), h.count_at_index(i));
}

TEST(Histogram, reset_forgets_everything) {
  Histogram h;
  h.record(5);
  h.record(5'000'000);
  h.reset();
  EXPECT_EQ(h.total(), 0u);
  EXPECT_EQ(h.max(), 0u);
  EXPECT_EQ(h.min(), 0u);
  EXPECT_EQ(h.value_at_percentile(99), 0u);
}

TEST(Hgrm, percentile_distribution_has_hdrhistograms_header_lines_and_footer) {
  Histogram h;
  for (std::uint64_t v = 1; v <= 10'000; ++v) h.record(v * 1000);  // 1 µs .. 10 ms
  const std::string text = format_hgrm(h);
  EXPECT_TRUE(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n")) << text.substr(0, 80);
  EXPECT_NE(text.find("       0.001 0.000000000000          1           1.00\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" 1.000000000000      10000\n"), std::string::npos) << "the 100% line";
  EXPECT_NE(text.find("#[Max     =       10.002, Total count    =        10000]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#[Buckets =           27, SubBuckets     =         2048]\n"), std::string::npos);
  // Percentiles only grow, line after line.
  double last = -1;
  std::size_t lines = 0;
  for (std::size_t pos = text.find("\n\n") + 2; pos < text.size() && text[pos] != '#';) {
    const std::size_t end = text.find('\n', pos);
    const double percentile = std::stod(text.substr(pos + 13, 14));
    EXPECT_GE(percentile, last);
    last = percentile;
    ++lines;
    pos = end + 1;
  }
  EXPECT_GT(lines, 50u);
  EXPECT_EQ(last, 1.0);
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

TEST(HdrLog, base64_is_standard_with_padding) {
  EXPECT_EQ(base64(""), "");
  EXPECT_EQ(base64("f"), "Zg==");
  EXPECT_EQ(base64("fo"), "Zm8=");
  EXPECT_EQ(base64("foo"), "Zm9v");
  EXPECT_EQ(base64("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64(std::string("\xff\xfe", 2)), "//4=");
}

TEST(HdrLog, v2_encoding_has_hdrhistograms_header_and_run_length_counts) {
  Histogram h;
  h.record(1);
  h.record(1);
  h.record(3);
  const std::string bytes = encode_v2(h);
  ASSERT_GE(bytes.size(), 40u);
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x1c\x84\x93\x13", 4)) << "V2 cookie with the word-size marker";
  EXPECT_EQ(bytes.substr(12, 4), std::string("\0\0\0\3", 4)) << "3 significant digits";
  // Counts from index 0 up to the max: 0 (one zero), 2, 0 (one zero), 1 --
  // zig-zag: 0 -> 0, 2 -> 4, 1 -> 2.
  EXPECT_EQ(bytes.substr(40), std::string("\x00\x04\x00\x02", 4));
  EXPECT_EQ(bytes.substr(4, 4), std::string("\0\0\0\4", 4)) << "payload length";
}

TEST(HdrLog, runs_of_zeros_are_one_negative_number) {
  Histogram h;
  h.record(5);
  const std::string bytes = encode_v2(h);
  // Five zeros (indexes 0..4) then a count of 1: -5 zig-zags to 9.
  EXPECT_EQ(bytes.substr(40), std::string("\x09\x02", 2));
}

TEST(HdrLog, compressed_form_starts_with_its_cookie_and_length) {
  Histogram h;
  for (std::uint64_t v = 1000; v < 100'000; v += 7) h.record(v);
  const std::string bytes = compress_v2(h);
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x1c\x84\x93\x14", 4));
  const std::uint32_t length = (std::uint32_t(std::uint8_t(bytes[4])) << 24) |
                               (std::uint32_t(std::uint8_t(bytes[5])) << 16) |
                               (std::uint32_t(std::uint8_t(bytes[6])) << 8) | std::uint32_t(std::uint8_t(bytes[7]));
  EXPECT_EQ(length, bytes.size() - 8);
  const std::string header = hdr_log_header(1'700'000'000.0);
  EXPECT_TRUE(header.starts_with("#[Histogram log format version 1.3]\n#[StartTime: 1700000000.000")) << header;
  EXPECT_TRUE(
      header.ends_with("\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"));
  const std::string line = hdr_log_line({1.0, 0.5, &h});
  EXPECT_TRUE(line.starts_with("1.000,0.500,0.100,HISTFAAA")) << line;
  EXPECT_TRUE(line.ends_with("\n"));
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

// What `client merge` rests on: histograms written in the report, read
// back and added, give exactly the percentiles of one histogram fed every
// value.
TEST(HistogramEncoding, decoded_and_added_is_one_histogram_of_every_value) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> latency(13.0, 1.2);  // around 0.5 ms, a long tail
  Histogram a, b, all;
  for (int i = 0; i < 200'000; ++i) {
    const auto v = std::uint64_t(latency(rng));
    (i % 3 == 0 ? a : b).record(v);
    all.record(v);
  }
  Histogram merged;
  std::string error;
  ASSERT_TRUE(add_compressed_v2(base64(compress_v2(a)), merged, error)) << error;
  ASSERT_TRUE(add_compressed_v2(base64(compress_v2(b)), merged, error)) << error;
  EXPECT_EQ(merged.total(), all.total());
  for (std::size_t i = 0; i < Histogram::counts_len; ++i) ASSERT_EQ(merged.count_at_index(i), all.count_at_index(i)) << i;
  for (const double p : {0.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
    EXPECT_EQ(merged.value_at_percentile(p), all.value_at_percentile(p)) << p;
  }
  // The exact maximum is not in the encoding: its bucket's highest value
  // stands for it (as HdrHistogram's getMaxValue says it).
  EXPECT_EQ(merged.max(), Histogram::highest_equivalent(all.max()));
  EXPECT_EQ(merged.value_at_percentile(100.0), Histogram::highest_equivalent(all.max()));
  Histogram empty;
  ASSERT_TRUE(add_compressed_v2(base64(compress_v2(Histogram())), empty, error)) << error;
  EXPECT_EQ(empty.total(), 0u);
}

TEST(HistogramEncoding, anything_else_is_refused_with_a_reason) {
  Histogram h;
  h.record(1000);
  const std::string good = base64(compress_v2(h));
  std::string error;
  for (const std::string& bad : {std::string("not base64!"), std::string("AAAA"), good.substr(0, good.size() - 4),
                                 base64(encode_v2(h)), std::string()}) {
    Histogram out;
    error.clear();
    EXPECT_FALSE(add_compressed_v2(bad, out, error)) << bad;
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(out.total(), 0u);
  }
}

}  // namespace
}  // namespace ringhttp::client

namespace ringhttp::client {
namespace {

// An interval log read back: the run comment, each line's start made
// absolute (StartTime plus its own, as HdrHistogram's reader does for logs
// that start at 0; BaseTime when given; absolute starts kept), the
// histograms still encoded and decoding to what was written.
TEST(HdrLogRead, a_written_log_reads_back_line_by_line) {
  Histogram a, b;
  for (std::uint64_t v = 1; v <= 100; ++v) a.record(v * 1000);
  b.record(5'000'000);
  const std::string log = hdr_log_header(1'700'000'000.5, R"({"shard":{"index":1,"count":2}})") +
                          hdr_log_line({0.0, 1.0, &a}) + hdr_log_line({1.0, 0.25, &b});
  HdrLogRead read;
  std::string error;
  ASSERT_TRUE(read_hdr_log(log, read, error)) << error;
  EXPECT_EQ(read.run_json, R"({"shard":{"index":1,"count":2}})");
  ASSERT_EQ(read.entries.size(), 2u);
  EXPECT_DOUBLE_EQ(read.entries[0].start_s, 1'700'000'000.5);
  EXPECT_DOUBLE_EQ(read.entries[1].start_s, 1'700'000'001.5);
  EXPECT_DOUBLE_EQ(read.entries[1].length_s, 0.25);
  Histogram back;
  ASSERT_TRUE(add_compressed_v2(read.entries[0].histogram, back, error)) << error;
  EXPECT_EQ(back.total(), 100u);
  ASSERT_TRUE(add_compressed_v2(read.entries[1].histogram, back, error)) << error;
  EXPECT_EQ(back.total(), 101u);

  const std::string line = hdr_log_line({2.0, 1.0, &a});
  const std::string histogram = line.substr(line.rfind(',') + 1);
  HdrLogRead based;
  ASSERT_TRUE(read_hdr_log("#[StartTime: 100.000 (seconds since epoch)]\n#[BaseTime: 1700000000.000 (seconds since "
                           "epoch)]\n2.000,1.000,0.100," + histogram, based, error)) << error;
  ASSERT_EQ(based.entries.size(), 1u);
  EXPECT_DOUBLE_EQ(based.entries[0].start_s, 1'700'000'002.0);
  EXPECT_TRUE(based.run_json.empty());
  HdrLogRead absolute;
  ASSERT_TRUE(read_hdr_log("#[StartTime: 1700000000.000 (seconds since epoch)]\n1700000003.000,1.000,0.100," +
                           histogram, absolute, error)) << error;
  EXPECT_DOUBLE_EQ(absolute.entries[0].start_s, 1'700'000'003.0);
}

TEST(HdrLogRead, lines_that_are_not_intervals_and_tagged_ones_are_refused) {
  for (const char* bad : {"1.0,2.0,HISTFAAAA", "x,1.0,0.1,HISTFAAAA", "1.0,-1,0.1,HISTFAAAA", "1.0,1.0,0.1,",
                          "Tag=other,0.000,1.000,0.100,HISTFAAAA", "1.0,1.0,inf,HISTFAAAA",
                          "nan,1.0,0.1,HISTFAAAA", "1e308,1e308,0.1,HISTFAAAA"}) {
    HdrLogRead read;
    std::string error;
    EXPECT_FALSE(read_hdr_log(std::string("#[StartTime: 1.0 (seconds since epoch)]\n") + bad + "\n", read, error))
        << bad;
    EXPECT_NE(error.find("line 2"), std::string::npos) << bad << ": " << error;
  }
}

}  // namespace
}  // namespace ringhttp::client
