#include "client/results/histogram.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

namespace ringhttp::client {
namespace {

unsigned bucket_of(std::uint64_t value) {
  const unsigned pow2_ceiling = 64 - unsigned(__builtin_clzll(value | Histogram::sub_bucket_mask));
  return pow2_ceiling - (Histogram::sub_bucket_half_count_magnitude + 1);
}

}  // namespace

Histogram::Histogram() : counts_(new std::uint64_t[counts_len]()) {}

Histogram::Histogram(const Histogram& other) : Histogram() { *this = other; }

Histogram& Histogram::operator=(const Histogram& other) {
  if (this == &other) return *this;
  std::memcpy(counts_.get(), other.counts_.get(), counts_len * sizeof(std::uint64_t));
  total_ = other.total_;
  clamped_ = other.clamped_;
  min_ = other.min_;
  max_ = other.max_;
  return *this;
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t i = 0; i < counts_len; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  clamped_ += other.clamped_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

void Histogram::reset() {
  std::memset(counts_.get(), 0, counts_len * sizeof(std::uint64_t));
  total_ = clamped_ = max_ = 0;
  min_ = UINT64_MAX;
}

Histogram::Sparse Histogram::sparse() const {
  Sparse out;
  for (std::size_t i = 0; i < counts_len; ++i) {
    if (counts_[i] != 0) out.counts.emplace_back(std::uint32_t(i), counts_[i]);
  }
  out.min = min_;
  out.max = max_;
  return out;
}

void Histogram::add(const Sparse& sparse) {
  for (const auto& [index, count] : sparse.counts) {
    assert(index < counts_len);
    counts_[index] += count;
    total_ += count;
  }
  min_ = std::min(min_, sparse.min);
  max_ = std::max(max_, sparse.max);
}

std::uint64_t Histogram::value_at_index(std::size_t index) {
  int bucket = int(index >> sub_bucket_half_count_magnitude) - 1;
  std::uint64_t sub_bucket = (index & (sub_bucket_half_count - 1)) + sub_bucket_half_count;
  if (bucket < 0) {
    sub_bucket -= sub_bucket_half_count;
    bucket = 0;
  }
  return sub_bucket << unsigned(bucket);
}

std::uint64_t Histogram::lowest_equivalent(std::uint64_t value) {
  const unsigned bucket = bucket_of(value);
  return (value >> bucket) << bucket;
}

std::uint64_t Histogram::highest_equivalent(std::uint64_t value) {
  const unsigned bucket = bucket_of(value);
  return lowest_equivalent(value) + (std::uint64_t(1) << bucket) - 1;
}

std::uint64_t Histogram::median_equivalent(std::uint64_t value) {
  const unsigned bucket = bucket_of(value);
  return lowest_equivalent(value) + ((std::uint64_t(1) << bucket) >> 1);
}

double Histogram::mean() const {
  if (total_ == 0) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < counts_len; ++i) {
    if (counts_[i] != 0) sum += double(counts_[i]) * double(median_equivalent(value_at_index(i)));
  }
  return sum / double(total_);
}

double Histogram::stdev() const {
  if (total_ == 0) return 0;
  const double m = mean();
  double sum = 0;
  for (std::size_t i = 0; i < counts_len; ++i) {
    if (counts_[i] == 0) continue;
    const double d = double(median_equivalent(value_at_index(i))) - m;
    sum += d * d * double(counts_[i]);
  }
  return std::sqrt(sum / double(total_));
}

std::uint64_t Histogram::value_at_percentile(double percentile) const {
  if (total_ == 0) return 0;
  // As HdrHistogram (Java, 2.1.10 on; Debian ships 2.1.11), in the same
  // floating-point steps: the first value with at least `percentile` of the
  // counts at or below it, so the count is rounded up (rounding to nearest
  // would report, for 99.99% of 115,400, a value that only 99.9896% are at
  // or below). The percentile is first taken one ulp lower, so that a
  // product that should be whole (90% of 10) and came out a hair above
  // is not rounded up a whole count.
  const double requested = std::clamp(std::nextafter(percentile, -HUGE_VAL), 0.0, 100.0);
  const double wanted_fp = requested * double(total_) / 100.0;
  const auto wanted = std::max<std::uint64_t>(1, std::uint64_t(std::ceil(wanted_fp)));
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < counts_len; ++i) {
    seen += counts_[i];
    if (seen >= wanted) return std::min(highest_equivalent(value_at_index(i)), max_);
  }
  assert(false && "counts add up to total");
  return max_;
}

}  // namespace ringhttp::client
