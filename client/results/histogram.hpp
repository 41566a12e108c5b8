#pragma once
// A log-linear latency histogram with HdrHistogram's layout (3 significant
// decimal digits: 2048 sub-buckets per power of two), so its counts can be
// written in HdrHistogram's formats and merged by HdrHistogram's tools.
//
// Values are nanoseconds. The range is 1 ns to 2^37 ns (about 137 s), which
// covers the promised 1 µs to 100 s; a larger value is clamped to the top
// and counted as such. The counts array is allocated once, at construction:
// record() never allocates.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace ringhttp::client {

class Histogram {
 public:
  static constexpr int significant_digits = 3;
  // 2 * 10^3 rounded up to a power of two: every value keeps 3 digits.
  static constexpr unsigned sub_bucket_count_magnitude = 11;
  static constexpr std::uint64_t sub_bucket_count = 1u << sub_bucket_count_magnitude;
  static constexpr std::uint64_t sub_bucket_half_count = sub_bucket_count / 2;
  static constexpr unsigned sub_bucket_half_count_magnitude = sub_bucket_count_magnitude - 1;
  static constexpr std::uint64_t sub_bucket_mask = sub_bucket_count - 1;
  static constexpr std::uint64_t lowest_trackable_ns = 1;
  // Buckets so that sub_bucket_count << (buckets - 1) exceeds 100 s in ns.
  static constexpr unsigned bucket_count = 27;
  static constexpr std::uint64_t highest_trackable_ns = (sub_bucket_count << (bucket_count - 1)) - 1;
  static constexpr std::size_t counts_len = (bucket_count + 1) * sub_bucket_half_count;
  static_assert(highest_trackable_ns >= 100'000'000'000ull, "the promised range reaches 100 s");

  Histogram();
  Histogram(const Histogram& other);
  Histogram& operator=(const Histogram& other);

  void record(std::uint64_t value_ns) {
    if (value_ns > highest_trackable_ns) {
      value_ns = highest_trackable_ns;
      ++clamped_;
    }
    ++counts_[index_of(value_ns)];
    ++total_;
    if (value_ns < min_) min_ = value_ns;
    if (value_ns > max_) max_ = value_ns;
  }
  void merge(const Histogram& other);
  void reset();

  // The non-zero counts as (index, count), for keeping an interval compactly
  // (appends to `out`; allocates, so not for the request path), and adding
  // such counts back, with the exact minimum and maximum they came with.
  struct Sparse {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> counts;
    std::uint64_t min = UINT64_MAX;
    std::uint64_t max = 0;
  };
  Sparse sparse() const;
  void add(const Sparse& sparse);

  std::uint64_t total() const { return total_; }
  std::uint64_t clamped() const { return clamped_; }
  std::uint64_t min() const { return total_ == 0 ? 0 : min_; }
  std::uint64_t max() const { return max_; }
  double mean() const;
  double stdev() const;
  // The highest value equivalent to the one at `percentile` (0..100), as
  // HdrHistogram reports it; 0 when empty.
  std::uint64_t value_at_percentile(double percentile) const;

  // The raw layout, for writers of HdrHistogram's formats.
  std::uint64_t count_at_index(std::size_t index) const { return counts_[index]; }
  static std::size_t index_of(std::uint64_t value);
  static std::uint64_t value_at_index(std::size_t index);
  static std::uint64_t lowest_equivalent(std::uint64_t value);
  static std::uint64_t highest_equivalent(std::uint64_t value);
  static std::uint64_t median_equivalent(std::uint64_t value);

 private:
  std::unique_ptr<std::uint64_t[]> counts_;
  std::uint64_t total_ = 0;
  std::uint64_t clamped_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

inline std::size_t Histogram::index_of(std::uint64_t value) {
  // The bucket is the power of two above the value's top sub-bucket bits;
  // within it, the value's top bits pick the sub-bucket (HdrHistogram's
  // counts_index with unit magnitude 0).
  const unsigned pow2_ceiling = 64 - unsigned(__builtin_clzll(value | sub_bucket_mask));
  const unsigned bucket = pow2_ceiling - (sub_bucket_half_count_magnitude + 1);
  const std::uint64_t sub_bucket = value >> bucket;
  return (std::size_t(bucket + 1) << sub_bucket_half_count_magnitude) + std::size_t(sub_bucket - sub_bucket_half_count);
}

}  // namespace ringhttp::client
