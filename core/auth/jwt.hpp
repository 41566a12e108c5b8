#pragma once
// HS256 bearer tokens (RFC 7519 JWTs, RFC 7515 compact form) verified
// without an allocation: strict base64url, `alg` exactly HS256, the
// signature compared in constant time before the claims are read, `exp` and
// `nbf` with a small leeway, `sub` required, and `exp` required too unless
// the verifier is built to accept tokens without one. Every refusal is one
// 401 to the client; the kind is for counters and tests only.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/auth/hmac_sha256.hpp"

namespace ringhttp::auth {

enum class TokenError : std::uint8_t {
  none,
  missing,        // no bearer token (the caller's verdict; verify() never returns it)
  too_long,       // over token_bytes_max
  malformed,      // not three non-empty dot-separated parts
  bad_encoding,   // a part that is not strict base64url, or a signature not 32 bytes
  bad_json,       // header or payload not a JSON object, trailing bytes, a repeated member
  bad_algorithm,  // alg other than HS256, or a crit header
  bad_signature,
  expired,
  not_yet_valid,
  missing_exp,  // no exp claim, and the verifier does not accept tokens that never expire
  bad_claims,   // sub missing, empty, too long or not a string; exp or nbf not a number
  count_,
};
const char* metric_name(TokenError error);

// A token's longest accepted form: real HS256 tokens are a few hundred
// bytes; 2 KiB leaves room for generous claims and bounds the work an
// attacker can ask for.
inline constexpr std::size_t token_bytes_max = 2048;
inline constexpr std::size_t subject_bytes_max = 128;
// Clock skew tolerated between the token's issuer and this server.
inline constexpr std::int64_t leeway_seconds = 30;

// A token without `exp` would be valid for ever: one leaked token would open
// the door until the secret is changed. So it is refused unless the
// deployment revokes tokens some other way and says so (--jwt-allow-no-exp).
enum class MissingExp : bool { refuse, accept };

class TokenVerifier {
 public:
  // Allocates its JSON parser and precomputes the HMAC key states here.
  explicit TokenVerifier(std::string_view secret, MissingExp missing_exp = MissingExp::refuse);
  ~TokenVerifier();
  TokenVerifier(const TokenVerifier&) = delete;
  TokenVerifier& operator=(const TokenVerifier&) = delete;

  // Verifies `token` (the bytes after "Bearer ") at `now_s` (Unix time). On
  // success copies the unescaped `sub` into `subject`. Never allocates.
  TokenError verify(std::string_view token, std::int64_t now_s, char (&subject)[subject_bytes_max],
                    std::size_t& subject_len);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringhttp::auth
