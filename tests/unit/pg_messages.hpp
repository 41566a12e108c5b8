#pragma once
// Postgres v3 protocol bytes as the unit tests write them: big-endian
// integers and a backend message (type, length, body).

#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::testing_support::pg {

inline std::string be32(std::uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }
inline std::string be16(std::uint16_t v) { return {char(v >> 8), char(v)}; }
inline std::uint32_t get32(std::string_view s) {
  return (std::uint32_t(std::uint8_t(s[0])) << 24) | (std::uint32_t(std::uint8_t(s[1])) << 16) |
         (std::uint32_t(std::uint8_t(s[2])) << 8) | std::uint32_t(std::uint8_t(s[3]));
}
inline std::string message(char type, std::string_view body) {
  return type + be32(std::uint32_t(4 + body.size())) + std::string(body);
}

}  // namespace ringhttp::testing_support::pg
