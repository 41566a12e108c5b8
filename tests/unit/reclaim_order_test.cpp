// The order a full table reclaims idle connections in (server/reclaim_order.hpp).

#include "server/reclaim_order.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ringhttp::server {
namespace {

struct Idle {
  std::uint64_t last_activity_ms = 0;
  std::uint64_t requests_done = 0;
};

TEST(ReclaimOrder, the_one_idle_longer_goes_first) {
  EXPECT_TRUE(reclaimed_before(Idle{100, 0}, Idle{101, 5}));
  EXPECT_FALSE(reclaimed_before(Idle{101, 5}, Idle{100, 0}));
  EXPECT_TRUE(reclaimed_before(Idle{100, 3}, Idle{101, 0}));
}

// A newcomer accepted in the millisecond the others were answered in may
// have its first request on the way: an answered connection goes first.
TEST(ReclaimOrder, within_a_millisecond_an_answered_one_goes_before_a_new_one) {
  EXPECT_TRUE(reclaimed_before(Idle{100, 1}, Idle{100, 0}));
  EXPECT_FALSE(reclaimed_before(Idle{100, 0}, Idle{100, 1}));
  // Otherwise a tie stays a tie: the table's scan keeps the first found.
  EXPECT_FALSE(reclaimed_before(Idle{100, 1}, Idle{100, 2}));
  EXPECT_FALSE(reclaimed_before(Idle{100, 0}, Idle{100, 0}));
}

}  // namespace
}  // namespace ringhttp::server
