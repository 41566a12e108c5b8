// The bench floor responders are the control row of every benchmark: a
// floor that drops or garbles responses would make every ratio a lie. They
// answer each request, pipelined or split at any byte, with their one fixed
// response.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "support/connection.hpp"
#include "support/http_response.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

class Floor : public testing::TestWithParam<const char*> {
 protected:
  static std::string binary(const char* env) {
    const char* path = std::getenv(env);
    return path != nullptr ? path : "";
  }
};

TEST_P(Floor, answers_single_pipelined_and_split_requests) {
  const std::string path = binary(GetParam());
  ASSERT_FALSE(path.empty()) << GetParam() << " is not set (tests/socket/meson.build sets it)";
  ServerOptions options;
  options.binary = path;
  ServerProcess floor(options);
  Connection connection(floor.port());

  connection.send_all(get("/plaintext"));
  Response first = connection.read_response();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "Hello, World!");

  std::string batch;
  for (int i = 0; i < 100; ++i) batch += get("/plaintext");
  connection.send_all(batch);
  for (int i = 0; i < 100; ++i) {
    const Response r = connection.read_response();
    ASSERT_EQ(r.status, 200) << "pipelined response " << i;
    ASSERT_EQ(r.body, "Hello, World!") << "pipelined response " << i;
  }

  const std::string one = get("/plaintext");
  for (char c : one) connection.send_all(std::string(1, c));
  const Response split = connection.read_response();
  EXPECT_EQ(split.status, 200);
  EXPECT_EQ(split.body, "Hello, World!");
}

// floor-uring takes the server's --uring values and says in its start-up
// line what its ring uses; what would turn off the multishot operations it
// is made of is refused.
TEST(FloorUring, takes_the_servers_uring_values_and_names_them_at_start) {
  const char* path = std::getenv("RINGHTTP_FLOOR_URING");
  ASSERT_NE(path, nullptr) << "RINGHTTP_FLOOR_URING is not set (tests/socket/meson.build sets it)";
  const auto start = [&](const std::string& uring) {
    ServerOptions options;
    options.binary = path;
    options.args = {"--uring", uring};
    return std::make_unique<ServerProcess>(options);
  };
  const auto uring_of = [](const ServerProcess& floor) {
    const std::string& line = floor.startup_line();
    const std::size_t at = line.find(" uring=");
    return at == std::string::npos ? std::string() : line.substr(at + 7);
  };
  const auto six_one = start("6.1");
  EXPECT_EQ(uring_of(*six_one), "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files");
  const auto own_files = start("6.1,no-fixed-files");
  EXPECT_EQ(uring_of(*own_files), "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring");
  const auto no_array = start("6.1,no-sqarray");
  const std::string used = uring_of(*no_array);
  const std::string six_one_used = "single-issuer,defer-taskrun,multishot-accept,multishot-recv,bufring,fixed-files";
  EXPECT_TRUE(used.ends_with(",no-sqarray") || used == six_one_used)
      << used << " (no-sqarray where the kernel has it, 6.6)";
  // Each serves, with direct descriptors and without, and frees its
  // connections: a second round on new connections is served too.
  for (const ServerProcess* floor : {no_array.get(), own_files.get()}) {
    for (int round = 0; round < 2; ++round) {
      Connection connection(floor->port());
      for (int i = 0; i < 20; ++i) {
        connection.send_all(get("/plaintext"));
        ASSERT_EQ(connection.read_response().body, "Hello, World!");
      }
    }
  }
  for (const std::string refused : {"5.19", "no-multishot", "no-bufring", "bogus"}) {
    ServerOptions options;
    options.binary = path;
    options.args = {"--uring", refused};
    try {
      ServerProcess floor(options);
      ADD_FAILURE() << "--uring " << refused << " was accepted: " << floor.startup_line();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("exited with status 2"), std::string::npos) << refused << ": " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Responders, Floor, testing::Values("RINGHTTP_FLOOR_EPOLL", "RINGHTTP_FLOOR_URING"),
                         [](const testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param).substr(std::string("RINGHTTP_FLOOR_").size());
                         });

}  // namespace
}  // namespace socket_test
