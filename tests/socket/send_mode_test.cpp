// --send: the start-up line names the send operation really in use, and a
// mode that does not exist is refused.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "support/checks.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

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

INSTANTIATE_TEST_SUITE_P(SendModes, SendModeNamed, testing::ValuesIn(send_modes), send_mode_test_name);

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
