#include "core/auth/jwt.hpp"

#include <openssl/crypto.h>
#include <simdjson.h>

#include <cassert>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "core/auth/base64url.hpp"

namespace ringhttp::auth {
namespace {

// The header and payload are parsed whole (simdjson's DOM, into memory
// reserved once), not On-Demand: a member the verifier does not read must
// still be valid JSON, and On-Demand skips what it is not asked for.
namespace dom = simdjson::dom;

constexpr std::size_t part_bytes_max = base64url_decoded_bytes_max(token_bytes_max);
constexpr std::size_t padding_bytes = simdjson::SIMDJSON_PADDING;

}  // namespace

const char* metric_name(TokenError error) {
  switch (error) {
    case TokenError::none: return "none";
    case TokenError::missing: return "missing";
    case TokenError::too_long: return "too_long";
    case TokenError::malformed: return "malformed";
    case TokenError::bad_encoding: return "bad_encoding";
    case TokenError::bad_json: return "bad_json";
    case TokenError::bad_algorithm: return "bad_algorithm";
    case TokenError::bad_signature: return "bad_signature";
    case TokenError::expired: return "expired";
    case TokenError::not_yet_valid: return "not_yet_valid";
    case TokenError::missing_exp: return "missing_exp";
    case TokenError::bad_claims: return "bad_claims";
    case TokenError::count_: break;
  }
  return "unknown";
}

struct TokenVerifier::Impl {
  Impl(std::string_view secret, MissingExp when_missing) : hmac(secret), missing_exp(when_missing) {}
  HmacSha256 hmac;
  MissingExp missing_exp;
  dom::parser parser;
  char header[part_bytes_max + padding_bytes];
  char payload[part_bytes_max + padding_bytes];

  TokenError check_header(std::size_t len);
  TokenError read_claims(std::size_t len, std::int64_t now_s, char (&subject)[subject_bytes_max],
                         std::size_t& subject_len);
};

TokenVerifier::TokenVerifier(std::string_view secret, MissingExp missing_exp)
    : impl_(std::make_unique<Impl>(secret, missing_exp)) {
  // Capacity for the longest part: parse() then never allocates.
  if (impl_->parser.allocate(part_bytes_max) != simdjson::SUCCESS) throw std::runtime_error("simdjson: allocate");
}

TokenVerifier::~TokenVerifier() = default;

// The JOSE header: an object whose alg is exactly "HS256". The algorithm is
// ours to choose, not the token's: anything else (none above all) is refused.
TokenError TokenVerifier::Impl::check_header(std::size_t len) {
  dom::object object;
  if (parser.parse(header, len, false).get(object)) return TokenError::bad_json;
  bool alg_ok = false, alg_seen = false, typ_seen = false, crit = false;
  for (const auto [key, value] : object) {
    if (key == "alg") {
      if (alg_seen) return TokenError::bad_json;  // which one counts would be ambiguous
      alg_seen = true;
      std::string_view alg;
      alg_ok = value.get(alg) == simdjson::SUCCESS && alg == "HS256";
    } else if (key == "typ") {
      if (typ_seen || !value.is_string()) return TokenError::bad_json;
      typ_seen = true;
    } else if (key == "crit") {
      crit = true;  // extensions we would have to understand: we understand none
    }
  }
  return alg_ok && !crit ? TokenError::none : TokenError::bad_algorithm;
}

TokenError TokenVerifier::Impl::read_claims(std::size_t len, std::int64_t now_s, char (&subject)[subject_bytes_max],
                                            std::size_t& subject_len) {
  dom::object object;
  if (parser.parse(payload, len, false).get(object)) return TokenError::bad_json;
  bool sub_seen = false, exp_seen = false, nbf_seen = false, claims_ok = true;
  double exp = 0, nbf = 0;
  std::string_view sub;
  for (const auto [key, value] : object) {
    if (key == "sub") {
      if (sub_seen) return TokenError::bad_json;
      sub_seen = true;
      if (value.get(sub)) claims_ok = false;
    } else if (key == "exp" || key == "nbf") {
      bool& seen = key == "exp" ? exp_seen : nbf_seen;
      if (seen) return TokenError::bad_json;
      seen = true;
      double& out = key == "exp" ? exp : nbf;
      // A NumericDate: an integer or a fraction, read as a double.
      if (!value.is_number() || value.get_double().get(out) || !std::isfinite(out)) claims_ok = false;
    }
  }
  if (!claims_ok || !sub_seen || sub.empty() || sub.size() > subject_bytes_max) return TokenError::bad_claims;
  if (!exp_seen && missing_exp == MissingExp::refuse) return TokenError::missing_exp;
  const double now = double(now_s);
  if (exp_seen && now > exp + double(leeway_seconds)) return TokenError::expired;
  if (nbf_seen && now + double(leeway_seconds) < nbf) return TokenError::not_yet_valid;
  std::memcpy(subject, sub.data(), sub.size());
  subject_len = sub.size();
  return TokenError::none;
}

TokenError TokenVerifier::verify(std::string_view token, std::int64_t now_s, char (&subject)[subject_bytes_max],
                                 std::size_t& subject_len) {
  if (token.size() > token_bytes_max) return TokenError::too_long;
  const std::size_t dot1 = token.find('.');
  const std::size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return TokenError::malformed;
  }
  const std::string_view header_part = token.substr(0, dot1);
  const std::string_view payload_part = token.substr(dot1 + 1, dot2 - dot1 - 1);
  const std::string_view signature_part = token.substr(dot2 + 1);
  if (header_part.empty() || payload_part.empty() || signature_part.empty()) return TokenError::malformed;

  Impl& s = *impl_;
  std::size_t header_len = 0;
  if (!base64url_decode(header_part, s.header, part_bytes_max, header_len)) return TokenError::bad_encoding;
  if (const TokenError e = s.check_header(header_len); e != TokenError::none) return e;

  Mac given;
  std::size_t given_len = 0;
  if (!base64url_decode(signature_part, reinterpret_cast<char*>(given.data()), given.size(), given_len) ||
      given_len != given.size()) {
    return TokenError::bad_encoding;
  }
  const Mac expected = s.hmac.sign(token.substr(0, dot2));
  if (CRYPTO_memcmp(expected.data(), given.data(), given.size()) != 0) return TokenError::bad_signature;

  // Only a token we signed gets its claims read.
  std::size_t payload_len = 0;
  if (!base64url_decode(payload_part, s.payload, part_bytes_max, payload_len)) return TokenError::bad_encoding;
  return s.read_claims(payload_len, now_s, subject, subject_len);
}

}  // namespace ringhttp::auth
