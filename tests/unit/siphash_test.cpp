// SipHash-2-4 against the reference paper's test vectors: key 00 01 .. 0f,
// messages of 0 to 63 bytes 00 01 02 .., each output read as a
// little-endian 64-bit word. The two-word form the rate limiter uses must
// agree with the byte form.

#include "server/middleware/siphash.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <span>

namespace ringhttp::server {
namespace {

constexpr SipKey reference_key{.k0 = 0x0706'0504'0302'0100, .k1 = 0x0f0e'0d0c'0b0a'0908};

constexpr std::size_t vector_count = 64;

constexpr std::array<std::uint8_t, vector_count> reference_message() {
  std::array<std::uint8_t, vector_count> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::uint8_t(i);
  return bytes;
}

constexpr std::array<std::uint64_t, vector_count> reference_outputs = {
    0x726fdb47dd0e0e31, 0x74f839c593dc67fd, 0x0d6c8009d9a94f5a, 0x85676696d7fb7e2d, 0xcf2794e0277187b7,
    0x18765564cd99a68d, 0xcbc9466e58fee3ce, 0xab0200f58b01d137, 0x93f5f5799a932462, 0x9e0082df0ba9e4b0,
    0x7a5dbbc594ddb9f3, 0xf4b32f46226bada7, 0x751e8fbc860ee5fb, 0x14ea5627c0843d90, 0xf723ca908e7af2ee,
    0xa129ca6149be45e5, 0x3f2acc7f57c29bdb, 0x699ae9f52cbe4794, 0x4bc1b3f0968dd39c, 0xbb6dc91da77961bd,
    0xbed65cf21aa2ee98, 0xd0f2cbb02e3b67c7, 0x93536795e3a33e88, 0xa80c038ccd5ccec8, 0xb8ad50c6f649af94,
    0xbce192de8a85b8ea, 0x17d835b85bbb15f3, 0x2f2e6163076bcfad, 0xde4daaaca71dc9a5, 0xa6a2506687956571,
    0xad87a3535c49ef28, 0x32d892fad841c342, 0x7127512f72f27cce, 0xa7f32346f95978e3, 0x12e0b01abb051238,
    0x15e034d40fa197ae, 0x314dffbe0815a3b4, 0x027990f029623981, 0xcadcd4e59ef40c4d, 0x9abfd8766a33735c,
    0x0e3ea96b5304a7d0, 0xad0c42d6fc585992, 0x187306c89bc215a9, 0xd4a60abcf3792b95, 0xf935451de4f21df2,
    0xa9538f0419755787, 0xdb9acddff56ca510, 0xd06c98cd5c0975eb, 0xe612a3cb9ecba951, 0xc766e62cfcadaf96,
    0xee64435a9752fe72, 0xa192d576b245165a, 0x0a8787bf8ecb74b2, 0x81b3e73d20b49b6f, 0x7fa8220ba3b2ecea,
    0x245731c13ca42499, 0xb78dbfaf3a8d83bd, 0xea1ad565322a1a0b, 0x60e61c23a3795013, 0x6606d7e446282b93,
    0x6ca4ecb15c5f91e1, 0x9f626da15c9625f3, 0xe51b38608ef25f57, 0x958a324ceb064572,
};

constexpr std::uint64_t reference_hash(std::size_t length) {
  constexpr auto message = reference_message();
  return siphash24(reference_key, std::span<const std::uint8_t>(message.data(), length));
}

// Constexpr, so a wrong rotation fails the build, not only the run.
static_assert(reference_hash(0) == 0x726fdb47dd0e0e31, "the empty message");
static_assert(reference_hash(15) == 0xa129ca6149be45e5, "00..0e: one whole word and 7 bytes left over");

TEST(SipHash, matches_the_reference_vectors_for_every_length_to_63) {
  for (std::size_t length = 0; length < vector_count; ++length) {
    EXPECT_EQ(reference_hash(length), reference_outputs[length]) << length << " bytes";
  }
}

TEST(SipHash, the_two_word_form_equals_the_sixteen_byte_message) {
  // Bytes 00..0f as two little-endian words.
  EXPECT_EQ(siphash24(reference_key, 0x0706'0504'0302'0100, 0x0f0e'0d0c'0b0a'0908), reference_outputs[16]);
  const std::array<std::uint8_t, 16> bytes = {0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0x80};
  EXPECT_EQ(siphash24(reference_key, 0x0605'0403'0201'00ff, 0x800d'0c0b'0a09'0807), siphash24(reference_key, bytes));
}

TEST(SipHash, a_different_key_gives_a_different_hash) {
  constexpr SipKey other{.k0 = reference_key.k0 ^ 1, .k1 = reference_key.k1};
  EXPECT_NE(siphash24(other, 0, 0), siphash24(reference_key, 0, 0));
  EXPECT_NE(siphash24(SipKey{.k0 = 0, .k1 = 1}, 0, 0), siphash24(SipKey{.k0 = 1, .k1 = 0}, 0, 0));
}

}  // namespace
}  // namespace ringhttp::server
