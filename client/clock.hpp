#pragma once
// The one clock of the client: CLOCK_MONOTONIC in nanoseconds. Wall-clock
// time can jump (NTP, the user); a latency must not.

#include <errno.h>
#include <time.h>

#include <cstdint>

namespace ringhttp::client {

inline std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000 + std::uint64_t(ts.tv_nsec);
}

// Sleeps until an absolute monotonic time (no drift from repeated sleeps).
inline void sleep_until_ns(std::uint64_t deadline_ns) {
  timespec ts{};
  ts.tv_sec = time_t(deadline_ns / 1'000'000'000);
  ts.tv_nsec = long(deadline_ns % 1'000'000'000);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace ringhttp::client
