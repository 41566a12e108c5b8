#include "server/stream_pattern.hpp"

#include <array>

namespace ringhttp::server {

const char* stream_pattern() {
  static const auto block = [] {
    std::array<char, stream_block_bytes + stream_period> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % stream_period);
    return bytes;
  }();
  return block.data();
}

}  // namespace ringhttp::server
