#include "client/target.hpp"

#include <charconv>

namespace ringhttp::client {

std::string parse_url(std::string_view url, Target& out) {
  constexpr std::string_view scheme = "http://";
  if (url.starts_with("https://")) return "https is not supported (plain http:// only)";
  if (!url.starts_with(scheme)) return "the URL must start with http://";
  std::string_view rest = url.substr(scheme.size());
  const std::size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) return "user info in the URL is not supported";
  if (authority.empty()) return "the URL has no host";
  std::string_view host = authority;
  std::string_view port_text;
  if (authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return "unterminated IPv6 literal in the URL";
    host = authority.substr(0, close + 1);
    std::string_view after = authority.substr(close + 1);
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
  if (host.empty() || host == "[]") return "the URL has no host";
  unsigned port = 80;
  if (!port_text.empty()) {
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
      return "bad port '" + std::string(port_text) + "' (1..65535)";
    }
  }
  const std::string_view literal = host == "localhost" ? std::string_view("127.0.0.1") : host;
  if (!net::parse_address(literal, std::uint16_t(port), out.address)) {
    return "host '" + std::string(host) + "' is not an IP address literal or localhost (no name resolution)";
  }
  if (!net::is_loopback(out.address)) {
    return "refusing to load " + out.address.to_string() + ": only loopback targets (127.0.0.0/8, ::1) are allowed";
  }
  out.host_header = std::string(authority);
  // Appended, not "/" + path: GCC 12 warns falsely (-Wrestrict) on that.
  out.path.clear();
  if (path.front() == '?') out.path += '/';
  out.path.append(path);
  return {};
}

}  // namespace ringhttp::client
