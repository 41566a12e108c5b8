// The client's latency histogram (client/results/histogram.hpp): record(), once per
// response (twice in rate mode, plus once more with --hdr-log), and merge(),
// at the end of a run, twice per worker (corrected and uncorrected).
//
// Values are drawn before the timed loop from a log-normal distribution
// with a median of 250 µs and sigma 1 (99% between 19 µs and 3.3 ms; all
// 65,536 between about 3 µs and 15 ms), so records land in about 12 of the
// histogram's power-of-two buckets, as a loaded loopback run's do, rather
// than hitting one hot counter. What it does not measure: reading the clock
// that produces a latency.

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "bench/micro/items.hpp"
#include "client/results/histogram.hpp"

namespace {

using ringhttp::client::Histogram;

constexpr std::size_t values_len = std::size_t(1) << 16;  // 512 KiB of values, cycled

std::vector<std::uint64_t> latencies_ns() {
  std::mt19937_64 random(20260601);  // fixed: every run records the same values
  std::lognormal_distribution<double> latency(std::log(250'000.0), 1.0);
  std::vector<std::uint64_t> values(values_len);
  for (auto& v : values) v = std::uint64_t(latency(random)) + 1;
  return values;
}

void HistogramRecord(benchmark::State& state) {
  const std::vector<std::uint64_t> values = latencies_ns();
  Histogram h;
  std::size_t i = 0;
  for (auto _ : state) {
    h.record(values[i]);
    i = (i + 1) & (values_len - 1);
    benchmark::ClobberMemory();  // each record is its own event in the worker
  }
  auto total = h.total();
  benchmark::DoNotOptimize(total);
  if (h.total() != std::uint64_t(state.iterations())) state.SkipWithError("records lost");
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(HistogramRecord);

// Merging one worker's histogram (full of values) into the totals: a pass
// over both count arrays (28,672 counts, 224 KiB each). Items are merges.
void HistogramMerge(benchmark::State& state) {
  const std::vector<std::uint64_t> values = latencies_ns();
  Histogram totals;
  Histogram worker;
  for (const std::uint64_t v : values) {
    totals.record(v);
    worker.record(v);
  }
  for (auto _ : state) {
    totals.merge(worker);
    benchmark::ClobberMemory();
  }
  auto total = totals.total();
  benchmark::DoNotOptimize(total);
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(HistogramMerge);

}  // namespace
