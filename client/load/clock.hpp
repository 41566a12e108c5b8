#pragma once
// The one clock of the client: CLOCK_MONOTONIC in nanoseconds. Wall-clock
// time can jump (NTP, the user); a latency must not.

#include <time.h>

#include <cstdint>

namespace ringhttp::client {

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000 + std::uint64_t(ts.tv_nsec);
}

}  // namespace ringhttp::client
