#include "server/send_batch.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "server/stream_pattern.hpp"

namespace ringhttp::server {

SendBatch build_send_batch(const OutputQueue<Connection::responses_max>& out, std::size_t first,
                           std::string_view date_line, std::span<iovec> iov, std::span<char> staging) {
  assert(first <= out.size());
  SendBatch b;
  std::size_t staged = 0;
  auto add = [&](const char* data, std::size_t len) {
    if (len == 0) return;
    b.bytes += len;
    if (len <= coalesce_bytes_max && len <= staging.size() - staged) {
      char* to = staging.data() + staged;
      std::memcpy(to, data, len);
      staged += len;
      // Joined to the iovec before when that one ends where this begins.
      if (b.iovecs > 0 && static_cast<char*>(iov[b.iovecs - 1].iov_base) + iov[b.iovecs - 1].iov_len == to) {
        iov[b.iovecs - 1].iov_len += len;
        return;
      }
      data = to;
    }
    assert(b.iovecs < iov.size());
    iov[b.iovecs++] = iovec{const_cast<char*>(data), len};
  };
  for (std::size_t i = first; i < out.size(); ++i) {
    const PendingResponse& r = out.at(i);
    if (r.source == BodySource::deferred) break;  // its bytes, and everything after, wait for its result
    if (!r.head_sent) {
      add(r.head.data(), r.head.size());
      if (!r.interim) {
        add(date_line.data(), date_line.size());
        for (const std::string_view block : r.header_blocks) add(block.data(), block.size());
        add(r.header_text.data(), r.header_text.size());
        add(r.tail.data(), r.tail.size());
      }
    }
    if (r.source != BodySource::stream) {
      add(r.body.data(), r.body.size());
      ++b.retires;
      continue;
    }
    // A stream: the next chunk, as iovecs over the shared pattern block.
    constexpr std::uint64_t chunk_max = Connection::stream_iovecs_max * stream_block_bytes;
    const std::uint64_t chunk = std::min<std::uint64_t>(r.stream_remaining, chunk_max);
    for (std::uint64_t done = 0; done < chunk;) {
      const std::uint64_t piece = std::min<std::uint64_t>(chunk - done, stream_block_bytes);
      add(stream_chunk_start(r.stream_offset + done), piece);
      done += piece;
    }
    if (chunk == r.stream_remaining) {
      ++b.retires;
      continue;
    }
    b.stream_bytes = chunk;  // unfinished: nothing after it may be sent yet
    break;
  }
  return b;
}

}  // namespace ringhttp::server
