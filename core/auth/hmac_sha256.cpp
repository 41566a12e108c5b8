// The low-level SHA256_Init/Update/Final API is deprecated in OpenSSL 3 but
// present; it is the one whose state is a plain struct that can be copied
// without an allocation, which is the point here.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "core/auth/hmac_sha256.hpp"

#include <openssl/sha.h>

#include <cstring>

namespace ringhttp::auth {

namespace {
constexpr std::size_t block_bytes = 64;  // SHA-256's block
}

struct HmacSha256::States {
  SHA256_CTX inner;  // after absorbing key ^ ipad
  SHA256_CTX outer;  // after absorbing key ^ opad
};

HmacSha256::HmacSha256(std::string_view key) : states_(std::make_unique<States>()) {
  unsigned char block[block_bytes] = {};
  if (key.size() > block_bytes) {
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), block);
  } else {
    std::memcpy(block, key.data(), key.size());
  }
  unsigned char pad[block_bytes];
  for (std::size_t i = 0; i < block_bytes; ++i) pad[i] = block[i] ^ 0x36;
  SHA256_Init(&states_->inner);
  SHA256_Update(&states_->inner, pad, block_bytes);
  for (std::size_t i = 0; i < block_bytes; ++i) pad[i] = block[i] ^ 0x5c;
  SHA256_Init(&states_->outer);
  SHA256_Update(&states_->outer, pad, block_bytes);
  std::memset(block, 0, sizeof block);
  std::memset(pad, 0, sizeof pad);
}

HmacSha256::~HmacSha256() = default;

Mac HmacSha256::sign(std::string_view message) const {
  SHA256_CTX ctx = states_->inner;
  SHA256_Update(&ctx, message.data(), message.size());
  unsigned char inner_digest[sha256_bytes];
  SHA256_Final(inner_digest, &ctx);
  ctx = states_->outer;
  SHA256_Update(&ctx, inner_digest, sizeof inner_digest);
  Mac mac;
  SHA256_Final(mac.data(), &ctx);
  return mac;
}

}  // namespace ringhttp::auth
