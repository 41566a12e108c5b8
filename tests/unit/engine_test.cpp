// The connection engine's bookkeeping (core/io/engine.hpp) over a fake
// backend that records each operation asked of it (fake_backend.hpp): the
// tests hand the engine the completions a kernel would make, in the orders
// a kernel may make them, with no socket and no ring.

#include "core/io/engine.hpp"

#include <gtest/gtest.h>
#include <liburing.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <span>
#include <string>
#include <vector>

#include "core/uring/compat.hpp"
#include "tests/unit/fake_backend.hpp"

namespace ringhttp::io {
namespace {

using FakeBackend = testing_support::FakeIo;

struct Slot : Link {};

class EngineTest : public testing::Test {
 protected:
  void SetUp() override {
    Engine<FakeBackend, Slot>::Config config;
    config.slots = 4;
    config.enobufs_in_a_row_max = 2;
    ASSERT_EQ(engine.init({}, config), "");
    s = engine.table().acquire();
    ASSERT_NE(s, nullptr);
    engine.open(*s, 7);
  }
  FakeBackend& io() { return engine.backend(); }
  const FakeBackend::Asked& last() { return io().asked.back(); }
  Completion completion(Op op, std::int32_t res, std::uint32_t flags = 0) {
    return {Engine<FakeBackend, Slot>::tag(op, *s), res, flags};
  }
  Completion data(std::int32_t res, std::uint16_t buffer, bool more) {
    return completion(Op::recv, res, io::completion_flags::buffer | (std::uint32_t(buffer) << io::completion_flags::buffer_id_shift) |
                                         (more ? io::completion_flags::more : 0));
  }

  Engine<FakeBackend, Slot> engine;
  Slot* s = nullptr;
};

using SlotEngine = Engine<FakeBackend, Slot>;

TEST_F(EngineTest, a_multishot_receive_stays_armed_while_the_kernel_says_more) {
  engine.arm_receive(*s);
  EXPECT_TRUE(s->recv_armed && s->recv_multishot);
  EXPECT_EQ(s->inflight.count, 1u);
  Received r = engine.on_receive(*s, data(5, 3, true));
  EXPECT_EQ(r.kind, Received::Kind::data);
  EXPECT_EQ(r.len, 5u);
  EXPECT_EQ(r.buffer_id, 3);
  EXPECT_TRUE(s->recv_armed);
  EXPECT_EQ(s->inflight.count, 1u);
  r = engine.on_receive(*s, completion(Op::recv, 0));
  EXPECT_EQ(r.kind, Received::Kind::eof);
  EXPECT_FALSE(s->recv_armed);
  EXPECT_TRUE(s->inflight.none());
}

TEST_F(EngineTest, a_dry_buffer_pool_rearms_after_the_batch_then_on_the_tick) {
  engine.arm_receive(*s);
  Received r = engine.on_receive(*s, completion(Op::recv, -ENOBUFS));
  EXPECT_EQ(r.kind, Received::Kind::rearm);
  EXPECT_TRUE(s->dirty);  // on the batch's list
  EXPECT_TRUE(engine.rearm_due(*s));
  engine.drain_dirty([&](Slot& d) {
    if (engine.rearm_due(d)) engine.arm_receive(d);
  });
  EXPECT_FALSE(s->dirty);
  EXPECT_EQ(io().asked.size(), 2u);
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ENOBUFS)).kind, Received::Kind::rearm);
  engine.arm_receive(*s);
  // The third in a row (the maximum is 2 here) waits for the tick.
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ENOBUFS)).kind, Received::Kind::rearm_on_tick);
  EXPECT_TRUE(engine.rearm_due(*s));
  engine.arm_receive(*s);
  EXPECT_EQ(engine.on_receive(*s, data(1, 0, false)).kind, Received::Kind::data);
  EXPECT_EQ(s->enobufs_in_a_row, 0u);  // bytes reset the count
}

