#pragma once
// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// 2012): a keyed hash whose outputs an attacker cannot predict, or aim at
// one value, without the 128-bit key. The rate limiter uses it to pick a
// client's set, so that nobody outside the process can choose addresses
// that all land in a victim's set and evict its bucket.
//
// Written from the paper's description: four 64-bit words of state, two
// SipRounds per 8-byte message word ("2"), four after the last ("4"). Pure
// and constexpr; it allocates nothing and touches no memory but its input.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ringhttp::server {

// The 128-bit key as two little-endian 64-bit words: k0 is key bytes 0..7,
// k1 bytes 8..15, as the paper reads them.
struct SipKey {
  std::uint64_t k0 = 0;
  std::uint64_t k1 = 0;
  bool operator==(const SipKey&) const = default;
};

namespace siphash_detail {

// The paper's initial constants: "somepseudorandomlygeneratedbytes" in ASCII.
inline constexpr std::uint64_t init0 = 0x736f'6d65'7073'6575;
inline constexpr std::uint64_t init1 = 0x646f'7261'6e64'6f6d;
inline constexpr std::uint64_t init2 = 0x6c79'6765'6e65'7261;
inline constexpr std::uint64_t init3 = 0x7465'6462'7974'6573;

inline constexpr int compression_rounds = 2;   // SipRounds per message word
inline constexpr int finalization_rounds = 4;  // SipRounds after the last word
inline constexpr std::size_t word_bytes = 8;

struct State {
  std::uint64_t v0, v1, v2, v3;

  constexpr explicit State(const SipKey& key)
      : v0(key.k0 ^ init0), v1(key.k1 ^ init1), v2(key.k0 ^ init2), v3(key.k1 ^ init3) {}

  constexpr void round() {
    v0 += v1;
    v1 = std::rotl(v1, 13);
    v1 ^= v0;
    v0 = std::rotl(v0, 32);
    v2 += v3;
    v3 = std::rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = std::rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = std::rotl(v1, 17);
    v1 ^= v2;
    v2 = std::rotl(v2, 32);
  }

  constexpr void absorb(std::uint64_t word) {
    v3 ^= word;
    for (int i = 0; i < compression_rounds; ++i) round();
    v0 ^= word;
  }

  constexpr std::uint64_t finish() {
    v2 ^= 0xff;
    for (int i = 0; i < finalization_rounds; ++i) round();
    return v0 ^ v1 ^ v2 ^ v3;
  }
};

// Bytes to a little-endian word, one byte at a time so that it is constexpr
// and asks nothing of the input's alignment.
constexpr std::uint64_t load_le(std::span<const std::uint8_t> bytes) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) word |= std::uint64_t{bytes[i]} << (8 * i);
  return word;
}

}  // namespace siphash_detail

// SipHash-2-4 of any byte string.
constexpr std::uint64_t siphash24(const SipKey& key, std::span<const std::uint8_t> bytes) {
  using namespace siphash_detail;
  State state(key);
  const std::size_t whole_bytes = bytes.size() - bytes.size() % word_bytes;
  for (std::size_t at = 0; at < whole_bytes; at += word_bytes) state.absorb(load_le(bytes.subspan(at, word_bytes)));
  // The last word holds the 0..7 bytes left over and, in its top byte, the
  // message length mod 256.
  state.absorb(load_le(bytes.subspan(whole_bytes)) | (std::uint64_t{bytes.size() & 0xff} << 56));
  return state.finish();
}

// SipHash-2-4 of exactly 16 bytes given as two words: the same value as
// siphash24(key, bytes) of m0's little-endian bytes followed by m1's, with
// no byte loop. This is the rate limiter's per-request path.
constexpr std::uint64_t siphash24(const SipKey& key, std::uint64_t m0, std::uint64_t m1) {
  using namespace siphash_detail;
  constexpr std::uint64_t length_word = std::uint64_t{2 * word_bytes} << 56;  // no bytes left, length 16
  State state(key);
  state.absorb(m0);
  state.absorb(m1);
  state.absorb(length_word);
  return state.finish();
}

}  // namespace ringhttp::server
