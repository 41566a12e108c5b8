// The batch loop and slot operations the server's shards and the client's
// workers share (core/io/batch_loop.hpp): each completion handed to its
// owner once, the after-batch work once per batch for the slots it
// touched, and a failed receive turned into the same action on both sides.
#include <gtest/gtest.h>

#include <liburing.h>

#include <cerrno>
#include <vector>

#include "core/io/batch_loop.hpp"
#include "core/io/slot_table.hpp"
#include "core/uring/ring.hpp"

namespace ringhttp::io {
namespace {

using uring::Features;
using uring::Ring;

struct TestSlot {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  InFlight inflight;
  bool dirty = false;
  bool recv_armed = false;
  bool rearm_recv = false;
  std::uint8_t enobufs_in_a_row = 0;
  int after_batches = 0;
};

TEST(DirtyList, each_slot_once_in_the_order_first_touched_and_unmarked_before_its_work) {
  SlotTable<TestSlot> table;
  ASSERT_EQ(table.init(4), "");
  TestSlot* s[3] = {table.acquire(), table.acquire(), table.acquire()};
  DirtyList dirty;
  dirty.mark(*s[2]);
  dirty.mark(*s[0]);
  dirty.mark(*s[2]);
  std::vector<std::uint32_t> seen;
  dirty.drain(table, [&](TestSlot& t) {
    EXPECT_FALSE(t.dirty);
    seen.push_back(t.slot);
  });
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{2, 0}));
  // Marked again by its work (it made more to do), or another slot marked:
  // worked again in the same pass, after the others, and the list is empty
  // after.
  dirty.mark(*s[1]);
  dirty.mark(*s[0]);
  seen.clear();
  dirty.drain(table, [&](TestSlot& t) {
    seen.push_back(t.slot);
    if (seen.size() == 1) dirty.mark(t);
    if (seen.size() == 2) dirty.mark(*s[2]);
  });
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{1, 0, 1, 2}));
  seen.clear();
  dirty.drain(table, [&](TestSlot& t) { seen.push_back(t.slot); });
  EXPECT_TRUE(seen.empty());
}

TEST(ReceiveFailed, dry_ring_and_retry_rearm_after_the_batch_then_on_the_tick) {
  TestSlot s;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(receive_failed(s, -ENOBUFS, 3), ReceiveFailure::rearm) << i;
  EXPECT_TRUE(s.rearm_recv);
  EXPECT_EQ(receive_failed(s, -ENOBUFS, 3), ReceiveFailure::rearm_on_tick);
  s.rearm_recv = false;
  EXPECT_EQ(receive_failed(s, -EINTR, 3), ReceiveFailure::rearm);
  EXPECT_TRUE(s.rearm_recv);
  // A multishot receive still armed is not armed twice.
  s.rearm_recv = false;
  s.recv_armed = true;
  EXPECT_EQ(receive_failed(s, -EAGAIN, 3), ReceiveFailure::rearm);
  EXPECT_FALSE(s.rearm_recv);
  EXPECT_EQ(receive_failed(s, -ECANCELED, 3), ReceiveFailure::cancelled);
  EXPECT_EQ(receive_failed(s, -ECONNRESET, 3), ReceiveFailure::peer_gone);
  EXPECT_EQ(receive_failed(s, -ETIMEDOUT, 3), ReceiveFailure::peer_gone);
}

// A real ring: no-ops tagged with slots, run by the shared loop.
struct NopOwner {
  Ring& ring;
  SlotTable<TestSlot>& table;
  DirtyList dirty;
  int wakes = 0;
  int handled = 0;
  int batches = 0;
  int left;

  bool done() const { return left == 0; }
  std::optional<__kernel_timespec> wait_limit() const { return std::nullopt; }
  void on_wake() { ++wakes; }
  void dispatch(const Completion& c) {
    TestSlot* s = table.find(decode(c.user_data));
    ASSERT_NE(s, nullptr);
    s->inflight.done();
    dirty.mark(*s);
    ++handled;
    --left;
  }
  void after_batch() {
    ++batches;
    dirty.drain(table, [](TestSlot& s) { ++s.after_batches; });
  }
};

TEST(RunBatches, every_completion_once_and_the_after_batch_work_once_per_batch) {
  Ring ring;
  ASSERT_EQ(ring.init(64, Features{}), 0);
  SlotTable<TestSlot> table;
  ASSERT_EQ(table.init(4), "");
  TestSlot* a = table.acquire();
  TestSlot* b = table.acquire();
  for (int i = 0; i < 10; ++i) {
    TestSlot& s = i % 2 == 0 ? *a : *b;
    io_uring_sqe* sqe = ring.sqe();
    io_uring_prep_nop(sqe);
    sqe->user_data = tag(Op::recv, s);
    s.inflight.add();
  }
  NopOwner owner{ring, table, {}, 0, 0, 0, 10};
  run_batches(ring, owner);
  EXPECT_EQ(owner.handled, 10);
  EXPECT_TRUE(a->inflight.none() && b->inflight.none());
  EXPECT_EQ(owner.wakes, owner.batches);
  // Each slot's after-batch work ran once in every batch that touched it.
  EXPECT_EQ(a->after_batches, owner.batches);
  EXPECT_EQ(b->after_batches, owner.batches);
  EXPECT_FALSE(a->dirty || b->dirty);
}

}  // namespace
}  // namespace ringhttp::io
