// The slot table the server's shards and the client's workers share: slots
// constructed only when first handed out, reused last-in first-out, a new
// generation at every hand-out so a late completion is recognised, and a
// full table that says so instead of growing.
#include <gtest/gtest.h>

#include "core/io/slot_table.hpp"

namespace ringhttp::io {
namespace {

struct TestSlot {
  static inline int alive = 0;
  TestSlot() { ++alive; }
  ~TestSlot() { --alive; }
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  int payload[1024];  // left uninitialized, as a connection's buffers are
};

TEST(SlotTable, slots_are_constructed_only_when_first_handed_out) {
  {
    SlotTable<TestSlot> table;
    ASSERT_EQ(table.init(1000), "");
    EXPECT_EQ(table.constructed(), 0u);
    EXPECT_EQ(TestSlot::alive, 0);
    TestSlot* a = table.acquire();
    TestSlot* b = table.acquire();
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(a->slot, 0u);
    EXPECT_EQ(b->slot, 1u);
    EXPECT_EQ(table.constructed(), 2u);
    EXPECT_EQ(TestSlot::alive, 2);
  }
  EXPECT_EQ(TestSlot::alive, 0) << "the table destroys what it constructed";
}

TEST(SlotTable, a_released_slot_comes_back_first_with_a_new_generation) {
  SlotTable<TestSlot> table;
  ASSERT_EQ(table.init(8), "");
  TestSlot* a = table.acquire();
  TestSlot* b = table.acquire();
  const Tag old_b{Op::recv, b->slot, b->generation};
  table.release(*a);
  table.release(*b);
  TestSlot* again = table.acquire();
  EXPECT_EQ(again, b) << "last in, first out: the warmest slot";
  EXPECT_EQ(table.constructed(), 2u) << "reuse before constructing more";
  EXPECT_EQ(table.find(old_b), nullptr) << "a completion for the slot's earlier use is stale";
  EXPECT_EQ(table.find(Tag{Op::recv, b->slot, b->generation}), b);
}

TEST(SlotTable, renew_makes_the_old_tags_stale_in_place) {
  SlotTable<TestSlot> table;
  ASSERT_EQ(table.init(1), "");
  TestSlot* a = table.acquire();
  const Tag before{Op::connect, a->slot, a->generation};
  table.renew(*a);
  EXPECT_EQ(table.find(before), nullptr);
  EXPECT_EQ(table.find(Tag{Op::connect, a->slot, a->generation}), a);
}

TEST(SlotTable, a_full_table_hands_out_nothing_until_a_slot_is_released) {
  SlotTable<TestSlot> table;
  ASSERT_EQ(table.init(3), "");
  TestSlot* slots[3];
  for (auto& s : slots) s = table.acquire();
  EXPECT_TRUE(table.full());
  EXPECT_EQ(table.acquire(), nullptr);
  table.release(*slots[1]);
  EXPECT_FALSE(table.full());
  EXPECT_EQ(table.acquire(), slots[1]);
  EXPECT_EQ(table.constructed(), 3u);
}

TEST(InFlight, counts_operations_and_is_none_only_at_zero) {
  InFlight f;
  EXPECT_TRUE(f.none());
  f.add();
  f.add();
  f.done();
  EXPECT_FALSE(f.none());
  f.done();
  EXPECT_TRUE(f.none());
}

}  // namespace
}  // namespace ringhttp::io