TEST_F(EngineTest, a_reset_is_the_peer_gone_and_our_cancel_is_ours) {
  engine.arm_receive(*s);
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ECONNRESET)).kind, Received::Kind::peer_gone);
  engine.arm_receive(*s);
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ECANCELED)).kind, Received::Kind::cancelled);
  EXPECT_FALSE(engine.rearm_due(*s));
}

TEST_F(EngineTest, a_short_write_of_a_message_resumes_at_the_next_unsent_byte) {
  std::string a = "HTTP/1.1 200 OK\r\n", b = "Date: x\r\n", c = "\r\nhello";
  std::array<iovec, 3> iov{{{a.data(), a.size()}, {b.data(), b.size()}, {c.data(), c.size()}}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  const std::string whole = a + b + c;
  engine.send_message(*s, &msg, whole.size());
  EXPECT_EQ(last().bytes, whole);
  std::size_t sent = 0;
  for (const std::size_t part : {3u, 17u, 5u}) {  // inside the first iovec, across two, inside the second
    const Sent r = engine.on_send(*s, completion(Op::send, std::int32_t(part)));
    sent += part;
    EXPECT_EQ(r.kind, Sent::Kind::written);
    EXPECT_TRUE(s->send_inflight);
    EXPECT_EQ(last().bytes, whole.substr(sent)) << "after " << sent << " bytes";
  }
  const Sent r = engine.on_send(*s, completion(Op::send, std::int32_t(whole.size() - sent)));
  EXPECT_EQ(r.kind, Sent::Kind::done);
  EXPECT_FALSE(s->send_inflight);
  EXPECT_TRUE(s->inflight.none());
  EXPECT_EQ(io().asked.size(), 4u);  // the send and its three resumptions
}

TEST_F(EngineTest, a_short_write_of_a_range_resumes_at_the_next_unsent_byte) {
  const std::string bytes = "GET / HTTP/1.1\r\n\r\n";
  engine.send(*s, bytes.data(), std::uint32_t(bytes.size()));
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, 4)).kind, Sent::Kind::written);
  EXPECT_EQ(last().bytes, bytes.substr(4));
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, std::int32_t(bytes.size() - 4))).kind, Sent::Kind::done);
}

TEST_F(EngineTest, a_failed_send_is_not_resumed) {
  const std::string bytes = "abc";
  engine.send(*s, bytes.data(), 3);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -EPIPE)).kind, Sent::Kind::failed);
  EXPECT_FALSE(s->send_inflight);
  EXPECT_EQ(io().asked.size(), 1u);
}

TEST_F(EngineTest, a_send_that_wrote_nothing_is_made_again_at_once_then_on_the_tick) {
  const std::string bytes = "abcdef";
  engine.send(*s, bytes.data(), 6);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -EAGAIN)).kind, Sent::Kind::again);
  EXPECT_EQ(io().asked.size(), 2u) << "the first is made again at once";
  EXPECT_EQ(last().bytes, bytes);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -EAGAIN)).kind, Sent::Kind::again);
  EXPECT_EQ(io().asked.size(), 2u) << "the second in a row waits for the tick";
  EXPECT_TRUE(s->send_inflight) << "still the send in flight: nothing is sent before it";
  EXPECT_TRUE(s->inflight.none()) << "but nothing of it is in the kernel";
  engine.resume_parked_send(*s);
  EXPECT_EQ(io().asked.size(), 3u);
  EXPECT_EQ(last().bytes, bytes);
  engine.resume_parked_send(*s);
  EXPECT_EQ(io().asked.size(), 3u) << "made again once per park";
  // Progress ends the streak: the next that writes nothing is made again at once.
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, 2)).kind, Sent::Kind::written);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -EAGAIN)).kind, Sent::Kind::again);
  EXPECT_EQ(io().asked.size(), 5u);
  EXPECT_EQ(last().bytes, bytes.substr(2));
}

