#include "support/stream_pattern.hpp"

#include <algorithm>

namespace socket_test {

std::optional<std::size_t> first_pattern_mismatch(std::string_view data, std::uint64_t offset) {
  unsigned expected = static_cast<unsigned>(offset % stream_period);
  for (std::size_t i = 0; i < data.size(); ++i) {
    if (static_cast<unsigned char>(data[i]) != expected) return i;
    expected = expected + 1 == stream_period ? 0 : expected + 1;
  }
  return std::nullopt;
}

testing::AssertionResult read_stream_body(Connection& connection, std::uint64_t bytes, std::uint64_t offset) {
  constexpr std::uint64_t read_bytes_max = 1 << 20;
  const std::uint64_t end = offset + bytes;
  while (offset < end) {
    const std::string chunk = connection.read_some(static_cast<std::size_t>(std::min(end - offset, read_bytes_max)));
    if (chunk.empty()) {
      return testing::AssertionFailure() << "connection closed at body byte " << offset << " of " << end;
    }
    if (const auto bad = first_pattern_mismatch(chunk, offset)) {
      const std::uint64_t at = offset + *bad;
      return testing::AssertionFailure() << "body byte " << at << " is " << int(static_cast<unsigned char>(chunk[*bad]))
                                         << ", expected " << at % stream_period;
    }
    offset += chunk.size();
  }
  return testing::AssertionSuccess();
}

}  // namespace socket_test
