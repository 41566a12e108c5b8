#pragma once
// Why a request was refused: one table of each kind with the status it is
// answered with and the label it is counted under
// (ringhttp_parse_errors_total{kind=...}).

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringhttp::http {

enum class ParseError : std::uint8_t {
  none = 0,
  malformed,                    // not HTTP/1.x (a non-token byte in a field name or method,
                                // whitespace before a header's colon, a fragment included)
  ambiguous_length,             // Content-Length with Transfer-Encoding, two Content-Lengths, or
                                // a Transfer-Encoding whose last coding is not chunked or that
                                // has chunked twice (RFC 9112 section 6.3)
  target_too_long,              // request line over Limits::request_line_bytes_max
  header_too_large,             // header section over the limit
  body_too_large,               // body over the limit
  unsupported_transfer_coding,  // a transfer coding before chunked
  bad_host,                     // HTTP/1.1 without Host, two Hosts, or a Host that is not a host[:port]
  unsupported_version,          // an HTTP major version other than 1
  unsupported_method,           // CONNECT (this is no proxy), or a method token llhttp does not know
  bad_framing,                  // a CR not followed by LF, a bare LF, chunk data not ended by CRLF,
                                // a folded line
  framing_too_large,            // a chunk-size line (extensions included) or trailers over the header limit
  count_,
};
inline constexpr std::size_t parse_error_kinds = std::size_t(ParseError::count_);

struct ParseErrorKind {
  ParseError error;
  std::uint16_t status;
  std::string_view label;  // null-terminated: a literal
};

inline constexpr std::array<ParseErrorKind, parse_error_kinds> parse_error_table = {{
    {ParseError::none, 200, "none"},
    {ParseError::malformed, 400, "malformed"},
    {ParseError::ambiguous_length, 400, "ambiguous_length"},
    {ParseError::target_too_long, 414, "target_too_long"},
    {ParseError::header_too_large, 431, "header_too_large"},
    {ParseError::body_too_large, 413, "body_too_large"},
    {ParseError::unsupported_transfer_coding, 501, "unsupported_transfer_coding"},
    {ParseError::bad_host, 400, "bad_host"},
    {ParseError::unsupported_version, 505, "unsupported_version"},
    {ParseError::unsupported_method, 501, "unsupported_method"},
    {ParseError::bad_framing, 400, "bad_framing"},
    {ParseError::framing_too_large, 400, "framing_too_large"},
}};
static_assert([] {
  for (std::size_t i = 0; i < parse_error_table.size(); ++i) {
    if (std::size_t(parse_error_table[i].error) != i) return false;  // in the enum's order, each once
  }
  return true;
}());

// The status a refused request is answered with.
constexpr int status_for(ParseError error) {
  assert(error < ParseError::count_);
  return parse_error_table[std::size_t(error)].status;
}
// Its label in ringhttp_parse_errors_total.
constexpr const char* metric_name(ParseError error) {
  assert(error < ParseError::count_);
  return parse_error_table[std::size_t(error)].label.data();
}

}  // namespace ringhttp::http
