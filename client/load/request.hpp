#pragma once
// The request bytes, serialized once before any connection opens and sent
// from the same memory every time. Without a placeholder that is one
// request, `pipeline` copies back to back; with one (client/load/placeholder.hpp)
// it is every request of the placeholder's range in its order, followed by
// the first `pipeline - 1` again, so that a batch starting at any request is
// one contiguous range: one send.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/load/h2_request.hpp"
#include "client/load/placeholder.hpp"
#include "client/options.hpp"

namespace ringhttp::client {

// What every request of a run serializes to, with its expected body, must
// fit this: it is all held in memory from start to end.
inline constexpr std::size_t serialized_bytes_max = 256ull << 20;

class RequestBytes {
 public:
  explicit RequestBytes(const Options& options);

  // How many different requests a run cycles through (1 without a placeholder).
  std::size_t distinct() const { return distinct_; }
  // The bytes of `count` requests (count <= the pipeline) from request
  // `first` (< distinct()) on: the requests first, first + 1, ... modulo distinct().
  std::string_view batch(std::size_t first, std::size_t count) const {
    return std::string_view(bytes_).substr(starts_[first], starts_[first + count] - starts_[first]);
  }
  // Request i (< distinct()) with Connection: close, for the last request
  // of a connection under --requests-per-connection (empty otherwise).
  std::string_view closing(std::size_t i) const {
    if (closing_starts_.empty()) return {};
    return std::string_view(closing_).substr(closing_starts_[i], closing_starts_[i + 1] - closing_starts_[i]);
  }
  // What request i's response body must be (when bodies are checked).
  std::string_view expected_body(std::size_t i) const {
    return std::string_view(expected_).substr(expected_starts_[i], expected_starts_[i + 1] - expected_starts_[i]);
  }
  bool head_request() const { return head_request_; }
  // HTTP/2: the same requests as header fields and bodies; null for HTTP/1.1.
  const H2Requests* h2() const { return h2_.get(); }

 private:
  std::string bytes_;
  std::vector<std::uint32_t> starts_;  // where each request starts in bytes_, and the end
  std::string closing_;
  std::vector<std::uint32_t> closing_starts_;
  std::string expected_;
  std::vector<std::uint32_t> expected_starts_;
  std::size_t distinct_ = 1;
  bool head_request_ = false;
  std::unique_ptr<H2Requests> h2_;
};

// The serialized size of a run's requests and expected bodies, or an error
// when they would pass serialized_bytes_max (checked with the options).
std::string check_serialized_size(const Options& options);

}  // namespace ringhttp::client
