// The held-input ring: arrival order kept, the chunk put back comes out
// first, wrap-around at its capacity, and full/empty exactly at the bounds.
#include <gtest/gtest.h>

#include "server/held_input.hpp"

namespace ringhttp::server {
namespace {

using Ring = HeldInput<int, 4>;

TEST(HeldInput, chunks_come_out_in_arrival_order) {
  Ring ring;
  EXPECT_TRUE(ring.empty());
  for (int i = 1; i <= 3; ++i) ring.push_back(i);
  EXPECT_EQ(ring.size(), 3u);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(ring.pop_front(), i);
  EXPECT_TRUE(ring.empty());
}

TEST(HeldInput, the_chunk_put_back_comes_out_first) {
  Ring ring;
  ring.push_back(2);
  ring.push_back(3);
  ring.push_front(1);
  for (int i = 1; i <= 3; ++i) EXPECT_EQ(ring.pop_front(), i);
}

TEST(HeldInput, full_at_capacity_and_order_kept_across_the_wrap) {
  Ring ring;
  int next_in = 0;
  int next_out = 0;
  // Many rounds, so head and tail wrap around the array several times.
  for (int round = 0; round < 10; ++round) {
    while (!ring.full()) ring.push_back(next_in++);
    EXPECT_EQ(ring.size(), Ring::capacity);
    EXPECT_EQ(ring.pop_front(), next_out++);
    EXPECT_EQ(ring.pop_front(), next_out++);
    ring.push_front(--next_out);  // put one back, as a pause does
    EXPECT_EQ(ring.pop_front(), next_out++);
  }
  while (!ring.empty()) EXPECT_EQ(ring.pop_front(), next_out++);
  EXPECT_EQ(next_in, next_out);
}

TEST(HeldInput, push_front_on_an_empty_ring_wraps_below_zero) {
  Ring ring;
  ring.push_front(7);
  ring.push_back(8);
  EXPECT_EQ(ring.pop_front(), 7);
  EXPECT_EQ(ring.pop_front(), 8);
  ring.clear();
  EXPECT_TRUE(ring.empty());
}

TEST(HeldInput, back_is_the_newest_across_the_wrap_and_can_grow) {
  Ring ring;
  for (int i = 0; i < int(Ring::capacity) - 1; ++i) ring.push_back(i);
  ring.pop_front();
  ring.push_back(100);
  ring.push_back(101);  // wraps to the array's start
  EXPECT_TRUE(ring.full());
  EXPECT_EQ(ring.back(), 101);
  ring.back() += 1;  // a trickled piece joined to the newest chunk
  while (ring.size() > 1) ring.pop_front();
  EXPECT_EQ(ring.pop_front(), 102);
  ring.push_front(5);
  EXPECT_EQ(ring.back(), 5);
}

}  // namespace
}  // namespace ringhttp::server
