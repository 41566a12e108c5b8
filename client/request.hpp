#pragma once
// The request bytes, serialized once before any connection opens and sent
// from the same memory every time: `pipeline` copies back to back, so a
// pipelined batch is one send of one contiguous range.

#include <cstddef>
#include <string>
#include <string_view>

#include "client/options.hpp"

namespace ringhttp::client {

class RequestBytes {
 public:
  explicit RequestBytes(const Options& options);

  std::string_view one() const { return std::string_view(bytes_).substr(0, one_bytes_); }
  std::string_view batch() const { return bytes_; }
  bool head_request() const { return head_request_; }

 private:
  std::string bytes_;
  std::size_t one_bytes_ = 0;
  bool head_request_ = false;
};

}  // namespace ringhttp::client
