#pragma once
// A per-shard counter: written by its shard's thread only, read by anyone.
//
// Single writer means no read-modify-write is needed: the owner loads and
// stores with relaxed ordering, which compiles to plain moves on x86-64 (no
// lock prefix, no fence), while a reader on another thread still gets a
// well-defined (if slightly stale) value instead of a data race.

#include <atomic>
#include <cstdint>

namespace ringhttp::metrics {

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  std::uint64_t read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

// A per-shard level (buffers held now, say), with the same single-writer
// rule; summed over shards on read like a counter.
class Gauge {
 public:
  void set(std::uint64_t n) { value_.store(n, std::memory_order_relaxed); }
  std::uint64_t read() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);

}  // namespace ringhttp::metrics
