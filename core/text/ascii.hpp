#pragma once
// ASCII case folding for HTTP's case-insensitive tokens (header names,
// media types, auth schemes); bytes outside A-Z pass through. And what a
// token is made of.

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

// RFC 9110 section 5.6.2: tchar, the bytes of a token (a method, a field
// name, a transfer coding).
constexpr bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
      return true;
    default: return false;
  }
}

// RFC 9110 section 5.6.3: the bytes of optional whitespace (OWS), which
// may surround a field value and may not start a field line.
constexpr bool is_space_or_tab(char c) { return c == ' ' || c == '\t'; }

// RFC 3986 section 3.2.2: the bytes of a reg-name (a host name) other
// than percent-encoding: unreserved (letters, digits, - . _ ~) and
// sub-delims. The server's Host check adds '%'; the client, whose names go
// to a resolver that takes no percent-encoding, does not.
constexpr bool is_reg_name_byte(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '-': case '.': case '_': case '~': case '!': case '$': case '&': case '\'':
    case '(': case ')': case '*': case '+': case ',': case ';': case '=':
      return true;
    default: return false;
  }
}

constexpr bool is_token(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (!is_tchar(c)) return false;
  }
  return true;
}

}  // namespace ringhttp::text
