#pragma once
// What the client loads: an http:// or https:// URL, its host resolved once
// at start-up (before any connection, never on the request path), or a
// Unix-domain socket that the URL then only names the Host and path for.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/net/address.hpp"

namespace ringhttp::client {

enum class Scheme : std::uint8_t { http, https };

struct Target {
  Scheme scheme = Scheme::http;
  std::string host;           // the URL's host: a name, or an address literal without brackets
  bool host_is_literal = false;  // an IPv4 or IPv6 literal (no SNI is sent for it)
  std::uint16_t port = 80;
  std::string host_header;    // as it goes into Host: the URL's host, and its port unless the scheme's default
  std::string path;           // path and query, at least "/"
  // Where connections go, in the order they are tried: the first that
  // accepts at start-up is where every connection goes first; a connection
  // whose connect fails moves on to the next.
  std::vector<net::Address> addresses;
};

// Parses http[s]://HOST[:PORT][/PATH]. HOST is a name, an IPv4 literal or a
// bracketed IPv6 literal. Returns an empty string on success, else why the
// URL is refused. Resolves nothing (resolve_target does).
std::string parse_url(std::string_view url, Target& out);

// curl's --resolve HOST:PORT:ADDRESS[,ADDRESS...]: connections to HOST:PORT
// go to these addresses, and the resolver is not asked.
struct ResolveOverride {
  std::string host;  // lower case, without brackets
  std::uint16_t port = 0;
  std::vector<net::Address> addresses;
};
// Parses one --resolve value; an empty string on success, else why not.
std::string parse_resolve(std::string_view text, ResolveOverride& out);

enum class Family : std::uint8_t { any, ipv4, ipv6 };

// Fills target.addresses: the Unix socket when one is given, else the
// literal, else the first --resolve override for the host and port, else
// getaddrinfo's answer (once, here). Restricted to `family` (-4/-6).
// Returns an empty string on success, else why (naming the name and the
// resolver's reason).
std::string resolve_target(Target& target, const std::vector<ResolveOverride>& overrides, Family family,
                           const std::string& unix_socket);

}  // namespace ringhttp::client
