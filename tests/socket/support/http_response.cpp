#include "support/http_response.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace socket_test {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

std::optional<std::string> Response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (equals_ignoring_case(key, name)) return value;
  }
  return std::nullopt;
}

std::size_t Response::header_count(std::string_view name) const {
  return static_cast<std::size_t>(
      std::ranges::count_if(headers, [&](const auto& h) { return equals_ignoring_case(h.first, name); }));
}

bool Response::has_token(std::string_view name, std::string_view token) const {
  for (const auto& [key, value] : headers) {
    if (!equals_ignoring_case(key, name)) continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      if (equals_ignoring_case(trim(rest.substr(0, comma)), token)) return true;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return false;
}

std::optional<unsigned long long> Response::content_length() const {
  const auto value = header("Content-Length");
  if (!value) return std::nullopt;
  unsigned long long n = 0;
  const auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), n);
  if (error != std::errc{} || end != value->data() + value->size()) return std::nullopt;
  return n;
}

}  // namespace socket_test
