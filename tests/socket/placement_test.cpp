// Server and client run where they are told: the CPU mask they inherit
// (taskset, a cgroup's cpuset) is their default and their bound, the client
// warns when it would share a CPU with the server it measures, and a second
// server cannot silently join the first one's port.
#include <gtest/gtest.h>
#include <sched.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "support/client_process.hpp"
#include "support/server_process.hpp"
#include "support/shell.hpp"

namespace socket_test {
namespace {

// The calling thread's CPU mask, restored on destruction. Children forked
// meanwhile (the server, the client) inherit the mask that is set.
class ScopedAffinity {
 public:
  explicit ScopedAffinity(int cpu) {
    ::sched_getaffinity(0, sizeof saved_, &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ok_ = ::sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~ScopedAffinity() { ::sched_setaffinity(0, sizeof saved_, &saved_); }
  bool ok() const { return ok_; }

 private:
  cpu_set_t saved_{};
  bool ok_ = false;
};

// These tests move processes to CPU 1 and keep them off CPU 0.
bool have_cpus_0_and_1() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

#define REQUIRE_TWO_CPUS() \
  if (!have_cpus_0_and_1()) GTEST_SKIP() << "needs CPUs 0 and 1 in this process's mask"

// The Cpus_allowed_list of each of `pid`'s threads.
std::vector<std::string> task_cpu_lists(pid_t pid) {
  std::vector<std::string> lists;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  const ShellRun ls = run_shell("ls " + dir);
  std::size_t start = 0;
  while (start < ls.output.size()) {
    const std::size_t end = ls.output.find('\n', start);
    const std::string tid = ls.output.substr(start, end - start);
    start = end == std::string::npos ? ls.output.size() : end + 1;
    if (tid.empty()) continue;
    std::ifstream status(dir + "/" + tid + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) lists.push_back(line.substr(line.find_first_not_of(" \t", 18)));
    }
  }
  return lists;
}

TEST(Placement, a_server_without_cpus_runs_one_shard_per_cpu_of_its_mask) {
  REQUIRE_TWO_CPUS();
  std::unique_ptr<ServerProcess> server;
  {
    ScopedAffinity on_cpu_1(1);
    ASSERT_TRUE(on_cpu_1.ok());
    server = std::make_unique<ServerProcess>(std::vector<std::string>{});
  }
  EXPECT_NE(server->startup_line().find(" shards=1 cpus=1 "), std::string::npos) << server->startup_line();
  const std::vector<std::string> lists = task_cpu_lists(server->pid());
  ASSERT_FALSE(lists.empty());
  for (const std::string& list : lists) EXPECT_EQ(list, "1");
}

TEST(Placement, a_server_told_a_cpu_outside_its_mask_exits_2) {
  REQUIRE_TWO_CPUS();
  const ShellRun ran = run_shell("taskset -c 1 " + server_path() + " --port 0 --cpus 0");
  EXPECT_EQ(ran.exit_code, 2) << ran.output;
  EXPECT_NE(ran.output.find("CPU 0 is not in this process's CPU mask"), std::string::npos) << ran.output;
}

TEST(Placement, a_client_without_cpus_runs_its_thread_on_its_mask) {
  REQUIRE_TWO_CPUS();
  ServerProcess server({"--shards", "1", "--cpus", "0"});
  ClientRun run;
  {
    ScopedAffinity on_cpu_1(1);
    ASSERT_TRUE(on_cpu_1.ok());
    run = run_client(
        {"-n", "20", "-c", "2", "--json", "http://127.0.0.1:" + std::to_string(server.port()) + "/plaintext"});
  }
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("\"cpus\":[1]"), std::string::npos) << run.out;
  const ClientRun text = run_client({"-n", "5", "--cpus", "1", "http://127.0.0.1:" + std::to_string(server.port()) +
                                                                   "/plaintext"});
  EXPECT_NE(text.out.find("threads on CPUs 1"), std::string::npos) << text.out;
}

TEST(Placement, a_client_told_a_cpu_outside_its_mask_exits_2) {
  REQUIRE_TWO_CPUS();
  const ShellRun ran = run_shell("taskset -c 1 " + client_path() + " --cpus 0 -n 1 http://127.0.0.1:9/");
  EXPECT_EQ(ran.exit_code, 2) << ran.output;
  EXPECT_NE(ran.output.find("CPU 0 is not in this process's CPU mask"), std::string::npos) << ran.output;
}

TEST(Placement, the_client_warns_when_it_shares_a_cpu_with_the_server) {
  REQUIRE_TWO_CPUS();
  ServerProcess server({"--shards", "1", "--cpus", "1"});
  const std::string target = "http://127.0.0.1:" + std::to_string(server.port()) + "/plaintext";
  const std::string pid = std::to_string(server.pid());
  const ClientRun shared = run_client({"-n", "20", "--cpus", "1", "--server-pid", pid, target});
  EXPECT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_NE(shared.err.find("warning: thread 0 runs on CPU 1"), std::string::npos) << shared.err;
  const ClientRun apart = run_client({"-n", "20", "--cpus", "0", "--server-pid", pid, target});
  EXPECT_EQ(apart.exit_code, 0) << apart.err;
  EXPECT_EQ(apart.err.find("warning"), std::string::npos) << apart.err;
}

TEST(Placement, a_second_server_on_a_port_in_use_exits_1) {
  ServerProcess first({"--shards", "1"});
  const ShellRun second = run_shell(server_path() + " --port " + std::to_string(first.port()) + " --shards 1");
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_NE(second.output.find("address already in use"), std::string::npos) << second.output;
}

}  // namespace
}  // namespace socket_test
