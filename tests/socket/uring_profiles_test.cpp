// The server behaves the same under every --uring profile and switch: each
// takes a different completion path (multishot or single-shot accept and
// receive, provided buffers or the connection's own), and each must serve.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

// The features named in the start-up line's uring= field.
std::vector<std::string> features_in_use(const std::string& startup_line) {
  const auto at = startup_line.find("uring=");
  if (at == std::string::npos) return {};
  const std::string list = startup_line.substr(at + 6, startup_line.find(' ', at) - (at + 6));
  std::vector<std::string> features;
  for (std::size_t begin = 0; begin < list.size();) {
    const auto comma = std::min(list.find(',', begin), list.size());
    features.push_back(list.substr(begin, comma - begin));
    begin = comma + 1;
  }
  return features;
}

bool uses(const std::vector<std::string>& features, const std::string& feature) {
  return std::ranges::find(features, feature) != features.end();
}

struct Profile {
  std::string flag;                  // the --uring value
  std::vector<std::string> in_use;   // exactly what the start-up line must list, in its order
};

void PrintTo(const Profile& profile, std::ostream* out) { *out << profile.flag; }

class UringProfiles : public testing::TestWithParam<Profile> {
 protected:
  ServerProcess server{{"--shards", "1", "--uring", GetParam().flag}};
};

// What this kernel offers at all, from a server that asks for everything
// (sqpoll and min-wait apart, which `all` leaves off, coop taskrun, which
// defer taskrun replaces, and multishot accept, which fixed-files
// replaces): a profile can only list what the kernel has.
const std::vector<std::string>& kernel_features() {
  static const std::vector<std::string> features = [] {
    ServerProcess everything({"--shards", "1", "--uring", "all"});
    ServerProcess polled({"--shards", "1", "--uring", "all,sqpoll"});
    ServerProcess cooperative({"--shards", "1", "--uring", "no-defer-taskrun"});
    ServerProcess batched({"--shards", "1", "--uring", "min-wait"});
    ServerProcess multishot_accept({"--shards", "1", "--uring", "no-fixed-files"});
    std::vector<std::string> out = features_in_use(everything.startup_line());
    for (const auto& extra :
         {features_in_use(polled.startup_line()), features_in_use(cooperative.startup_line()),
          features_in_use(batched.startup_line()), features_in_use(multishot_accept.startup_line())}) {
      for (const auto& feature : extra) {
        if (!uses(out, feature)) out.push_back(feature);
      }
    }
    out.push_back("basic");
    return out;
  }();
  return features;
}

TEST_P(UringProfiles, startup_line_lists_exactly_the_profiles_features) {
  std::vector<std::string> expected;
  for (const auto& feature : GetParam().in_use) {
    if (uses(kernel_features(), feature)) expected.push_back(feature);
  }
  if (expected.empty()) expected.push_back("basic");
  EXPECT_EQ(features_in_use(server.startup_line()), expected) << server.startup_line();
}

TEST_P(UringProfiles, keep_alive_pipelining_and_streams_work) {
  Connection connection(server.port());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));

  std::string pipeline;
  for (int i = 0; i < 100; ++i) pipeline += get("/json");
  connection.send_all(pipeline);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(connection.read_response().body, json_body) << "response " << i;

  connection.send_all(get(stream_path(4 << 20)));
  ASSERT_EQ(connection.read_head().content_length(), 4u << 20);
  ASSERT_TRUE(read_stream_body(connection, 4 << 20));

  ASSERT_EQ(round_trip(connection, get("/metrics")).status, 200);
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

TEST_P(UringProfiles, connections_closed_by_clients_are_freed) {
  for (int i = 0; i < 8; ++i) {
    Connection connection(server.port());
    ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  }
  EXPECT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(metric::active) == 1; }));
}

