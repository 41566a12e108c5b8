// Minting HS256 tokens for tests, with OpenSSL's own one-shot HMAC (not the
// server's code), so a verifier bug cannot hide behind a matching minting bug.
#pragma once

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <string_view>

namespace ringhttp::testing {

inline std::string base64url(std::string_view bytes) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  unsigned bits = 0;
  int count = 0;
  for (const char c : bytes) {
    bits = (bits << 8) | static_cast<unsigned char>(c);
    count += 8;
    while (count >= 6) {
      out += alphabet[(bits >> (count - 6)) & 63];
      count -= 6;
    }
  }
  if (count > 0) out += alphabet[(bits << (6 - count)) & 63];
  return out;
}

// base64url(header).base64url(payload).base64url(HMAC-SHA256(secret, both)).
inline std::string mint_hs256(std::string_view header_json, std::string_view payload_json, std::string_view secret) {
  const std::string signing_input = base64url(header_json) + "." + base64url(payload_json);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_len = 0;
  HMAC(EVP_sha256(), secret.data(), int(secret.size()), reinterpret_cast<const unsigned char*>(signing_input.data()),
       signing_input.size(), mac, &mac_len);
  return signing_input + "." + base64url(std::string_view(reinterpret_cast<const char*>(mac), mac_len));
}

}  // namespace ringhttp::testing
