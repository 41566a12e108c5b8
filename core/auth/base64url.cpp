#include "core/auth/base64url.hpp"

#include <array>
#include <cstdint>

namespace ringhttp::auth {
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::uint8_t invalid = 0xff;

constexpr std::array<std::uint8_t, 256> decode_table = [] {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = invalid;
  for (std::uint8_t i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
  return t;
}();

}  // namespace

bool base64url_decode(std::string_view in, char* out, std::size_t capacity, std::size_t& out_len) {
  const std::size_t tail = in.size() % 4;
  if (tail == 1) return false;
  const std::size_t need = in.size() / 4 * 3 + (tail == 0 ? 0 : tail - 1);
  if (need > capacity) return false;
  std::size_t o = 0;
  std::size_t i = 0;
  for (; i + 4 <= in.size(); i += 4) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const std::uint8_t d = decode_table[static_cast<unsigned char>(in[i + k])];
      if (d == invalid) return false;
      v = v << 6 | d;
    }
    out[o++] = char(v >> 16);
    out[o++] = char(v >> 8 & 0xff);
    out[o++] = char(v & 0xff);
  }
  if (tail > 0) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < tail; ++k) {
      const std::uint8_t d = decode_table[static_cast<unsigned char>(in[i + k])];
      if (d == invalid) return false;
      v = v << 6 | d;
    }
    if (tail == 2) {  // 12 bits: one byte and 4 unused bits
      if ((v & 0xf) != 0) return false;
      out[o++] = char(v >> 4);
    } else {  // 18 bits: two bytes and 2 unused bits
      if ((v & 0x3) != 0) return false;
      out[o++] = char(v >> 10);
      out[o++] = char(v >> 2 & 0xff);
    }
  }
  out_len = o;
  return true;
}

std::string base64url_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = std::uint32_t(static_cast<unsigned char>(bytes[i])) << 16 |
                            std::uint32_t(static_cast<unsigned char>(bytes[i + 1])) << 8 |
                            static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out += alphabet[v >> (6 * k) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 1) {
    const std::uint32_t v = static_cast<unsigned char>(bytes[i]);
    out += alphabet[v >> 2];
    out += alphabet[(v & 3) << 4];
  } else if (rest == 2) {
    const std::uint32_t v =
        std::uint32_t(static_cast<unsigned char>(bytes[i])) << 8 | static_cast<unsigned char>(bytes[i + 1]);
    out += alphabet[v >> 10];
    out += alphabet[v >> 4 & 63];
    out += alphabet[(v & 15) << 2];
  }
  return out;
}

}  // namespace ringhttp::auth