TEST_F(EngineTest, a_parked_send_is_dropped_by_cancel_all_with_nothing_to_cancel) {
  const std::string bytes = "abc";
  engine.send(*s, bytes.data(), 3);
  engine.on_send(*s, completion(Op::send, -EAGAIN));
  engine.on_send(*s, completion(Op::send, -EAGAIN));
  EXPECT_EQ(engine.cancel_all(*s), 0u);
  EXPECT_FALSE(s->send_inflight);
  EXPECT_TRUE(engine.closed(*s));
  engine.resume_parked_send(*s);
  EXPECT_EQ(io().asked.size(), 2u) << "a closing slot sends nothing more";
}

TEST_F(EngineTest, a_closing_slot_does_not_make_again_a_send_that_wrote_nothing) {
  const std::string bytes = "abc";
  engine.send(*s, bytes.data(), 3);
  engine.cancel_all(*s);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -EAGAIN)).kind, Sent::Kind::failed);
  EXPECT_EQ(io().asked.size(), 2u);  // the send and its cancel
}

// An engine sending zero-copy, one slot open, and a message to send.
class ZeroCopyEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Engine<FakeBackend, Slot>::Config config;
    config.slots = 1;
    config.send_mode = SendMode::zc;
    ASSERT_EQ(zc.init({}, config), "");
    slot = zc.table().acquire();
    zc.open(*slot, 9);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
  }
  // Sends the body; its result arrives, its notification still to come.
  std::uint64_t send_body_owing_its_notification() {
    zc.send_message(*slot, &msg, body.size());
    const std::uint64_t tag = Engine<FakeBackend, Slot>::tag(Op::send, *slot);
    EXPECT_EQ(zc.on_send(*slot, {tag, 4, io::completion_flags::more}).kind, Sent::Kind::done);
    return tag;
  }

  Engine<FakeBackend, Slot> zc;
  Slot* slot = nullptr;
  std::string body = "body";
  iovec iov{body.data(), body.size()};
  msghdr msg{};
};

TEST_F(ZeroCopyEngineTest, a_zero_copy_notification_keeps_the_slot_until_it_arrives) {
  Slot& z = *slot;
  const std::uint64_t tag = send_body_owing_its_notification();
  EXPECT_EQ(z.zc_pending, 1u);
  zc.cancel_all(z);
  EXPECT_FALSE(zc.closed(z));  // the kernel may still read the bytes
  EXPECT_TRUE(zc.on_send_notification(z, {tag, std::int32_t(io::zero_copy_copied), io::completion_flags::notification}));
  EXPECT_TRUE(zc.closed(z));
}

TEST_F(ZeroCopyEngineTest, a_closing_zero_copy_slot_owing_notifications_is_reset_and_closed_after_them) {
  Slot& z = *slot;
  EXPECT_FALSE(zc.owes_zero_copy_notifications(z));
  const std::uint64_t tag = send_body_owing_its_notification();
  zc.cancel_all(z);
  ASSERT_TRUE(zc.owes_zero_copy_notifications(z));
  zc.reset(z);
  EXPECT_EQ(zc.backend().asked.back().bytes, "reset");
  zc.on_shutdown(z, {Engine<FakeBackend, Slot>::tag(Op::shutdown, z), 0, 0});
  EXPECT_FALSE(zc.closed(z)) << "the notification is still owed";
  zc.on_send_notification(z, {tag, 0, io::completion_flags::notification});
  EXPECT_TRUE(zc.closed(z));
  EXPECT_FALSE(zc.owes_zero_copy_notifications(z));
}

TEST_F(EngineTest, a_slot_is_closed_only_after_its_last_completion) {
  engine.arm_receive(*s);
  const std::string bytes = "abc";
  engine.send(*s, bytes.data(), 3);
  EXPECT_EQ(engine.cancel_all(*s), 2u);
  EXPECT_TRUE(s->closing);
  EXPECT_EQ(s->inflight.count, 4u);  // the receive, the send, and a cancel for each
  // Completions in any order: the cancels first, then the cancelled.
  engine.on_cancel(*s, completion(Op::cancel, 0));
  engine.on_cancel(*s, completion(Op::cancel, 0));
  EXPECT_FALSE(engine.closed(*s));
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, -ECANCELED)).kind, Sent::Kind::failed);
  EXPECT_FALSE(engine.closed(*s));
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ECANCELED)).kind, Received::Kind::cancelled);
  EXPECT_TRUE(engine.closed(*s));
  engine.release(*s);
  EXPECT_EQ(io().closed, (std::vector<int>{7}));
  EXPECT_EQ(s->fd, -1);
}

