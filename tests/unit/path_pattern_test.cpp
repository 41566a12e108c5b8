// Route patterns: literal segments and one-segment parameters.
#include "server/app/path_pattern.hpp"

#include <gtest/gtest.h>

namespace ringhttp::server {
namespace {

TEST(PathPattern, literal_matches_only_itself) {
  const PathPattern p("/mw/ping");
  PathPattern::Params params;
  EXPECT_TRUE(p.match("/mw/ping", params));
  for (const char* path : {"/mw", "/mw/", "/mw/ping/", "/mw/pingx", "/mw//ping", "mw/ping", "", "/"}) {
    EXPECT_FALSE(p.match(path, params)) << path;
  }
  EXPECT_EQ(p.param_count(), 0u);
}

TEST(PathPattern, a_parameter_takes_one_whole_segment_even_an_empty_one) {
  const PathPattern p("/users/:id");
  ASSERT_EQ(p.param_count(), 1u);
  EXPECT_EQ(p.param_name(0), "id");
  PathPattern::Params params;
  ASSERT_TRUE(p.match("/users/42", params));
  EXPECT_EQ(params[0], "42");
  ASSERT_TRUE(p.match("/users/", params));
  EXPECT_EQ(params[0], "");
  for (const char* path : {"/users", "/users/1/2", "/user/1", "/users//1"}) EXPECT_FALSE(p.match(path, params)) << path;
}

TEST(PathPattern, several_parameters_come_in_order) {
  const PathPattern p("/a/:x/b/:y");
  PathPattern::Params params;
  ASSERT_TRUE(p.match("/a/1/b/2", params));
  EXPECT_EQ(params[0], "1");
  EXPECT_EQ(params[1], "2");
  EXPECT_EQ(p.param_name(1), "y");
  EXPECT_FALSE(p.match("/a/1/c/2", params));
}

TEST(PathPattern, the_root_is_its_own_pattern) {
  const PathPattern p("/");
  PathPattern::Params params;
  EXPECT_TRUE(p.match("/", params));
  EXPECT_FALSE(p.match("/x", params));
}

}  // namespace
}  // namespace ringhttp::server
