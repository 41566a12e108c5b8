// The batching wait's window (client/load/batch_wait.hpp): a hundredth of
// the shortest round trip since the last tick, none below 5 µs, at most
// 50; a fixed one whatever the round trips.

#include "client/load/batch_wait.hpp"

#include <gtest/gtest.h>

namespace ringhttp::client {
namespace {

constexpr std::uint64_t us = 1000;
constexpr std::uint64_t ms = 1000 * us;

TEST(BatchWait, auto_is_a_hundredth_of_the_shortest_round_trip_since_the_last_tick) {
  BatchWait w(std::nullopt);
  EXPECT_EQ(w.next(), 0u);  // nothing seen yet
  w.observe(3 * ms);
  w.observe(2 * ms);
  w.observe(4 * ms);
  EXPECT_EQ(w.next(), 20u);
  // Each tick starts over: what the last one saw no longer counts.
  EXPECT_EQ(w.next(), 0u);
  w.observe(3 * ms);
  EXPECT_EQ(w.next(), 30u);
}

TEST(BatchWait, auto_stays_between_none_and_the_ceiling) {
  BatchWait w(std::nullopt);
  w.observe(100 * ms);
  EXPECT_EQ(w.next(), BatchWait::max_us);
  w.observe(499 * us);  // 4.99 µs: not worth a timer
  EXPECT_EQ(w.next(), 0u);
  w.observe(500 * us);
  EXPECT_EQ(w.next(), BatchWait::min_us);
  w.observe(1 * ms);
  w.observe(40 * us);  // one fast answer is enough to shorten it
  EXPECT_EQ(w.next(), 0u);
}

TEST(BatchWait, a_fixed_window_ignores_the_round_trips) {
  BatchWait fixed(35);
  EXPECT_EQ(fixed.next(), 35u);
  fixed.observe(10 * us);
  EXPECT_EQ(fixed.next(), 35u);
  BatchWait off(0);
  off.observe(100 * ms);
  EXPECT_EQ(off.next(), 0u);
}

}  // namespace
}  // namespace ringhttp::client
