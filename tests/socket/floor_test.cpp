// The bench floor responders are the control row of every benchmark: a
// floor that drops or garbles responses would make every ratio a lie. They
// answer each request, pipelined or split at any byte, with their one fixed
// response.
#include <gtest/gtest.h>

#include <cstdlib>
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
  if (path.empty()) GTEST_SKIP() << GetParam() << " is not set (bench disabled)";
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

INSTANTIATE_TEST_SUITE_P(Responders, Floor, testing::Values("RINGHTTP_FLOOR_EPOLL", "RINGHTTP_FLOOR_URING"),
                         [](const testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param).substr(std::string("RINGHTTP_FLOOR_").size());
                         });

}  // namespace
}  // namespace socket_test
