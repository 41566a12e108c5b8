// --send: the start-up line names the send operation really in use, zero-copy
// sends are notified and counted, and a mode that does not exist is refused.
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

bool kernel_at_least(int major, int minor) {
  utsname name{};
  if (::uname(&name) != 0) return false;
  int running_major = 0;
  int running_minor = 0;
  if (std::sscanf(name.release, "%d.%d", &running_major, &running_minor) != 2) return false;
  return running_major > major || (running_major == major && running_minor >= minor);
}

// The value of the start-up line's send= field.
std::string send_field(const std::string& startup_line) {
  const auto at = startup_line.find(" send=");
  if (at == std::string::npos) return "(no send= field in: " + startup_line + ")";
  const auto begin = at + 6;
  return startup_line.substr(begin, startup_line.find(' ', begin) - begin);
}

TEST(SendMode, default_is_sendmsg_and_the_startup_line_says_so) {
  ServerProcess server({"--shards", "1"});
  EXPECT_EQ(send_field(server.startup_line()), "sendmsg");
}

class SendModeNamed : public testing::TestWithParam<std::string> {};

TEST_P(SendModeNamed, startup_line_names_the_mode_asked_for_and_it_serves) {
  ServerProcess server({"--shards", "1", "--send", GetParam()});
  EXPECT_EQ(send_field(server.startup_line()), GetParam()) << server.startup_line();
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
}

// Zero-copy sends really are zero-copy sends: each one's notification
// arrives (a scrape is rendered before its own send is counted, so once
// all are in, the two counters agree). In the other modes there are none.
TEST_P(SendModeNamed, every_zero_copy_send_is_notified_and_no_other_send_is) {
  ServerProcess server({"--shards", "1", "--send", GetParam()});
  {
    Connection connection(server.port());
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
    connection.send_all(get(stream_path(1 << 20)));
    ASSERT_EQ(connection.read_head().content_length(), 1u << 20);
    ASSERT_TRUE(read_stream_body(connection, 1 << 20));
  }
  Metrics metrics;
  const bool zc = GetParam() == "zc";
  EXPECT_TRUE(eventually([&] {
    metrics = scrape_metrics(server.port());
    return metrics.value(metric::zc_notifications) == (zc ? metrics.value(metric::sends) : 0);
  })) << metrics.value(metric::zc_notifications)
      << " notifications for " << metrics.value(metric::sends) << " sends";
  EXPECT_GT(metrics.value(metric::sends), 50);
  if (!zc) {
    EXPECT_EQ(metrics.value(metric::zc_copied), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(SendModes, SendModeNamed, testing::ValuesIn(send_modes), send_mode_test_name);

// On loopback the kernel copies a zero-copy send's data anyway (the
// receiving socket gets its own copy), and says so in the notification,
// which the server counts, where the kernel reports usage (6.2 on).
TEST(SendMode, zero_copy_sends_on_loopback_are_counted_as_copied) {
  if (!kernel_at_least(6, 2)) GTEST_SKIP() << "IORING_SEND_ZC_REPORT_USAGE needs Linux 6.2";
  ServerProcess server({"--shards", "1", "--send", "zc"});
  {
    Connection connection(server.port());
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  }
  Metrics metrics;
  EXPECT_TRUE(eventually([&] {
    metrics = scrape_metrics(server.port());
    return metrics.value(metric::zc_notifications) >= 20;
  }));
  EXPECT_GT(metrics.value(metric::zc_copied), 0);
  EXPECT_LE(metrics.value(metric::zc_copied), metrics.value(metric::zc_notifications));
  RecordProperty("zc_copied", std::to_string(metrics.value(metric::zc_copied)));
  RecordProperty("zc_notifications", std::to_string(metrics.value(metric::zc_notifications)));
}

TEST(SendMode, an_unknown_mode_is_refused_with_exit_2) {
  for (const char* bad : {"send", "zerocopy", ""}) {
    SCOPED_TRACE(bad);
    try {
      ServerProcess server({"--shards", "1", "--send", bad});
      ADD_FAILURE() << "the server started: " << server.startup_line();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("exited with status 2"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace socket_test