// "no-defer-taskrun,no-single-issuer" -> "no_defer_taskrun_no_single_issuer".
std::string test_name(const testing::TestParamInfo<Profile>& param_info) {
  std::string name;
  for (char c : param_info.param.flag) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// Each profile has what its kernel generation brought (5.19: coop taskrun,
// multishot accept, buffer rings, direct descriptors; 6.0: single issuer,
// multishot receive; 6.1: defer taskrun; 6.6: no SQ array; 6.10: receive
// bundles; 6.12: incremental buffers). sqpoll is off unless named; with it
// the kernel takes neither taskrun mode. With direct descriptors
// (fixed-files) the server accepts single-shot, each accept with its
// peer's address, so multishot-accept is not listed then.
INSTANTIATE_TEST_SUITE_P(
    Profiles, UringProfiles,
    testing::Values(
        Profile{"all",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray",
                 "recv-bundle", "incremental-buffers"}},
        Profile{"6.12",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray",
                 "recv-bundle", "incremental-buffers"}},
        Profile{"6.10",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray",
                 "recv-bundle"}},
        Profile{"6.6", {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray"}},
        Profile{"6.1", {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files"}},
        Profile{"6.1,recv-bundle",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "recv-bundle"}},
        Profile{"6.1,incremental-buffers",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "incremental-buffers"}},
        Profile{"5.19,recv-bundle,incremental-buffers",
                {"coop-taskrun", "bufring", "fixed-files", "recv-bundle", "incremental-buffers"}},
        Profile{"5.10,recv-bundle", {"basic"}},
        Profile{"no-recv-bundle,no-incremental-buffers",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray"}},
        Profile{"6.0", {"single-issuer", "coop-taskrun", "multishot-recv", "bufring", "fixed-files"}},
        Profile{"5.19", {"coop-taskrun", "bufring", "fixed-files"}},
        Profile{"5.10", {"basic"}},
        Profile{"5.10,no-sqarray", {"no-sqarray"}},
        Profile{"5.10,fixed-files", {"fixed-files"}},
        Profile{"no-fixed-files",
                {"single-issuer", "defer-taskrun", "multishot-accept", "multishot-recv", "bufring", "no-sqarray",
                 "recv-bundle", "incremental-buffers"}},
        Profile{"5.19,no-fixed-files", {"coop-taskrun", "multishot-accept", "bufring"}},
        Profile{"sqarray",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "recv-bundle",
                 "incremental-buffers"}},
        Profile{"no-multishot",
                {"single-issuer", "defer-taskrun", "bufring", "fixed-files", "no-sqarray", "recv-bundle",
                 "incremental-buffers"}},
        Profile{"no-bufring", {"single-issuer", "defer-taskrun", "fixed-files", "no-sqarray"}},
        Profile{"no-defer-taskrun,no-single-issuer",
                {"coop-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray", "recv-bundle",
                 "incremental-buffers"}},
        Profile{"sqpoll",
                {"single-issuer", "multishot-recv", "bufring", "fixed-files", "sqpoll", "no-sqarray", "recv-bundle",
                 "incremental-buffers"}},
        Profile{"5.19,sqpoll", {"bufring", "fixed-files", "sqpoll"}},
        Profile{"5.10,sqpoll", {"sqpoll"}},
        Profile{"min-wait",
                {"single-issuer", "defer-taskrun", "multishot-recv", "bufring", "fixed-files", "no-sqarray",
                 "min-wait", "recv-bundle", "incremental-buffers"}},
        Profile{"6.1,min-wait,sqpoll", {"single-issuer", "multishot-recv", "bufring", "fixed-files", "sqpoll"}},
        Profile{"all,sqpoll",
                {"single-issuer", "multishot-recv", "bufring", "fixed-files", "sqpoll", "no-sqarray", "recv-bundle",
                 "incremental-buffers"}}),
    test_name);

// The poller thread (the kernel's "iou-sqp-PID") shares its shard's CPU, so
// its CPU time competes with that shard only. Without SQ_AFF the kernel
// lets it run on every online CPU.
TEST(Sqpoll, poller_thread_is_bound_to_its_shards_cpu) {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2) GTEST_SKIP() << "needs two CPUs to tell a bound poller from an unbound one";
  const std::string cpu = std::to_string(online - 1);
  ServerProcess server({"--shards", "1", "--cpus", cpu, "--uring", "sqpoll"});
  ASSERT_TRUE(uses(features_in_use(server.startup_line()), "sqpoll")) << server.startup_line();
  ASSERT_TRUE(fresh_connection_is_served(server.port()));
  // The probe's scratch SQPOLL ring is torn down by the kernel after it is
  // closed, and its poller thread with it: wait for that one to go.
  std::vector<std::string> pollers;
  const std::string tasks = "/proc/" + std::to_string(server.pid()) + "/task";
  auto list_pollers = [&] {
    pollers.clear();
    for (const auto& task : std::filesystem::directory_iterator(tasks)) {
      std::ifstream comm(task.path() / "comm");
      std::string name;
      std::getline(comm, name);
      if (!name.starts_with("iou-sqp-")) continue;
      std::ifstream status(task.path() / "status");
      for (std::string line; std::getline(status, line);) {
        if (line.starts_with("Cpus_allowed_list:")) pollers.push_back(line.substr(line.find_first_not_of(" \t", 18)));
      }
    }
    return pollers.size() == 1;
  };
  eventually(list_pollers);
  ASSERT_EQ(pollers.size(), 1u) << "one shard, one SQPOLL ring, one poller thread";
  EXPECT_EQ(pollers[0], cpu);
}

}  // namespace
}  // namespace socket_test
