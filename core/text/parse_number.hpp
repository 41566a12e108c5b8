#pragma once
// Whole-string number parsing with bounds, for flags, query parameters and
// the client's logs and thresholds.

#include <charconv>
#include <string_view>

namespace ringhttp::text {

// True and `out` set when all of `text` is a number in [min, max] (for a
// floating-point T, NaN is outside every range and infinity outside a
// finite one).
template <typename T>
bool parse_number(std::string_view text, T min, T max, T& out) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= min && value <= max)) return false;
  out = value;
  return true;
}

}  // namespace ringhttp::text
