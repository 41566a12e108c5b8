#pragma once
// Socket addresses from text: IPv4 dotted quads, IPv6 literals and
// Unix-domain socket paths.

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::net {

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;

  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  std::uint16_t port() const;
  void set_port(std::uint16_t port);
  std::string to_string() const;  // "127.0.0.1:8080", "[::1]:8080" or "unix:/run/app.sock"
};

// Parses an address literal (no name resolution). False on bad input.
bool parse_address(std::string_view host, std::uint16_t port, Address& out);

// Parses "ADDR:PORT": an IPv4 literal ("127.0.0.1:9100") or a bracketed
// IPv6 one ("[::1]:9100"), as Address::to_string() writes them. The port is
// required (0 lets the kernel pick one); an unbracketed IPv6 literal is
// refused, since its last colon could be part of the address.
bool parse_endpoint(std::string_view text, Address& out);

// A Unix-domain socket's path (AF_UNIX). False when it is empty or longer
// than sockaddr_un holds (107 bytes and its terminating NUL).
bool unix_address(std::string_view path, Address& out);

}  // namespace ringhttp::net
