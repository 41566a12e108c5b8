#pragma once
// The one table of the HTTP statuses this project sends: each code with its
// reason phrase (RFC 9110 section 15). The server's status lines, its
// error bodies and its per-status counters are all made from it, at
// compile time.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringhttp::http {

struct StatusText {
  std::uint16_t code;
  std::string_view reason;
};

inline constexpr std::array<StatusText, 19> statuses = {{
    {100, "Continue"},
    {200, "OK"},
    {201, "Created"},
    {204, "No Content"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {408, "Request Timeout"},
    {413, "Content Too Large"},
    {414, "URI Too Long"},
    {415, "Unsupported Media Type"},
    {422, "Unprocessable Content"},
    {429, "Too Many Requests"},
    {431, "Request Header Fields Too Large"},
    {500, "Internal Server Error"},
    {501, "Not Implemented"},
    {503, "Service Unavailable"},
    {505, "HTTP Version Not Supported"},
}};

// A status code is three digits (RFC 9110 section 15).
inline constexpr std::uint16_t status_code_end = 1000;

// Where `code` sits in `statuses`, or statuses.size() for a code not in it.
// A lookup table, since it runs per response.
namespace status_detail {
inline constexpr auto index_by_code = [] {
  std::array<std::uint8_t, status_code_end> out{};
  for (auto& i : out) i = std::uint8_t(statuses.size());
  for (std::size_t i = 0; i < statuses.size(); ++i) out[statuses[i].code] = std::uint8_t(i);
  return out;
}();
static_assert(statuses.size() < 255);
}  // namespace status_detail

constexpr std::size_t status_index(std::uint16_t code) {
  return code < status_code_end ? status_detail::index_by_code[code] : statuses.size();
}

// The reason phrase of `code`, or "" for a code not in the table.
constexpr std::string_view reason_phrase(std::uint16_t code) {
  const std::size_t i = status_index(code);
  return i < statuses.size() ? statuses[i].reason : std::string_view{};
}

static_assert([] {
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].code < 100 || statuses[i].code >= status_code_end) return false;
    if (i > 0 && statuses[i - 1].code >= statuses[i].code) return false;  // sorted, no code twice
    if (status_index(statuses[i].code) != i) return false;
  }
  return status_index(299) == statuses.size() && reason_phrase(404) == "Not Found";
}());

// Text of a length known at compile time, usable as a template argument:
// how a status line and its fixed headers are put together once, into
// static bytes a response's first iovec points at.
template <std::size_t N>
struct FixedText {
  char data[N + 1]{};
  constexpr FixedText() = default;
  constexpr FixedText(const char (&text)[N + 1]) {  // NOLINT: a literal converts
    for (std::size_t i = 0; i <= N; ++i) data[i] = text[i];
  }
  static constexpr std::size_t size() { return N; }
  constexpr std::string_view view() const { return {data, N}; }
};
template <std::size_t N>
FixedText(const char (&)[N]) -> FixedText<N - 1>;

namespace status_detail {
constexpr std::size_t digits = 3;

template <std::uint16_t Code, FixedText Headers>
constexpr auto make_head() {
  constexpr std::string_view reason = reason_phrase(Code);
  static_assert(!reason.empty(), "a status sent must be in http::statuses");
  constexpr std::string_view version = "HTTP/1.1 ";
  FixedText<version.size() + digits + 1 + reason.size() + 2 + Headers.size()> out;
  std::size_t at = 0;
  for (const char c : version) out.data[at++] = c;
  out.data[at++] = char('0' + Code / 100);
  out.data[at++] = char('0' + Code / 10 % 10);
  out.data[at++] = char('0' + Code % 10);
  out.data[at++] = ' ';
  for (const char c : reason) out.data[at++] = c;
  out.data[at++] = '\r';
  out.data[at++] = '\n';
  for (const char c : Headers.view()) out.data[at++] = c;
  return out;
}

template <std::uint16_t Code>
constexpr auto make_reason_line() {
  constexpr std::string_view reason = reason_phrase(Code);
  static_assert(!reason.empty(), "a status sent must be in http::statuses");
  FixedText<reason.size() + 1> out;
  std::size_t at = 0;
  for (const char c : reason) out.data[at++] = c;
  out.data[at++] = '\n';
  return out;
}

template <std::uint16_t Code, FixedText Headers>
inline constexpr auto head_bytes = make_head<Code, Headers>();
template <std::uint16_t Code>
inline constexpr auto reason_line_bytes = make_reason_line<Code>();
}  // namespace status_detail

// "HTTP/1.1 <code> <reason>\r\n" and then `Headers` (each ending in CRLF),
// as static bytes.
template <std::uint16_t Code, FixedText Headers = FixedText<0>{}>
inline constexpr std::string_view status_head = status_detail::head_bytes<Code, Headers>.view();

// "<reason>\n": the plain-text body of an error status.
template <std::uint16_t Code>
inline constexpr std::string_view reason_line = status_detail::reason_line_bytes<Code>.view();

static_assert(status_head<404, "X: y\r\n"> == "HTTP/1.1 404 Not Found\r\nX: y\r\n");
static_assert(reason_line<431> == "Request Header Fields Too Large\n");

}  // namespace ringhttp::http
