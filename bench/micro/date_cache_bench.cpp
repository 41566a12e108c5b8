// The Date header line (core/http/date_cache): what a send reads (the
// cached line, once per send batch in Session::flush, so at most once per
// response), and what the shard's 100 ms tick pays (a check of the second,
// and once a second the formatting of a new line).
//
// What it does not measure: std::time() itself, which the tick calls first
// (a vDSO read, no system call).

#include <benchmark/benchmark.h>

#include <ctime>

#include "bench/micro/items.hpp"
#include "core/http/date_cache.hpp"

namespace {

using ringhttp::http::DateCache;

// 2026-06-01 00:00:00 UTC: a fixed, realistic date, so every run formats the
// same digits.
constexpr std::time_t some_second = 1'780'272'000;

// The per-request read: a view of the current generation's bytes. The
// clobber makes the compiler reload it from memory every time, as flush()
// does once per call.
void DateLine(benchmark::State& state) {
  DateCache date;
  date.refresh(some_second);
  for (auto _ : state) {
    auto line = date.line();
    benchmark::DoNotOptimize(line);
    benchmark::ClobberMemory();
  }
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(DateLine);

// Nine ticks in ten: the second has not changed, nothing is written.
void DateRefreshSameSecond(benchmark::State& state) {
  DateCache date;
  date.refresh(some_second);
  for (auto _ : state) {
    bool changed = date.refresh(some_second);
    benchmark::DoNotOptimize(changed);
  }
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(DateRefreshSameSecond);

// Once a second: gmtime_r and snprintf into the next generation's slot.
// Every iteration is a new second here.
void DateRefreshNewSecond(benchmark::State& state) {
  DateCache date;
  std::time_t now = some_second;
  for (auto _ : state) {
    bool changed = date.refresh(++now);
    benchmark::DoNotOptimize(changed);
    benchmark::ClobberMemory();
  }
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(DateRefreshNewSecond);

}  // namespace
