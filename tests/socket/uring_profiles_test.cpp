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
  std::string flag;                         // the --uring value
  std::vector<std::string> turned_off;      // features the start-up line must not list
  std::vector<std::string> turned_on = {};  // features it must list
};

void PrintTo(const Profile& profile, std::ostream* out) { *out << profile.flag; }

class UringProfiles : public testing::TestWithParam<Profile> {
 protected:
  ServerProcess server{{"--shards", "1", "--uring", GetParam().flag}};
};

TEST_P(UringProfiles, startup_line_reports_the_features_turned_off_as_off) {
  const auto features = features_in_use(server.startup_line());
  for (const auto& feature : GetParam().turned_off) {
    EXPECT_FALSE(uses(features, feature)) << feature << " listed in: " << server.startup_line();
  }
  for (const auto& feature : GetParam().turned_on) {
    EXPECT_TRUE(uses(features, feature)) << feature << " not listed in: " << server.startup_line();
  }
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

const std::vector<std::string> all_switchable = {"single-issuer",  "defer-taskrun", "multishot-accept",
                                                 "multishot-recv", "bufring",       "sqpoll"};

// sqpoll is off unless named; with it the kernel takes neither taskrun mode.
INSTANTIATE_TEST_SUITE_P(
    Profiles, UringProfiles,
    testing::Values(
        Profile{"all", {"sqpoll"}}, Profile{"6.1", {"sqpoll"}}, Profile{"6.0", {"defer-taskrun", "sqpoll"}},
        Profile{"5.19", {"multishot-recv", "bufring", "single-issuer", "defer-taskrun", "sqpoll"}},
        Profile{"5.10", all_switchable}, Profile{"no-multishot", {"multishot-accept", "multishot-recv", "sqpoll"}},
        Profile{"no-bufring", {"bufring", "sqpoll"}},
        Profile{"no-defer-taskrun,no-single-issuer", {"defer-taskrun", "single-issuer", "sqpoll"}},
        Profile{"sqpoll", {"defer-taskrun", "coop-taskrun"}, {"sqpoll", "single-issuer", "bufring"}},
        Profile{"5.10,sqpoll",
                {"single-issuer", "defer-taskrun", "coop-taskrun", "multishot-accept", "multishot-recv", "bufring"},
                {"sqpoll"}},
        Profile{"all,sqpoll", {"defer-taskrun", "coop-taskrun"}, {"sqpoll"}}),
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
