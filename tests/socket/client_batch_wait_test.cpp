// The client's batching wait (--batch-wait, client/load/batch_wait.hpp):
// against a server whose every answer takes 2 ms, the automatic window
// grows to a hundredth of that round trip and no further, a fixed one is
// what was asked, and "off" and the epoll backend use none. The window
// used is read from the report (batch_wait_us_max), which says what was
// added to the latencies at most.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "support/canned_server.hpp"
#include "support/client_process.hpp"
#include "support/json_report.hpp"
#include "support/kernel_features.hpp"

namespace socket_test {
namespace {

constexpr std::uint32_t round_trip_ms = 2;

struct WaitRun {
  std::string batch_wait;
  std::uint64_t longest_us = 0;
  double median_us = 0;
};

// 40 requests on one connection, each answered 2 ms after it is read:
// 80 ms at least, several of the worker's 10 ms ticks.
WaitRun run_against_slow_server(const std::vector<std::string>& flags) {
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", CannedServer::After::keep_open);
  server.delay_each(round_trip_ms);
  std::vector<std::string> args = flags;
  for (const char* a : {"-c", "1", "-n", "40", "--json"}) args.emplace_back(a);
  args.push_back(server.url());
  const ClientRun run = run_client(args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  if (!report.ok()) return {};
  EXPECT_EQ(report.number("/requests"), 40u);
  return {report.text("/options/batch_wait"), report.number("/batch_wait_us_max"), report.real("/latency_us/p50")};
}

TEST(ClientBatchWait, auto_waits_a_hundredth_of_the_shortest_round_trip) {
  if (!kernel_has_min_wait()) GTEST_SKIP() << "this kernel has no IORING_FEAT_MIN_TIMEOUT (Linux 6.12): the batching wait needs it";
  const WaitRun r = run_against_slow_server({"--backend", "uring"});
  EXPECT_EQ(r.batch_wait, "auto");
  EXPECT_GE(r.median_us, round_trip_ms * 1000.0);
  // Every round trip is 2 ms or more: 20 µs at least, and 50 at most
  // whatever the round trips were.
  EXPECT_GE(r.longest_us, round_trip_ms * 1000 / 100);
  EXPECT_LE(r.longest_us, 50u);
}

TEST(ClientBatchWait, a_fixed_window_is_the_one_asked_for) {
  if (!kernel_has_min_wait()) GTEST_SKIP() << "this kernel has no IORING_FEAT_MIN_TIMEOUT (Linux 6.12): the batching wait needs it";
  const WaitRun r = run_against_slow_server({"--backend", "uring", "--batch-wait", "35us"});
  EXPECT_EQ(r.batch_wait, "35us");
  EXPECT_EQ(r.longest_us, 35u);
}

// A --uring profile older than 6.12 shows what that kernel would cost: it
// had no min_wait_usec, so no batching wait either.
TEST(ClientBatchWait, a_profile_before_6_12_has_none) {
  const WaitRun r = run_against_slow_server({"--uring", "6.10"});
  EXPECT_EQ(r.batch_wait, "auto");
  EXPECT_EQ(r.longest_us, 0u);
  if (!kernel_has_min_wait()) return;
  const WaitRun all = run_against_slow_server({"--uring", "6.12"});
  EXPECT_GE(all.longest_us, round_trip_ms * 1000 / 100) << "the profile that has it";
}

TEST(ClientBatchWait, off_and_the_epoll_backend_wait_for_nothing) {
  const WaitRun off = run_against_slow_server({"--backend", "uring", "--batch-wait", "off"});
  EXPECT_EQ(off.batch_wait, "off");
  EXPECT_EQ(off.longest_us, 0u);
  const WaitRun epoll = run_against_slow_server({"--backend", "epoll"});
  EXPECT_EQ(epoll.batch_wait, "auto");
  EXPECT_EQ(epoll.longest_us, 0u);
}

// client merge gives the longest window of any shard: the most added to
// any latency of the merged histogram.
TEST(ClientBatchWait, merge_keeps_the_longest_window_of_the_shards) {
  if (!kernel_has_min_wait()) GTEST_SKIP() << "this kernel has no IORING_FEAT_MIN_TIMEOUT (Linux 6.12): the batching wait needs it";
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", CannedServer::After::keep_open);
  server.delay_each(round_trip_ms);
  std::vector<std::string> merge_args{"merge", "--json"};
  std::uint64_t longest = 0;
  for (const char* shard : {"0/2", "1/2"}) {
    const ClientRun run = run_client(
        {"--backend", "uring", "-c", "2", "-n", "40", "--shard", shard, "--json", server.url()});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const std::uint64_t used = JsonReport(run).number("/batch_wait_us_max");
    EXPECT_GE(used, round_trip_ms * 1000 / 100);
    longest = std::max(longest, used);
    const std::string path = ::testing::TempDir() + "/batch_wait_shard" + shard[0] + ".json";
    std::ofstream(path) << run.out;
    merge_args.push_back(path);
  }
  const ClientRun merged = run_client(merge_args);
  ASSERT_EQ(merged.exit_code, 0) << merged.err << merged.out;
  EXPECT_EQ(JsonReport(merged).number("/batch_wait_us_max"), longest);
  EXPECT_NE(merged.err.find("batch wait  auto: up to " + std::to_string(longest) + " us"), std::string::npos)
      << merged.err;
}

}  // namespace
}  // namespace socket_test
