#pragma once
// The bytes of /stream: byte i is i mod 251. The pattern is periodic, so one
// static block whose length is a multiple of the period serves any chunk at
// any offset: a chunk starting at offset o points at block + o % 251. Streams
// of any length are sent without holding more than this block in memory.

#include <cstddef>
#include <cstdint>

namespace ringhttp::server {

inline constexpr std::size_t stream_period = 251;
inline constexpr std::size_t stream_block_bytes = stream_period * 261;  // 65,511: just under 64 KiB
static_assert(stream_block_bytes % stream_period == 0);

// stream_block_bytes + stream_period bytes, so a block-long read may start at
// any phase.
const char* stream_pattern();

inline const char* stream_chunk_start(std::uint64_t offset) { return stream_pattern() + offset % stream_period; }

}  // namespace ringhttp::server
