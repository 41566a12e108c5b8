// The token verifier's parts without sockets: base64url, HMAC-SHA256 and
// every check of an HS256 token.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <random>
#include <string>

#include "core/auth/base64url.hpp"
#include "core/auth/hmac_sha256.hpp"
#include "core/auth/jwt.hpp"
#include "tests/jwt_mint.hpp"

namespace ringhttp::auth {
namespace {

using ringhttp::testing::mint_hs256;

std::string decoded(std::string_view in, bool& ok) {
  std::string out(base64url_decoded_bytes_max(in.size()), '\0');
  std::size_t len = 0;
  ok = base64url_decode(in, out.data(), out.size(), len);
  out.resize(ok ? len : 0);
  return out;
}

TEST(Base64url, round_trips_every_length_and_byte) {
  std::mt19937 rng(7);
  for (std::size_t n = 0; n < 70; ++n) {
    std::string bytes(n, '\0');
    for (char& c : bytes) c = char(rng());
    const std::string enc = base64url_encode(bytes);
    EXPECT_EQ(enc, ringhttp::testing::base64url(bytes)) << "two independent encoders agree";
    bool ok = false;
    EXPECT_EQ(decoded(enc, ok), bytes);
    EXPECT_TRUE(ok) << n;
  }
  bool ok = false;
  EXPECT_EQ(decoded("SGVsbG8", ok), "Hello");
  EXPECT_TRUE(ok);
  EXPECT_EQ(decoded("-_8", ok), "\xfb\xff");
  EXPECT_TRUE(ok);
}

TEST(Base64url, refuses_anything_but_the_one_strict_spelling) {
  for (const char* bad :
       {"SGVsbG8=", "SGVsbA==", "a+b/", "ab cd", "ab\ncd", "A", "AAAAA", "ab$d", "SGVsbG9", "SGVsbH"}) {
    bool ok = true;
    decoded(bad, ok);
    EXPECT_FALSE(ok) << bad;  // SGVsbG9 and SGVsbH: low bits set in the last character
  }
  std::size_t len = 0;
  char small[2];
  EXPECT_FALSE(base64url_decode("AAAA", small, sizeof small, len)) << "no room is a refusal, not an overflow";
}

std::string hex(const Mac& mac) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char b : mac) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

TEST(HmacSha256, matches_rfc_4231) {
  const struct {
    std::string key, data, mac;
  } vectors[] = {
      {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {std::string(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
       "hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const auto& v : vectors) EXPECT_EQ(hex(HmacSha256(v.key).sign(v.data)), v.mac) << v.data;
}

TEST(HmacSha256, agrees_with_openssl_hmac_for_random_keys_and_messages) {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::string key(rng() % 201, '\0'), msg(rng() % 1001, '\0');
    for (char& c : key) c = char(rng());
    for (char& c : msg) c = char(rng());
    const HmacSha256 ours(key);
    Mac theirs{};
    unsigned int len = 0;
    HMAC(EVP_sha256(), key.data(), int(key.size()), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(),
         theirs.data(), &len);
    ASSERT_EQ(len, theirs.size());
    EXPECT_EQ(ours.sign(msg), theirs) << "key " << key.size() << " msg " << msg.size();
    EXPECT_EQ(ours.sign(msg), theirs) << "signing twice gives the same: the states are copied, not consumed";
  }
}

constexpr std::string_view secret = "unit-test secret";
constexpr std::int64_t now = 1'800'000'000;
constexpr std::string_view hs256 = R"({"alg":"HS256","typ":"JWT"})";

class Jwt : public ::testing::Test {
 protected:
  TokenVerifier verifier{secret};
  char subject[subject_bytes_max];
  std::size_t subject_len = 0;

  TokenError verify(std::string_view token, std::int64_t at = now) {
    subject_len = 0;
    return verifier.verify(token, at, subject, subject_len);
  }
  std::string sub() const { return std::string(subject, subject_len); }
};

std::string claims(std::string_view more) { return "{\"sub\":\"u1\"" + std::string(more) + "}"; }
// An hour after `now`: a token meant to pass carries an exp, since one
// without is refused by default.
const std::string exp_later = ",\"exp\":" + std::to_string(now + 3600);

TEST_F(Jwt, a_valid_token_gives_its_subject_unescaped) {
  EXPECT_EQ(verify(mint_hs256(hs256, claims(",\"exp\":1800000060"), secret)), TokenError::none);
  EXPECT_EQ(sub(), "u1");
  EXPECT_EQ(verify(mint_hs256(R"({"alg":"HS256"})", R"({"sub":"a\"b\\c\u00e9","iat":1,"exp":1800003600})", secret)),
            TokenError::none);
  EXPECT_EQ(sub(), "a\"b\\c\xc3\xa9");
  // Unknown header members and claims are ignored; exp as a float is a NumericDate.
  EXPECT_EQ(verify(mint_hs256(R"({"kid":"k1","alg":"HS256"})", claims(",\"exp\":1800000000.5,\"x\":[1,{}]"), secret)),
            TokenError::none);
}

TEST_F(Jwt, refuses_tokens_that_are_not_three_parts) {
  const std::string good = mint_hs256(hs256, claims(""), secret);
  EXPECT_EQ(verify(""), TokenError::malformed);
  EXPECT_EQ(verify("abc"), TokenError::malformed);
  EXPECT_EQ(verify(good.substr(0, good.rfind('.'))), TokenError::malformed);
  EXPECT_EQ(verify(good + ".x"), TokenError::malformed);
  EXPECT_EQ(verify(".a.b"), TokenError::malformed);
  EXPECT_EQ(verify("a..b"), TokenError::malformed);
  EXPECT_EQ(verify(good.substr(0, good.rfind('.') + 1)), TokenError::malformed);
  EXPECT_EQ(verify(std::string(token_bytes_max + 1, 'a')), TokenError::too_long);
}

TEST_F(Jwt, every_prefix_of_a_valid_token_is_refused) {
  const std::string good = mint_hs256(hs256, claims(exp_later), secret);
  for (std::size_t n = 0; n < good.size(); ++n) EXPECT_NE(verify(good.substr(0, n)), TokenError::none) << n;
  EXPECT_EQ(verify(good), TokenError::none);
}

TEST_F(Jwt, refuses_bad_base64url_in_each_part) {
  const std::string good = mint_hs256(hs256, claims(""), secret);
  const std::size_t d1 = good.find('.'), d2 = good.rfind('.');
  for (const std::size_t at : {std::size_t(1), d2 + 2}) {
    std::string bad = good;
    bad[at] = '+';
    EXPECT_EQ(verify(bad), TokenError::bad_encoding) << at;
  }
  // The payload is decoded only once the signature over its encoded bytes
  // holds, so a bad character there is a bad signature first.
  std::string bad_payload = good;
  bad_payload[d1 + 2] = '+';
  EXPECT_EQ(verify(bad_payload), TokenError::bad_signature);
  // Signed, but its payload is not strict base64url (padding).
  const std::string padded_input =
      ringhttp::testing::base64url(hs256) + "." + ringhttp::testing::base64url(claims("")) + "==";
  const Mac mac = HmacSha256(secret).sign(padded_input);
  const std::string padded =
      padded_input + "." + base64url_encode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size()));
  EXPECT_EQ(verify(padded), TokenError::bad_encoding);
  EXPECT_EQ(verify(good + "="), TokenError::bad_encoding);
  EXPECT_EQ(verify(good.substr(0, d2 + 1) + "AAAA"), TokenError::bad_encoding) << "a signature not 32 bytes";
}

TEST_F(Jwt, only_hs256_is_accepted_whatever_the_header_says) {
  for (const char* header :
       {R"({"alg":"none"})", R"({"alg":"HS384"})", R"({"alg":"RS256"})", R"({"alg":"hs256"})", R"({"typ":"JWT"})",
        R"({"alg":256})", R"({"alg":null})", R"({"alg":"HS256","crit":["exp"]})"}) {
    EXPECT_EQ(verify(mint_hs256(header, claims(""), secret)), TokenError::bad_algorithm) << header;
  }
  // alg none with no signature at all is not even a token.
  const std::string none = mint_hs256(R"({"alg":"none"})", claims(""), secret);
  EXPECT_NE(verify(none.substr(0, none.rfind('.') + 1)), TokenError::none);
}

TEST_F(Jwt, refuses_another_secret_and_any_flipped_bit) {
  EXPECT_EQ(verify(mint_hs256(hs256, claims(""), "another secret")), TokenError::bad_signature);
  const std::string good = mint_hs256(hs256, claims(""), secret);
  const std::size_t d2 = good.rfind('.');
  for (std::size_t i = d2 + 1; i + 1 < good.size(); ++i) {  // the last character carries unused bits
    std::string bad = good;
    bad[i] = bad[i] == 'A' ? 'B' : 'A';
    EXPECT_EQ(verify(bad), TokenError::bad_signature) << i;
  }
  // A payload changed after signing.
  std::string changed = good;
  changed[good.find('.') + 3] ^= 1;
  EXPECT_NE(verify(changed), TokenError::none);
}

TEST_F(Jwt, checks_exp_and_nbf_with_the_leeway) {
  const auto at = [&](std::string_view more) { return verify(mint_hs256(hs256, claims(more), secret)); };
  EXPECT_EQ(at(",\"exp\":" + std::to_string(now - leeway_seconds - 1)), TokenError::expired);
  EXPECT_EQ(at(",\"exp\":" + std::to_string(now - leeway_seconds)), TokenError::none);
  EXPECT_EQ(at(",\"exp\":" + std::to_string(now - 1)), TokenError::none) << "within the leeway";
  EXPECT_EQ(at(",\"nbf\":" + std::to_string(now + leeway_seconds + 1) + exp_later), TokenError::not_yet_valid);
  EXPECT_EQ(at(",\"nbf\":" + std::to_string(now + leeway_seconds) + exp_later), TokenError::none);
  EXPECT_EQ(at(",\"exp\":\"1900000000\""), TokenError::bad_claims);
  EXPECT_EQ(at(",\"nbf\":true"), TokenError::bad_claims);
}

TEST_F(Jwt, a_token_without_exp_is_refused_unless_the_verifier_accepts_it) {
  const std::string no_exp = mint_hs256(hs256, claims(",\"iat\":1"), secret);
  EXPECT_EQ(verify(no_exp), TokenError::missing_exp);
  EXPECT_STREQ(metric_name(TokenError::missing_exp), "missing_exp");
  // The kinds before it still come first: a bad signature, then bad claims.
  EXPECT_EQ(verify(mint_hs256(hs256, claims(""), "another secret")), TokenError::bad_signature);
  EXPECT_EQ(verify(mint_hs256(hs256, "{}", secret)), TokenError::bad_claims);

  TokenVerifier lenient{secret, MissingExp::accept};
  EXPECT_EQ(lenient.verify(no_exp, now, subject, subject_len), TokenError::none);
  EXPECT_EQ(sub(), "u1");
  // Accepting tokens without exp does not relax the one a token has.
  const std::string expired = mint_hs256(hs256, claims(",\"exp\":" + std::to_string(now - 3600)), secret);
  EXPECT_EQ(lenient.verify(expired, now, subject, subject_len), TokenError::expired);
  const std::string text_exp = mint_hs256(hs256, claims(",\"exp\":\"soon\""), secret);
  EXPECT_EQ(lenient.verify(text_exp, now, subject, subject_len), TokenError::bad_claims);
  const std::string early = mint_hs256(hs256, claims(",\"nbf\":" + std::to_string(now + 3600)), secret);
  EXPECT_EQ(lenient.verify(early, now, subject, subject_len), TokenError::not_yet_valid);
}

TEST_F(Jwt, requires_a_subject_of_bounded_length) {
  EXPECT_EQ(verify(mint_hs256(hs256, R"({"exp":1900000000})", secret)), TokenError::bad_claims);
  EXPECT_EQ(verify(mint_hs256(hs256, R"({"sub":""})", secret)), TokenError::bad_claims);
  EXPECT_EQ(verify(mint_hs256(hs256, R"({"sub":7})", secret)), TokenError::bad_claims);
  EXPECT_EQ(verify(mint_hs256(hs256, "{\"sub\":\"" + std::string(subject_bytes_max + 1, 's') + "\"}", secret)),
            TokenError::bad_claims);
  EXPECT_EQ(
      verify(mint_hs256(hs256, "{\"sub\":\"" + std::string(subject_bytes_max, 's') + "\"" + exp_later + "}", secret)),
      TokenError::none);
  EXPECT_EQ(sub(), std::string(subject_bytes_max, 's'));
}

TEST_F(Jwt, refuses_json_that_is_not_one_object_or_repeats_a_member) {
  EXPECT_EQ(verify(mint_hs256("not json", claims(""), secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(R"(["HS256"])", claims(""), secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(R"({"alg":"HS256","alg":"HS256"})", claims(""), secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(hs256, "[1]", secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(hs256, claims("") + "x", secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(hs256, R"({"sub":"a","sub":"b"})", secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(hs256, "{\"sub\":\"\xff\"}", secret)), TokenError::bad_json);
  // A member the verifier does not read must be valid JSON all the same.
  EXPECT_EQ(verify(mint_hs256(hs256, R"({"sub":"u1","x":q})", secret)), TokenError::bad_json);
  EXPECT_EQ(verify(mint_hs256(R"({"alg":"HS256","kid":[1,,2]})", claims(""), secret)), TokenError::bad_json);
}

TEST_F(Jwt, repeated_verification_gives_the_same_answer) {
  const std::string good = mint_hs256(hs256, claims(exp_later), secret);
  const std::string bad = mint_hs256(hs256, claims(""), "other");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(verify(good), TokenError::none);
    EXPECT_EQ(sub(), "u1");
    EXPECT_EQ(verify(bad), TokenError::bad_signature);
  }
}

}  // namespace
}  // namespace ringhttp::auth
