// client_key_of: which peers share a rate-limit bucket. The suite is named
// RateLimitClientKey so that the rate limiter's test filter runs it too.

#include "server/middleware/client_key.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

namespace ringhttp::server {
namespace {

sockaddr_storage ipv4(const char* text, std::uint16_t port) {
  sockaddr_storage storage{};
  auto& v4 = reinterpret_cast<sockaddr_in&>(storage);
  v4.sin_family = AF_INET;
  v4.sin_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET, text, &v4.sin_addr), 1) << text;
  return storage;
}

sockaddr_storage ipv6(const char* text, std::uint16_t port) {
  sockaddr_storage storage{};
  auto& v6 = reinterpret_cast<sockaddr_in6&>(storage);
  v6.sin6_family = AF_INET6;
  v6.sin6_port = htons(port);
  EXPECT_EQ(inet_pton(AF_INET6, text, &v6.sin6_addr), 1) << text;
  return storage;
}

TEST(RateLimitClientKey, ipv4_is_mapped_into_ffff_prefix) {
  const ClientKey key = client_key_of(ipv4("192.0.2.1", 80));
  EXPECT_EQ(key.hi, 0u);
  EXPECT_EQ(key.lo, 0x0000'ffff'c000'0201u);
}

TEST(RateLimitClientKey, ipv4_and_ipv4_mapped_ipv6_agree) {
  EXPECT_EQ(client_key_of(ipv4("192.0.2.1", 80)), client_key_of(ipv6("::ffff:192.0.2.1", 80)));
  EXPECT_EQ(client_key_of(ipv4("255.255.255.255", 1)), client_key_of(ipv6("::ffff:255.255.255.255", 2)));
}

TEST(RateLimitClientKey, ipv6_is_keyed_by_its_64_bit_prefix) {
  const ClientKey key = client_key_of(ipv6("2001:db8:1:2:3:4:5:6", 443));
  EXPECT_EQ(key.hi, 0x2001'0db8'0001'0002u);
  EXPECT_EQ(key.lo, 0u) << "the interface identifier is not part of the key";
  // Any two addresses of one /64 are one client...
  EXPECT_EQ(client_key_of(ipv6("2001:db8:1:2::1", 0)), client_key_of(ipv6("2001:db8:1:2:ffff:ffff:ffff:ffff", 0)));
  EXPECT_EQ(client_key_of(ipv6("2001:db8::1", 0)), client_key_of(ipv6("2001:db8::", 0)));
  // ...and addresses in different /64s are not, down to the 64th bit and from the first.
  EXPECT_NE(client_key_of(ipv6("2001:db8:1:2::1", 0)), client_key_of(ipv6("2001:db8:1:3::1", 0)));
  EXPECT_NE(client_key_of(ipv6("2001:db8::1", 0)), client_key_of(ipv6("a001:db8::1", 0)));
}

TEST(RateLimitClientKey, ipv4_mapped_addresses_keep_all_their_bits) {
  // They lie in ::/64 but are IPv4 clients, each its own.
  EXPECT_NE(client_key_of(ipv6("::ffff:192.0.2.1", 0)), client_key_of(ipv6("::ffff:192.0.2.2", 0)));
  EXPECT_NE(client_key_of(ipv6("::ffff:192.0.2.1", 0)), client_key_of(ipv6("::", 0)));
}

TEST(RateLimitClientKey, the_rest_of_the_zero_slash_64_is_one_client) {
  // Loopback, unspecified and the deprecated IPv4-compatible form are all ::/64.
  EXPECT_EQ(client_key_of(ipv6("::1", 0)), ClientKey{});
  EXPECT_EQ(client_key_of(ipv6("::192.0.2.1", 0)), ClientKey{});
  // One 16-bit group short of the mapped prefix is not mapped.
  EXPECT_EQ(client_key_of(ipv6("::fffe:192.0.2.1", 0)), ClientKey{});
  EXPECT_EQ(client_key_of(ipv6("::1:ffff:192.0.2.1", 0)), ClientKey{});
}

TEST(RateLimitClientKey, port_is_not_part_of_the_key) {
  EXPECT_EQ(client_key_of(ipv4("198.51.100.7", 1000)), client_key_of(ipv4("198.51.100.7", 2000)));
  EXPECT_EQ(client_key_of(ipv6("2001:db8::7", 1000)), client_key_of(ipv6("2001:db8::7", 2000)));
}

TEST(RateLimitClientKey, ipv4_differs_from_the_same_bits_in_plain_ipv6) {
  // ::c000:201 (the deprecated IPv4-compatible form) is not ::ffff:192.0.2.1.
  EXPECT_NE(client_key_of(ipv4("192.0.2.1", 0)), client_key_of(ipv6("::192.0.2.1", 0)));
  EXPECT_NE(client_key_of(ipv4("0.0.0.0", 0)), client_key_of(ipv6("::", 0)));
}

TEST(RateLimitClientKey, other_families_share_the_unspecified_address) {
  sockaddr_storage unix_peer{};
  unix_peer.ss_family = AF_UNIX;
  EXPECT_EQ(client_key_of(unix_peer), ClientKey{});
  EXPECT_EQ(client_key_of(unix_peer), client_key_of(ipv6("::", 0)));
}

}  // namespace
}  // namespace ringhttp::server
