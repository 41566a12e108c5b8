#pragma once
// base64url (RFC 4648 section 5) without padding, as JWTs use it. Decoding
// is strict: one spelling per byte string, so a token cannot be altered
// without changing its signed bytes.

#include <cstddef>
#include <string>
#include <string_view>

namespace ringhttp::auth {

constexpr std::size_t base64url_decoded_bytes_max(std::size_t encoded) { return encoded / 4 * 3 + 2; }

// Decodes `in` into `out` (at most `capacity` bytes). False for '=',
// '+', '/', whitespace or any other byte outside the alphabet, a length
// that is 1 mod 4, unused low bits of the last character that are not
// zero, or too little room.
bool base64url_decode(std::string_view in, char* out, std::size_t capacity, std::size_t& out_len);

// Encoding, for tests and the token-minting helpers.
std::string base64url_encode(std::string_view bytes);

}  // namespace ringhttp::auth
