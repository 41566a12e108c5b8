#pragma once
// ASCII case folding for HTTP's case-insensitive tokens (header names,
// media types, auth schemes); bytes outside A-Z pass through.

#include <cstddef>
#include <string_view>

namespace ringhttp::text {

constexpr char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

constexpr bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

}  // namespace ringhttp::text
