#include "core/http/json_writer.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ringhttp::http {

void JsonWriter::raw(std::string_view bytes) {
  if (capacity_ - len_ < bytes.size()) {
    ok_ = false;
    return;
  }
  std::memcpy(out_ + len_, bytes.data(), bytes.size());
  len_ += bytes.size();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (!first_) put(',');
  first_ = false;
  string(name);
  put(':');
  return *this;
}

namespace {
// The bytes a JSON string must escape (RFC 8259 section 7).
constexpr bool needs_escape(unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; }
}  // namespace

void JsonWriter::escape(unsigned char c) {
  static constexpr char hex[] = "0123456789abcdef";
  switch (c) {
    case '"': raw("\\\""); break;
    case '\\': raw("\\\\"); break;
    case '\n': raw("\\n"); break;
    case '\r': raw("\\r"); break;
    case '\t': raw("\\t"); break;
    case '\b': raw("\\b"); break;
    case '\f': raw("\\f"); break;
    default: {
      const char esc[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      raw(std::string_view(esc, 6));
    }
  }
}

JsonWriter& JsonWriter::string(std::string_view value) {
  put('"');
  // Runs of bytes that need no escape are copied whole; UTF-8 passes
  // through (the caller validated it).
  std::size_t run = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (!needs_escape(c)) continue;
    raw(value.substr(run, i - run));
    escape(c);
    run = i + 1;
  }
  raw(value.substr(run));
  put('"');
  return *this;
}

JsonWriter& JsonWriter::integer_digits(std::string_view digits) {
  const std::string_view magnitude = digits.starts_with('-') ? digits.substr(1) : digits;
  bool ok = !magnitude.empty() && magnitude.size() <= 20;
  for (const char c : magnitude) ok = ok && c >= '0' && c <= '9';
  if (!ok) {
    ok_ = false;
    return *this;
  }
  raw(digits);
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  if (!std::isfinite(value)) {
    ok_ = false;
    return *this;
  }
  char digits[32];  // the longest shortest form is 24 characters ("-2.2250738585072014e-308")
  // A whole number below 2^53 is written as an integer ("-498000000", not
  // the shorter "-4.98e+08" that to_chars would pick); other values in the
  // shortest round-trip form; past 2^53 always in exponent form, since the
  // plain form of a large whole number ("122000022711690490000") is an
  // integer literal too big for 64-bit integer readers (simdjson among them).
  constexpr double exact_integers_max = 9007199254740992.0;  // 2^53
  const bool exact = std::fabs(value) < exact_integers_max;
  const bool whole = exact && std::trunc(value) == value && !(value == 0 && std::signbit(value));
  const auto [end, ec] =
      whole ? std::to_chars(digits, digits + sizeof digits, static_cast<std::int64_t>(value))
      : exact ? std::to_chars(digits, digits + sizeof digits, value)
              : std::to_chars(digits, digits + sizeof digits, value, std::chars_format::scientific);
  if (ec != std::errc()) {
    ok_ = false;
    return *this;
  }
  raw(std::string_view(digits, std::size_t(end - digits)));
  return *this;
}

}  // namespace ringhttp::http
