#pragma once
// What the client loads: an http:// URL on a loopback address.

#include <string>
#include <string_view>

#include "core/net/address.hpp"

namespace ringhttp::client {

struct Target {
  net::Address address;
  std::string host_header;  // as it goes into Host: (host[:port] from the URL)
  std::string path;         // path and query, at least "/"
};

// Parses http://HOST[:PORT][/PATH]. HOST is an IPv4 literal, a bracketed
// IPv6 literal, or "localhost" (127.0.0.1); no name resolution. Returns an
// empty string on success, else why the URL is refused.
std::string parse_url(std::string_view url, Target& out);

}  // namespace ringhttp::client
