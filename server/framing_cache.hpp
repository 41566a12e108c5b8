#pragma once
// "Content-Length: N\r\n\r\n" for the small lengths that nearly every
// response has, formatted once per shard and pointed at by responses, as the
// Date line is. Responses that close the connection, answer HTTP/1.0 with
// keep-alive, or carry a longer body format their framing into their own slot.

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ringhttp::server {

class FramingCache {
 public:
  // Lengths below this are cached: covers every fixed and serialized body
  // this server sends, at 32 bytes each (32 KiB per shard, touched lazily).
  static constexpr std::uint64_t cached_lengths_max = 1024;
  static constexpr std::size_t entry_bytes = 32;  // "Content-Length: 1023\r\n\r\n" is 24

  // The framing for a keep-alive response of `length` bytes, or an empty
  // view when the length is not cached.
  std::string_view keep_alive(std::uint64_t length) {
    if (length >= cached_lengths_max) return {};
    Entry& e = entries_[length];
    if (e.len == 0) build(e, length);
    return {e.bytes, e.len};
  }

 private:
  struct Entry {
    char bytes[entry_bytes - 1];
    std::uint8_t len = 0;
  };
  static_assert(sizeof(Entry) == entry_bytes);

  static void build(Entry& e, std::uint64_t length) {
    constexpr std::string_view prefix = "Content-Length: ";
    char* p = e.bytes;
    std::memcpy(p, prefix.data(), prefix.size());
    p += prefix.size();
    p = std::to_chars(p, e.bytes + sizeof e.bytes, length).ptr;
    std::memcpy(p, "\r\n\r\n", 4);
    p += 4;
    e.len = std::uint8_t(p - e.bytes);
  }

  std::array<Entry, cached_lengths_max> entries_{};
};

}  // namespace ringhttp::server
