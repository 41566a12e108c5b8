#pragma once
// Every benchmark here reports its work in items (requests, responses,
// records), so each row reads as time per item: items_per_second from
// SetItemsProcessed, and its inverse as `per_item` (seconds, printed with an
// SI prefix: 67.8n is 67.8 ns).

#include <benchmark/benchmark.h>

#include <cstdint>

namespace ringhttp::bench {

inline void set_items(benchmark::State& state, std::int64_t items_per_iteration) {
  const std::int64_t items = state.iterations() * items_per_iteration;
  state.SetItemsProcessed(items);
  state.counters["per_item"] =
      benchmark::Counter(double(items), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace ringhttp::bench
