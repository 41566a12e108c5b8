// HTTP/1.1 responses parsed incrementally from one connection's bytes, in
// whatever pieces they arrive: status line, header section, then a body
// framed by Content-Length or chunked coding, or none (1xx, 204, 304, and
// the answer to HEAD). Strict: anything else is malformed, since the server
// under test always frames its bodies.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "support/http_response.hpp"

namespace socket_test::hostile {

struct MalformedResponse : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ResponseReader {
 public:
  // A header section longer than this is malformed (the server's are ~200 bytes).
  static constexpr std::size_t head_bytes_max = 16 * 1024;

  void append(std::string_view bytes);
  // The next whole response, or nullopt until it has arrived; throws
  // MalformedResponse. `head`: it answers a HEAD request (no body). The
  // same `head` must be passed until the response is returned.
  std::optional<Response> next(bool head);
  // Bytes received and not yet part of a returned response.
  std::size_t pending_bytes() const { return buffer_.size() - consumed_; }

 private:
  enum class Framing : std::uint8_t { none, length, chunked };
  bool parse_head(bool head);
  bool take_chunked_body();
  void compact();

  std::string buffer_;
  std::size_t consumed_ = 0;  // bytes of buffer_ already returned
  // The response in progress, once its head has been parsed.
  std::optional<Response> current_;
  Framing framing_ = Framing::none;
  std::size_t body_at_ = 0;       // where its body starts in buffer_
  std::size_t length_ = 0;        // Framing::length: the body's size
  std::size_t chunk_cursor_ = 0;  // Framing::chunked: next chunk-size line in buffer_
};

}  // namespace socket_test::hostile
