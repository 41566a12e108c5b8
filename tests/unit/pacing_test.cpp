// The open model's schedule: evenly spaced over all connections, no drift.

#include "client/load/pacing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
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

// The cursor visits a worker's connections in exactly the order, and at
// exactly the times, that their own Pacing gives them: every slot of the
// schedule whose connection is one of [first, first + count), none other.
TEST(ScheduleCursor, visits_exactly_the_slots_of_its_connections_in_order) {
  constexpr std::uint64_t start_ns = 5'000;
  constexpr std::uint64_t rate = 7'777;
  constexpr std::uint32_t connections = 10;
  for (const auto& [first, count] : {std::pair{0u, 10u}, std::pair{0u, 3u}, std::pair{3u, 4u}, std::pair{7u, 3u},
                                     std::pair{9u, 1u}}) {
    std::vector<Pacing> own;
    for (std::uint32_t i = 0; i < count; ++i) own.emplace_back(start_ns, rate, connections, first + i);
    std::vector<std::pair<std::uint64_t, std::uint32_t>> expected;  // (due, connection) of the next 1,000 slots
    std::vector<Pacing> walk = own;
    for (int n = 0; n < 1000; ++n) {
      const auto next = std::min_element(walk.begin(), walk.end(),
                                         [](const Pacing& a, const Pacing& b) { return a.next_ns() < b.next_ns(); });
      expected.emplace_back(next->next_ns(), std::uint32_t(next - walk.begin()));
      next->advance();
    }
    ScheduleCursor cursor(start_ns, rate, connections, first, count);
    for (int n = 0; n < 1000; ++n) {
      ASSERT_EQ(cursor.due_ns(), expected[std::size_t(n)].first) << first << "+" << count << " slot " << n;
      ASSERT_EQ(cursor.connection(), expected[std::size_t(n)].second) << first << "+" << count << " slot " << n;
      cursor.advance();
    }
  }
}

}  // namespace
}  // namespace ringhttp::client
