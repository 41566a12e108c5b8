#pragma once
// The address a rate limit is kept for: a peer's IP address as 128 bits.
// IPv4 peers are mapped into ::ffff:a.b.c.d, so a client reaching a
// dual-stack listener as 192.0.2.1 and one reaching it as ::ffff:192.0.2.1
// share one key. The port is left out on purpose: one client opening many
// connections is still one client.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>

namespace ringhttp::server {

struct ClientKey {
  std::uint64_t hi = 0;  // address bits 127..64, the first 8 bytes on the wire
  std::uint64_t lo = 0;  // address bits 63..0, the last 8 bytes on the wire
  bool operator==(const ClientKey&) const = default;
};

// The prefix that marks an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2):
// 80 zero bits, then 16 one bits, then the IPv4 address.
inline constexpr std::uint64_t ipv4_mapped_lo_prefix = 0x0000'ffff'0000'0000;

// Big-endian bytes to an integer; s6_addr is a byte array, so no alignment
// or aliasing question arises.
constexpr std::uint64_t load_be64(const std::uint8_t* bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | bytes[i];
  return value;
}

// A peer of any other family (a Unix socket, say) gets the unspecified
// address ::, which no real IP peer can have, so such peers share one
// bucket instead of escaping the limit. The family's struct is copied out
// of the storage rather than cast to, so no aliasing rule is bent.
inline ClientKey client_key_of(const sockaddr_storage& addr) {
  if (addr.ss_family == AF_INET) {
    sockaddr_in v4;
    std::memcpy(&v4, &addr, sizeof v4);
    return ClientKey{.hi = 0, .lo = ipv4_mapped_lo_prefix | ntohl(v4.sin_addr.s_addr)};
  }
  if (addr.ss_family == AF_INET6) {
    sockaddr_in6 v6;
    std::memcpy(&v6, &addr, sizeof v6);
    return ClientKey{.hi = load_be64(&v6.sin6_addr.s6_addr[0]), .lo = load_be64(&v6.sin6_addr.s6_addr[8])};
  }
  return ClientKey{};
}

}  // namespace ringhttp::server
