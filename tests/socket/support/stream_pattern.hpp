// The /stream body: byte i is i mod 251. A prime period makes a dropped,
// repeated or reordered chunk of any power-of-two size show up.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "support/connection.hpp"

namespace socket_test {

inline constexpr unsigned stream_period = 251;

inline char stream_byte(std::uint64_t offset) { return static_cast<char>(offset % stream_period); }

// Index into `data` of the first byte that breaks the pattern, where data[0]
// is body byte `offset`.
std::optional<std::size_t> first_pattern_mismatch(std::string_view data, std::uint64_t offset);

// Reads the next `bytes` body bytes, body byte `offset` first, checking each
// against the pattern without holding them all in memory.
testing::AssertionResult read_stream_body(Connection& connection, std::uint64_t bytes, std::uint64_t offset = 0);

}  // namespace socket_test
