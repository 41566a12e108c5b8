// A database connection's pipeline queue (server/db/pipeline_queue.hpp):
// answers leave in the order their statements were sent, across the ring's
// wrap; a full queue says so; each entry keeps at most its one row within
// its bound; and a link reset hands every queued query over, oldest first.
// The db tests run the same queue under a real Postgres.
#include "server/db/pipeline_queue.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringhttp::server::db {
namespace {

using Kind = PipelineQueue::Kind;
using Entry = PipelineQueue::Entry;

Waiter waiter(std::uint64_t tag) { return Waiter{tag, nullptr}; }

TEST(DbPipelineQueue, entries_leave_oldest_first_across_the_wrap) {
  PipelineQueue q(3);
  std::uint64_t next_tag = 0;
  std::vector<std::uint64_t> popped;
  // Seven pushes through three slots: head and tail both wrap twice.
  for (int round = 0; round < 7; ++round) {
    q.push(Kind::query, Statement::user_by_id, waiter(next_tag++), 0);
    if (q.size() == 2) popped.push_back(q.pop().waiter.tag);
  }
  while (!q.empty()) popped.push_back(q.pop().waiter.tag);
  EXPECT_EQ(popped, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(DbPipelineQueue, a_push_starts_a_fresh_entry) {
  PipelineQueue q(1);
  Entry& first = q.push(Kind::query, Statement::user_insert, waiter(1), 10);
  first.completed = true;
  first.error = Outcome::failed;
  q.keep_row(first, "1", "a");
  q.pop();
  const Entry& second = q.push(Kind::prepare, Statement::user_by_id, waiter(2), 20);
  EXPECT_EQ(second.kind, Kind::prepare);
  EXPECT_EQ(second.statement, Statement::user_by_id);
  EXPECT_FALSE(second.completed);
  EXPECT_FALSE(second.has_row);
  EXPECT_EQ(second.error, Outcome::row);
  EXPECT_EQ(second.sent_ms, 20u);
  EXPECT_EQ(second.waiter.tag, 2u);
}

TEST(DbPipelineQueue, a_full_queue_says_so_until_one_leaves) {
  PipelineQueue q(2);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.full());
  q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  q.push(Kind::query, Statement::user_by_id, waiter(2), 0);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.size(), q.capacity());
  EXPECT_EQ(q.front().waiter.tag, 1u);
  q.pop();
  EXPECT_FALSE(q.full());
  q.push(Kind::query, Statement::user_by_id, waiter(3), 0);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.front().waiter.tag, 2u);
}

TEST(DbPipelineQueue, an_empty_queue_holds_nothing) {
  const PipelineQueue q;
  EXPECT_EQ(q.capacity(), 0u);
  EXPECT_TRUE(q.empty());
}

TEST(DbPipelineQueue, a_completed_query_with_a_row_answers_it) {
  PipelineQueue q(2);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  q.keep_row(e, "42", "user-42");
  e.completed = true;
  const Result r = q.result(q.pop());
  EXPECT_EQ(r.statement, Statement::user_by_id);
  EXPECT_EQ(r.outcome, Outcome::row);
  EXPECT_EQ(r.id, "42");
  EXPECT_EQ(r.name, "user-42");
}

TEST(DbPipelineQueue, a_completed_query_without_a_row_answers_no_row) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  e.completed = true;
  EXPECT_EQ(q.result(q.pop()).outcome, Outcome::no_row);
}

TEST(DbPipelineQueue, a_sync_answered_before_any_result_is_a_failure) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  q.keep_row(e, "1", "a");  // a row but no CommandComplete: not trusted
  EXPECT_EQ(q.result(q.pop()).outcome, Outcome::failed);
}

TEST(DbPipelineQueue, an_error_outranks_the_row) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_insert, waiter(1), 0);
  q.keep_row(e, "1", "a");
  e.error = Outcome::unavailable;
  e.completed = true;
  const Result r = q.result(q.pop());
  EXPECT_EQ(r.outcome, Outcome::unavailable);
  EXPECT_TRUE(r.id.empty());
  EXPECT_TRUE(r.name.empty());
}

TEST(DbPipelineQueue, a_row_of_exactly_the_bound_is_kept) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  const std::string id = "123";
  const std::string name(PipelineQueue::row_bytes_max - id.size(), 'n');
  q.keep_row(e, id, name);
  e.completed = true;
  const Result r = q.result(q.pop());
  EXPECT_EQ(r.outcome, Outcome::row);
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.name, name);
}

TEST(DbPipelineQueue, a_row_past_the_bound_fails_rather_than_being_cut) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  const std::string name(PipelineQueue::row_bytes_max, 'n');
  q.keep_row(e, "1", name);
  e.completed = true;
  EXPECT_FALSE(e.has_row);
  EXPECT_EQ(q.result(q.pop()).outcome, Outcome::failed);
}

TEST(DbPipelineQueue, only_the_first_row_is_kept) {
  PipelineQueue q(1);
  Entry& e = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  q.keep_row(e, "1", "first");
  q.keep_row(e, "2", "second");
  e.completed = true;
  const Result r = q.result(q.pop());
  EXPECT_EQ(r.id, "1");
  EXPECT_EQ(r.name, "first");
}

TEST(DbPipelineQueue, full_rows_side_by_side_stay_apart) {
  PipelineQueue q(2);
  const std::string a(PipelineQueue::row_bytes_max - 1, 'a');
  const std::string b(PipelineQueue::row_bytes_max - 1, 'b');
  Entry& first = q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  Entry& second = q.push(Kind::query, Statement::user_by_id, waiter(2), 0);
  q.keep_row(first, "1", a);
  q.keep_row(second, "2", b);
  first.completed = second.completed = true;
  const Result r1 = q.result(q.pop());
  EXPECT_EQ(r1.name, a);
  const Result r2 = q.result(q.pop());
  EXPECT_EQ(r2.name, b);
}

TEST(DbPipelineQueue, a_reset_hands_over_every_entry_oldest_first_and_empties) {
  PipelineQueue q(4);
  // Wrapped: two in and out first, so the four queued straddle the ring's end.
  q.push(Kind::query, Statement::user_by_id, waiter(90), 0);
  q.push(Kind::query, Statement::user_by_id, waiter(91), 0);
  q.pop();
  q.pop();
  q.push(Kind::prepare, Statement::user_by_id, waiter(0), 0);
  q.push(Kind::query, Statement::user_by_id, waiter(1), 0);
  q.push(Kind::query, Statement::user_insert, waiter(2), 0).completed = true;
  q.push(Kind::query, Statement::user_by_id, waiter(3), 0);
  ASSERT_TRUE(q.full());
  std::vector<std::uint64_t> handed;
  std::vector<Kind> kinds;
  q.clear([&](const Entry& e) {
    handed.push_back(e.waiter.tag);
    kinds.push_back(e.kind);
  });
  EXPECT_EQ(handed, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::prepare, Kind::query, Kind::query, Kind::query}));
  EXPECT_TRUE(q.empty());
  // And it takes a full pipeline again, in order.
  for (std::uint64_t t = 10; t < 14; ++t) q.push(Kind::query, Statement::user_by_id, waiter(t), 0);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.pop().waiter.tag, 10u);
}

TEST(DbPipelineQueue, a_reset_of_an_empty_queue_hands_over_nothing) {
  PipelineQueue q(2);
  int handed = 0;
  q.clear([&](const Entry&) { ++handed; });
  EXPECT_EQ(handed, 0);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace ringhttp::server::db
