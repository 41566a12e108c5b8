// libFuzzer target for the HS256 token verifier. Two modes, by the first
// byte: raw bytes as a token (any input gets a verdict, never a crash or a
// read past it); or header and payload JSON, split at the first NUL,
// minted into a correctly signed token, whose verdict must agree with an
// independent reading of the claims (simdjson's DOM): accepted only with
// alg HS256 and an exp (the default refuses tokens without one), and then
// with exactly the payload's sub.
//
// Built and run by tools/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/auth/jwt.hpp"
#include "tests/jwt_mint.hpp"

namespace {

using namespace ringhttp::auth;

constexpr std::string_view secret = "fuzz secret";
constexpr std::int64_t now = 1'800'000'000;

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static TokenVerifier verifier(secret);
  static simdjson::dom::parser dom;
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  char subject[subject_bytes_max];
  std::size_t subject_len = 0;
  if ((data[0] & 1) == 0) {
    const std::string token(input);  // its own allocation: ASan sees a read past it
    const TokenError e = verifier.verify(token, now, subject, subject_len);
    require(e != TokenError::count_ && e != TokenError::missing);
    return 0;
  }
  const std::size_t nul = input.find('\0');
  if (nul == std::string_view::npos) return 0;
  const std::string header(input.substr(0, nul)), payload(input.substr(nul + 1));
  const std::string token = ringhttp::testing::mint_hs256(header, payload, secret);
  const TokenError e = verifier.verify(token, now, subject, subject_len);
  require(e != TokenError::bad_signature && e != TokenError::bad_encoding);
  if (e != TokenError::none) return 0;
  simdjson::dom::element h, p;
  std::string_view alg, sub;
  require(dom.parse(header).get(h) == simdjson::SUCCESS && h["alg"].get(alg) == simdjson::SUCCESS && alg == "HS256");
  simdjson::dom::parser payload_dom;
  require(payload_dom.parse(payload).get(p) == simdjson::SUCCESS && p["sub"].get(sub) == simdjson::SUCCESS);
  require(p["exp"].is_number());
  require(std::string_view(subject, subject_len) == sub);
  return 0;
}
