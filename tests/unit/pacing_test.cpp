// The open model's schedule: evenly spaced over all connections, no drift.

#include "client/pacing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace ringhttp::client {
namespace {

TEST(Pacing, all_connections_together_send_one_request_every_one_over_rate) {
  constexpr std::uint64_t start_ns = 1'000'000;
  constexpr std::uint64_t rate = 1000;  // 1 ms apart
  constexpr std::uint32_t connections = 4;
  std::vector<std::uint64_t> times;
  for (std::uint32_t g = 0; g < connections; ++g) {
    Pacing p(start_ns, rate, connections, g);
    for (int k = 0; k < 25; ++k) {
      times.push_back(p.next_ns());
      p.advance();
    }
  }
  std::sort(times.begin(), times.end());
  for (std::size_t i = 0; i < times.size(); ++i) EXPECT_EQ(times[i], start_ns + i * 1'000'000) << i;
}

TEST(Pacing, a_rate_that_does_not_divide_a_second_does_not_drift) {
  // 3 requests/s on 7 connections: each connection every 7/3 s, which no
  // whole number of nanoseconds is. After a million requests the schedule is
  // still within a nanosecond of exact.
  Pacing p(0, 3, 7, 2);
  for (int k = 0; k < 1'000'000; ++k) p.advance();
  // slot = 2 + 7,000,000 = 7,000,002; 7,000,002 / 3 s = 2,333,334 s exactly.
  EXPECT_EQ(p.next_ns(), 2'333'334'000'000'000u);
}

TEST(Pacing, count_due_in_a_window_is_rate_times_window) {
  constexpr std::uint64_t rate = 12'345;
  constexpr std::uint32_t connections = 10;
  constexpr std::uint64_t window_ns = 2'000'000'000;
  std::uint64_t due = 0;
  for (std::uint32_t g = 0; g < connections; ++g) {
    Pacing p(0, rate, connections, g);
    while (p.next_ns() < window_ns) {
      ++due;
      p.advance();
    }
  }
  EXPECT_EQ(due, rate * 2);
}

}  // namespace
}  // namespace ringhttp::client
