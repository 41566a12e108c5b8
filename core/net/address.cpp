#include "core/net/address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>

#include "core/text/parse_number.hpp"

namespace ringhttp::net {

bool parse_address(std::string_view host, std::uint16_t port, Address& out) {
  out = Address{};
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  char text[INET6_ADDRSTRLEN + 1];
  if (host.empty() || host.size() >= sizeof text) return false;
  std::memcpy(text, host.data(), host.size());
  text[host.size()] = '\0';
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out.storage);
  if (::inet_pton(AF_INET, text, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    out.length = sizeof(sockaddr_in);
    return true;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.storage);
  if (::inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    out.length = sizeof(sockaddr_in6);
    return true;
  }
  return false;
}

bool parse_endpoint(std::string_view text, Address& out) {
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view host = text.substr(0, colon);
  const std::string_view port_text = text.substr(colon + 1);
  const bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (!bracketed && host.find(':') != std::string_view::npos) return false;
  std::uint16_t port = 0;
  if (!text::parse_number<std::uint16_t>(port_text, 0, 65535, port)) return false;
  if (!parse_address(host, port, out)) return false;
  // A bracketed literal must be IPv6: "[127.0.0.1]:80" is no one's spelling.
  return bracketed == (out.family() == AF_INET6);
}

std::uint16_t Address::port() const {
  if (family() == AF_UNIX) return 0;
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
}

void Address::set_port(std::uint16_t port) {
  if (family() == AF_UNIX) return;
  if (family() == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(port);
  }
}

std::string Address::to_string() const {
  if (family() == AF_UNIX) return std::string("unix:") + reinterpret_cast<const sockaddr_un*>(&storage)->sun_path;
  char text[INET6_ADDRSTRLEN] = "?";
  if (family() == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(port());
  }
  ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text, sizeof text);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "[" + string.
  std::string out;
  out.reserve(INET6_ADDRSTRLEN + 8);
  out.append("[").append(text).append("]:").append(std::to_string(port()));
  return out;
}

bool unix_address(std::string_view path, Address& out) {
  out = Address{};
  auto* un = reinterpret_cast<sockaddr_un*>(&out.storage);
  if (path.empty() || path.size() >= sizeof un->sun_path) return false;
  un->sun_family = AF_UNIX;
  std::memcpy(un->sun_path, path.data(), path.size());
  un->sun_path[path.size()] = '\0';
  out.length = socklen_t(offsetof(sockaddr_un, sun_path) + path.size() + 1);
  return true;
}

}  // namespace ringhttp::net
