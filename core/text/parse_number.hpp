#pragma once
// Whole-string integer parsing with bounds, for flags and query parameters.

#include <charconv>
#include <string_view>

namespace ringhttp::text {

// True and `out` set when all of `text` is an integer in [min, max].
template <typename T>
bool parse_number(std::string_view text, T min, T max, T& out) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) return false;
  out = value;
  return true;
}

}  // namespace ringhttp::text
