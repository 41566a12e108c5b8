#pragma once
// The batching wait (--batch-wait): how long a wait for completions may
// hold the first one back so that one wake handles many. Under load a
// worker that wakes for each completion spends its CPU on wake-ups: a
// server's responses arrive a few at a time, and each wake sends as little
// as it received. Waiting a little gathers them, at the cost of reading
// each response up to that much later, which adds as much to the latency
// measured. So the wait is bounded by the latency itself: at most a
// hundredth of the shortest round trip seen in the last tick, and never
// more than a few loopback round trips. At low load (round trips of tens of
// µs) it is no wait at all; at 2,000 requests in flight (round trips of
// milliseconds) it is the ceiling.
//
// On io_uring with min_wait_usec (Linux 6.12, uring::Ring::set_batch_wait);
// the epoll backend has none.

#include <algorithm>
#include <cstdint>
#include <optional>

#include "core/io/completion.hpp"

namespace ringhttp::client {

class BatchWait {
 public:
  // The window is at most 1/share of the shortest round trip: the most it
  // adds to any latency measured is 1%.
  static constexpr std::uint64_t share = 100;
  // The ceiling, in µs: a few loopback round trips, what one wake can use.
  static constexpr std::uint32_t max_us = 50;
  // The completions a wait gathers at most before the window ends: a
  // whole reap (io::reap_batch_max), so that only the window ends a wait.
  static constexpr std::uint32_t batch = io::reap_batch_max;
  // Below this many µs a timer costs more than the wake it saves: no wait.
  static constexpr std::uint32_t min_us = 5;
  // --batch-wait's own ceiling for a fixed window, in µs.
  static constexpr std::uint64_t fixed_max_us = 1000;

  // `fixed_us`: that window always (0: none); nullopt: the automatic one.
  explicit BatchWait(std::optional<std::uint32_t> fixed_us) : fixed_us_(fixed_us) {}

  // A response's round trip, from its request's send to now.
  void observe(std::uint64_t round_trip_ns) { shortest_ns_ = std::min(shortest_ns_, round_trip_ns); }

  // Once a tick: the window for the waits until the next, from the round
  // trips seen since the last (none seen: no wait).
  std::uint32_t next() {
    if (fixed_us_) return *fixed_us_;
    const std::uint64_t us = shortest_ns_ == UINT64_MAX ? 0 : shortest_ns_ / share / 1000;
    shortest_ns_ = UINT64_MAX;
    if (us < min_us) return 0;
    return std::uint32_t(std::min<std::uint64_t>(us, max_us));
  }

 private:
  std::optional<std::uint32_t> fixed_us_;
  std::uint64_t shortest_ns_ = UINT64_MAX;
};

}  // namespace ringhttp::client
