#include "client/load/target.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "core/text/ascii.hpp"
#include "core/text/parse_number.hpp"

namespace ringhttp::client {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = text::ascii_lower(c);
  return out;
}


bool same_address(const net::Address& a, const net::Address& b) {
  return a.length == b.length && std::memcmp(&a.storage, &b.storage, a.length) == 0;
}

bool family_ok(const net::Address& a, Family family) {
  return family == Family::any || (family == Family::ipv4 && a.family() == AF_INET) ||
         (family == Family::ipv6 && a.family() == AF_INET6);
}

const char* family_name(Family family) {
  return family == Family::ipv4 ? "IPv4 " : family == Family::ipv6 ? "IPv6 " : "";
}

}  // namespace

namespace {

// The authority's host and port text: a bracketed IPv6 literal, or a
// name or IPv4 address with an optional :port.
std::string split_authority(std::string_view authority, std::string_view& host, std::string_view& port_text,
                            bool& bracketed) {
  host = authority;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated IPv6 literal in the URL";
    host = authority.substr(1, close - 1);
    bracketed = true;
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return "unexpected text after the IPv6 literal";
      port_text = after.substr(1);
      if (port_text.empty()) return "empty port in the URL";
    }
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
    if (port_text.empty()) return "empty port in the URL";
  }
  if (host.empty()) return "the URL has no host";
  return {};
}

// The host as an address literal (its one address, with out.port) or a
// name to resolve later, checked byte by byte.
std::string take_host(std::string_view host, bool bracketed, Target& out) {
  net::Address literal;
  if (bracketed) {
    if (!net::parse_address(host, out.port, literal) || literal.family() != AF_INET6) {
      return std::string("not an IPv6 address in brackets: ").append(host);
    }
    out.host_is_literal = true;
    out.addresses.push_back(literal);
  } else if (net::parse_address(host, out.port, literal)) {
    if (literal.family() != AF_INET) return "an IPv6 address in a URL goes in brackets: [" + std::string(host) + "]";
    out.host_is_literal = true;
    out.addresses.push_back(literal);
  } else {
    for (const char c : host) {
      if (!text::is_reg_name_byte(c)) return std::string("not a host name: ").append(host);
    }
  }
  out.host = out.host_is_literal ? std::string(host) : lower(host);
  return {};
}

}  // namespace

std::string parse_url(std::string_view url, Target& out) {
  out = Target{};
  if (url.starts_with("http://")) {
    out.scheme = Scheme::http;
    url.remove_prefix(7);
  } else if (url.starts_with("https://")) {
    out.scheme = Scheme::https;
    url.remove_prefix(8);
  } else {
    return "the URL must start with http:// or https://";
  }
  const std::size_t slash = url.find_first_of("/?#");
  const std::string_view authority = url.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view("/") : url.substr(slash);
  if (path.find('#') != std::string_view::npos) return "a fragment (#...) in the URL is not sent to servers";
  if (authority.find('@') != std::string_view::npos) return "user info in the URL is not supported";
  if (authority.empty()) return "the URL has no host";
  std::string_view host;
  std::string_view port_text;
  bool bracketed = false;
  if (std::string e = split_authority(authority, host, port_text, bracketed); !e.empty()) return e;
  const std::uint16_t default_port = out.scheme == Scheme::https ? 443 : 80;
  out.port = default_port;
  if (!port_text.empty() && !text::parse_number<std::uint16_t>(port_text, 1, 65535, out.port)) {
    return "bad port '" + std::string(port_text) + "' (1..65535)";
  }
  if (std::string e = take_host(host, bracketed, out); !e.empty()) return e;
  // Host carries the URL's host (brackets kept) and its port unless it is
  // the scheme's default, as curl and browsers write it.
  // Appended, not "[" + host: GCC 12 warns falsely (-Wrestrict) on that.
  if (bracketed) out.host_header.append("[");
  out.host_header.append(out.host);
  if (bracketed) out.host_header.append("]");
  if (out.port != default_port) out.host_header.append(":").append(std::to_string(out.port));
  // Appended, not "/" + path: GCC 12 warns falsely (-Wrestrict) on that.
  if (path.front() == '?') out.path += '/';
  out.path.append(path);
  return {};
}

std::string parse_resolve(std::string_view text, ResolveOverride& out) {
  out = ResolveOverride{};
  const std::string bad = "bad --resolve '" + std::string(text) + "' (HOST:PORT:ADDRESS[,ADDRESS...])";
  std::string_view host;
  std::string_view rest;
  if (text.starts_with('[')) {
    const std::size_t close = text.find("]:");
    if (close == std::string_view::npos) return bad;
    host = text.substr(1, close - 1);
    rest = text.substr(close + 2);
  } else {
    const std::size_t colon = text.find(':');
    if (colon == std::string_view::npos) return bad;
    host = text.substr(0, colon);
    rest = text.substr(colon + 1);
  }
  const std::size_t colon = rest.find(':');
  if (host.empty() || colon == std::string_view::npos) return bad;
  if (!text::parse_number<std::uint16_t>(rest.substr(0, colon), 1, 65535, out.port)) return bad;
  out.host = lower(host);
  std::string_view list = rest.substr(colon + 1);
  if (list.empty() || list.back() == ',') return bad;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view one = list.substr(0, comma);
    net::Address address;
    // An IPv6 address with or without brackets, as curl takes it.
    if (!net::parse_address(one, out.port, address)) {
      return "bad --resolve address '" + std::string(one) + "' (an IPv4 or IPv6 address)";
    }
    out.addresses.push_back(address);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  if (out.addresses.empty()) return bad;
  return {};
}

std::string resolve_target(Target& target, const std::vector<ResolveOverride>& overrides, Family family,
                           const std::string& unix_socket) {
  if (!unix_socket.empty()) {
    net::Address address;
    if (!net::unix_address(unix_socket, address)) return "--unix-socket: the path is empty or too long";
    target.addresses = {address};
    return {};
  }
  std::vector<net::Address> found;
  std::string source;
  if (target.host_is_literal) {
    found = target.addresses;
  } else if (const auto it = std::find_if(overrides.begin(), overrides.end(),
                                          [&](const ResolveOverride& r) {
                                            return r.host == target.host && r.port == target.port;
                                          });
             it != overrides.end()) {
    found = it->addresses;
    source = " (--resolve)";
  } else {
    addrinfo hints{};
    hints.ai_family = family == Family::ipv4 ? AF_INET : family == Family::ipv6 ? AF_INET6 : AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const std::string port = std::to_string(target.port);
    if (const int rc = ::getaddrinfo(target.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
      return "cannot resolve '" + target.host + "': " + ::gai_strerror(rc);
    }
    for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
      if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
      net::Address address;
      std::memcpy(&address.storage, a->ai_addr, a->ai_addrlen);
      address.length = a->ai_addrlen;
      const bool seen = std::any_of(found.begin(), found.end(),
                                    [&](const net::Address& f) { return same_address(f, address); });
      if (!seen) found.push_back(address);
    }
    ::freeaddrinfo(list);
  }
  std::erase_if(found, [&](const net::Address& a) { return !family_ok(a, family); });
  if (found.empty()) return "'" + target.host + "' has no " + family_name(family) + "address" + source;
  target.addresses = std::move(found);
  return {};
}

}  // namespace ringhttp::client
