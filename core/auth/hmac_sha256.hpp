#pragma once
// HMAC-SHA256 (RFC 2104) on libcrypto's SHA-256, with the key's inner and
// outer blocks absorbed once: sign() copies two precomputed states and
// finishes them, allocating nothing. (OpenSSL 3's HMAC() and EVP_MAC
// allocate on every call: copying a digest context duplicates its provider
// state.) Checked against RFC 4231 and OpenSSL's HMAC() in tests/unit.

#include <array>
#include <cstddef>
#include <memory>
#include <string_view>

namespace ringhttp::auth {

inline constexpr std::size_t sha256_bytes = 32;
using Mac = std::array<unsigned char, sha256_bytes>;

class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  ~HmacSha256();
  HmacSha256(const HmacSha256&) = delete;
  HmacSha256& operator=(const HmacSha256&) = delete;

  Mac sign(std::string_view message) const;

 private:
  struct States;  // SHA256_CTX, kept out of this header
  std::unique_ptr<States> states_;
};

}  // namespace ringhttp::auth