TEST_F(EngineTest, a_closing_slot_resumes_no_short_write) {
  const std::string bytes = "abcdef";
  engine.send(*s, bytes.data(), 6);
  engine.cancel_all(*s);
  EXPECT_EQ(engine.on_send(*s, completion(Op::send, 2)).kind, Sent::Kind::done);
  EXPECT_EQ(io().asked.size(), 2u);  // the send and its cancel, no resumption
}

TEST_F(EngineTest, a_cancel_that_missed_a_multishot_receive_is_made_again) {
  engine.arm_receive(*s);
  engine.stop_receiving(*s);
  EXPECT_EQ(last().op, Op::cancel);
  EXPECT_EQ(last().target, SlotEngine::tag(Op::recv, *s));
  engine.stop_receiving(*s);  // asked once is enough
  EXPECT_EQ(io().asked.size(), 2u);
  // The kernel found nothing to cancel (the receive was between two rounds
  // of its retries) and the receive goes on delivering: cancelled again.
  EXPECT_EQ(engine.on_cancel(*s, completion(Op::cancel, -ENOENT)), 1u);
  EXPECT_EQ(io().asked.size(), 3u);
  EXPECT_EQ(last().target, SlotEngine::tag(Op::recv, *s));
  EXPECT_EQ(engine.on_receive(*s, data(4, 1, true)).kind, Received::Kind::data);
  EXPECT_EQ(engine.on_receive(*s, completion(Op::recv, -ECANCELED)).kind, Received::Kind::cancelled);
  // A cancel that finds nothing because its target ended is not made again.
  EXPECT_EQ(engine.on_cancel(*s, completion(Op::cancel, -ENOENT)), 0u);
  EXPECT_TRUE(s->inflight.none());
}

TEST_F(EngineTest, a_cancel_that_missed_keeps_a_closing_slot_until_made_again) {
  engine.arm_receive(*s);
  engine.cancel_all(*s);
  EXPECT_EQ(engine.on_cancel(*s, completion(Op::cancel, -EALREADY)), 1u);
  EXPECT_FALSE(engine.closed(*s));
  engine.on_cancel(*s, completion(Op::cancel, 0));
  engine.on_receive(*s, completion(Op::recv, -ECANCELED));
  EXPECT_TRUE(engine.closed(*s));
}

TEST_F(EngineTest, a_single_shot_receive_is_not_cancelled_to_pause) {
  engine.arm_receive(*s, false);
  EXPECT_FALSE(s->recv_multishot);
  engine.stop_receiving(*s);
  EXPECT_EQ(io().asked.size(), 1u);
}

TEST_F(EngineTest, pinned_work_keeps_a_slot_open) {
  Engine<FakeBackend, Slot>::pin(*s);  // a database query writing into it
  engine.cancel_all(*s);
  EXPECT_FALSE(engine.closed(*s));
  Engine<FakeBackend, Slot>::unpin(*s);
  EXPECT_TRUE(engine.closed(*s));
}

TEST_F(EngineTest, a_connect_is_in_flight_until_its_result) {
  engine.table().renew(*s);
  engine.open(*s, 8);
  engine.connect(*s, net::Address{});
  EXPECT_TRUE(s->connecting);
  EXPECT_EQ(engine.cancel_all(*s), 1u);
  EXPECT_EQ(engine.on_connect(*s, completion(Op::connect, -ECANCELED)), -ECANCELED);
  engine.on_cancel(*s, completion(Op::cancel, 0));
  EXPECT_TRUE(engine.closed(*s));
}

}  // namespace
}  // namespace ringhttp::io
