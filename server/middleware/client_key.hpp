#pragma once
// What a rate limit is kept for: a peer's network as 128 bits.
//
// An IPv4 peer is one address, mapped into ::ffff:a.b.c.d, so a client
// reaching a dual-stack listener as 192.0.2.1 and one reaching it as
// ::ffff:192.0.2.1 share one key.
//
// An IPv6 peer is its /64: the low 64 bits (the interface identifier) are
// zeroed. One host, or one customer's site, is normally given a whole /64
// (RFC 6177) and can pick any of its 2^64 addresses at will, so keying by
// address would hand such a client a fresh bucket per address and let it
// flood the table. The price is that hosts sharing one /64 (a LAN behind one
// router) share one bucket, as hosts behind one IPv4 NAT already do.
// ::/64 holds the loopback ::1 and the unspecified ::, so ::1 shares the
// bucket of non-IP peers (both are local); IPv4-mapped addresses lie in
// ::/64 too and are kept whole, as IPv4 above.
//
// The port is left out on purpose: one client opening many connections is
// still one client.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>

namespace ringhttp::server {

struct ClientKey {
  std::uint64_t hi = 0;  // address bits 127..64, the first 8 bytes on the wire
  std::uint64_t lo = 0;  // address bits 63..0, the last 8 bytes; 0 for IPv6 other than IPv4-mapped
  bool operator==(const ClientKey&) const = default;
};

// The prefix that marks an IPv4-mapped IPv6 address (RFC 4291 2.5.5.2):
// 80 zero bits, then 16 one bits, then the IPv4 address.
inline constexpr std::uint64_t ipv4_mapped_lo_prefix = 0x0000'ffff'0000'0000;
inline constexpr std::uint64_t ipv4_mapped_lo_mask = 0xffff'ffff'0000'0000;  // the prefix's bits within lo

// The prefix length an IPv6 client is keyed by: the bits of `hi`.
inline constexpr int ipv6_client_prefix_bits = 64;

constexpr bool is_ipv4_mapped(std::uint64_t hi, std::uint64_t lo) {
  return hi == 0 && (lo & ipv4_mapped_lo_mask) == ipv4_mapped_lo_prefix;
}

// An IPv6 address (hi, lo) to its key: the /64 for a native address, the
// whole address for an IPv4-mapped one (one IPv4 client).
constexpr ClientKey ipv6_client_key(std::uint64_t hi, std::uint64_t lo) {
  static_assert(ipv6_client_prefix_bits == 64, "the prefix is exactly ClientKey::hi");
  if (is_ipv4_mapped(hi, lo)) return ClientKey{.hi = hi, .lo = lo};
  return ClientKey{.hi = hi, .lo = 0};
}

// Big-endian bytes to an integer; s6_addr is a byte array, so no alignment
// or aliasing question arises.
constexpr std::uint64_t load_be64(const std::uint8_t* bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | bytes[i];
  return value;
}

// A peer of any other family (a Unix socket, say) gets the key of ::/64,
// which no remote IP peer can have (only the local :: and ::1 fall in it),
// so such peers share one bucket instead of escaping the limit. The family's struct is copied out
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
    return ipv6_client_key(load_be64(&v6.sin6_addr.s6_addr[0]), load_be64(&v6.sin6_addr.s6_addr[8]));
  }
  return ClientKey{};
}

}  // namespace ringhttp::server
