// A parsed HTTP/1.1 response, as the client side of a test sees it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace socket_test {

struct Response {
  std::string version;  // "HTTP/1.1"
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;  // in arrival order
  std::string body;

  // First header with this name, compared case-insensitively.
  std::optional<std::string> header(std::string_view name) const;
  std::size_t header_count(std::string_view name) const;
  // True when the comma-separated header value lists `token` (case-insensitive),
  // e.g. has_token("Connection", "close").
  bool has_token(std::string_view name, std::string_view token) const;
  // Content-Length as a number; nullopt when absent or not a number.
  std::optional<unsigned long long> content_length() const;
};

bool equals_ignoring_case(std::string_view a, std::string_view b);

}  // namespace socket_test
