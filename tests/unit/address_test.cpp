// Socket addresses from text, as --address and --metrics-address read them.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <string>

#include "core/net/address.hpp"

namespace ringhttp::net {
namespace {

TEST(Endpoint, reads_ipv4_and_bracketed_ipv6_with_a_port) {
  Address a;
  ASSERT_TRUE(parse_endpoint("127.0.0.1:9100", a));
  EXPECT_EQ(a.family(), AF_INET);
  EXPECT_EQ(a.to_string(), "127.0.0.1:9100");
  ASSERT_TRUE(parse_endpoint("[::1]:9100", a));
  EXPECT_EQ(a.family(), AF_INET6);
  EXPECT_EQ(a.to_string(), "[::1]:9100");
  ASSERT_TRUE(parse_endpoint("0.0.0.0:0", a));
  EXPECT_EQ(a.port(), 0) << "port 0: the kernel picks one";
  ASSERT_TRUE(parse_endpoint("[fe80::1:2]:65535", a));
  EXPECT_EQ(a.port(), 65535);
}

TEST(Endpoint, refuses_anything_else) {
  constexpr const char* bad_endpoints[] = {
      "",         "127.0.0.1",        "127.0.0.1:",      "127.0.0.1:9100 ", " 127.0.0.1:9100", ":9100",
      "::1",      "::1:9100",         "[::1]",           "[::1]9100",       "[::1]:",          "[::1:80",
      "[]:80",    "localhost:9100",   "127.0.0.1:65536", "127.0.0.1:-1",    "127.0.0.1:+1",    "127.0.0.1:0x10",
      "1.2.3:80", "[127.0.0.1]:9100",
  };
  for (const char* bad : bad_endpoints) {
    Address a;
    EXPECT_FALSE(parse_endpoint(bad, a)) << bad;
  }
}

TEST(UnixAddress, holds_a_path_up_to_sockaddr_un_and_names_it) {
  Address a;
  ASSERT_TRUE(unix_address("/run/app.sock", a));
  EXPECT_EQ(a.family(), AF_UNIX);
  EXPECT_EQ(a.to_string(), "unix:/run/app.sock");
  EXPECT_EQ(a.port(), 0);
  ASSERT_TRUE(unix_address(std::string(107, 'x'), a)) << "107 bytes and the NUL fill sun_path";
  EXPECT_FALSE(unix_address(std::string(108, 'x'), a));
  EXPECT_FALSE(unix_address("", a));
}

}  // namespace
}  // namespace ringhttp::net
