// The output pool alone: blocks lent up to its bound, waiters served
// oldest first with the block just given back, a waiter leaving from the
// middle of the line, and a lent block's parser buffers going with it.

#include "server/output_pool.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ringhttp::server {
namespace {

struct Pool : testing::Test {
  io::SlotTable<Connection> table;
  OutputPool pool{table};
  std::vector<Connection*> conns;

  void SetUp() override {
    ASSERT_EQ(table.init(8), "");
    ASSERT_EQ(pool.init(2), "");
    for (int i = 0; i < 6; ++i) conns.push_back(table.acquire());
  }
};

TEST_F(Pool, lends_up_to_its_bound_with_the_parser_buffers) {
  EXPECT_TRUE(pool.lend(*conns[0]));
  EXPECT_TRUE(pool.lend(*conns[1]));
  EXPECT_FALSE(pool.lend(*conns[2]));
  EXPECT_EQ(conns[2]->output, nullptr);
  EXPECT_EQ(pool.lent(), 2u);
  EXPECT_NE(conns[0]->output, conns[1]->output);
  EXPECT_TRUE(conns[0]->parser.has_buffers());
  EXPECT_FALSE(conns[2]->parser.has_buffers());
  EXPECT_EQ(pool.give_back(*conns[0]), nullptr);
  EXPECT_FALSE(conns[0]->parser.has_buffers());
  EXPECT_EQ(pool.lent(), 1u);
  EXPECT_TRUE(pool.lend(*conns[2]));
}

TEST_F(Pool, a_block_given_back_goes_to_the_oldest_waiter_with_an_empty_queue) {
  ASSERT_TRUE(pool.lend(*conns[0]));
  ASSERT_TRUE(pool.lend(*conns[1]));
  conns[0]->output->out.push().reset();
  OutputBlock* first = conns[0]->output;
  for (int i = 2; i < 6; ++i) pool.wait(*conns[i]);
  pool.stop_waiting(*conns[3]);  // from the middle of the line
  EXPECT_FALSE(conns[3]->waiting_output);
  EXPECT_EQ(pool.give_back(*conns[0]), conns[2]);
  EXPECT_EQ(conns[2]->output, first) << "the block just given back, not another";
  EXPECT_TRUE(conns[2]->output->out.empty());
  EXPECT_TRUE(conns[2]->parser.has_buffers());
  EXPECT_FALSE(conns[2]->waiting_output);
  EXPECT_EQ(pool.give_back(*conns[1]), conns[4]);
  pool.stop_waiting(*conns[5]);  // the last one
  EXPECT_FALSE(pool.has_waiters());
  EXPECT_EQ(pool.give_back(*conns[2]), nullptr);
  EXPECT_EQ(pool.lent(), 1u);
  // The line works again after emptying.
  ASSERT_TRUE(pool.lend(*conns[3]));
  pool.wait(*conns[5]);
  pool.wait(*conns[0]);
  EXPECT_EQ(pool.give_back(*conns[4]), conns[5]);
  EXPECT_EQ(pool.give_back(*conns[3]), conns[0]);
  EXPECT_FALSE(pool.has_waiters());
}

}  // namespace
}  // namespace ringhttp::server
