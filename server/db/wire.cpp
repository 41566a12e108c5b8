#include "server/db/wire.hpp"

#include <cassert>
#include <cstring>

namespace ringhttp::server::db::wire {
namespace {

char* put32(char* p, std::uint32_t v) {
  p[0] = char(v >> 24);
  p[1] = char(v >> 16);
  p[2] = char(v >> 8);
  p[3] = char(v);
  return p + 4;
}

char* put16(char* p, std::uint16_t v) {
  p[0] = char(v >> 8);
  p[1] = char(v);
  return p + 2;
}

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

std::uint32_t get32(const char* p) {
  return std::uint32_t(std::uint8_t(p[0])) << 24 | std::uint32_t(std::uint8_t(p[1])) << 16 |
         std::uint32_t(std::uint8_t(p[2])) << 8 | std::uint32_t(std::uint8_t(p[3]));
}

std::uint16_t get16(const char* p) { return std::uint16_t(std::uint8_t(p[0]) << 8 | std::uint8_t(p[1])); }

}  // namespace

std::size_t encode_query(char* out, std::string_view statement, std::string_view param) {
  assert(statement.size() < 32 && statement.find('\0') == std::string_view::npos);
  assert(param.size() <= param_bytes_max);
  char* p = out;
  // Bind: portal "", statement, 0 parameter format codes (all text), 1
  // parameter, 0 result format codes (all text).
  const std::size_t bind_len = 4 + 1 + statement.size() + 1 + 2 + 2 + 4 + param.size() + 2;
  *p++ = 'B';
  p = put32(p, std::uint32_t(bind_len));
  *p++ = '\0';
  p = put(p, statement);
  *p++ = '\0';
  p = put16(p, 0);
  p = put16(p, 1);
  p = put32(p, std::uint32_t(param.size()));
  p = put(p, param);
  p = put16(p, 0);
  // Execute: portal "", no row limit.
  *p++ = 'E';
  p = put32(p, 4 + 1 + 4);
  *p++ = '\0';
  p = put32(p, 0);
  // Sync: the end of this query's implicit transaction.
  *p++ = 'S';
  p = put32(p, 4);
  const std::size_t n = std::size_t(p - out);
  assert(n <= query_bytes_max);
  return n;
}

Parse next_message(std::string_view in, std::size_t body_bytes_max, Message& out, std::size_t& consumed) {
  if (in.size() < 5) return Parse::incomplete;
  const std::uint32_t len = get32(in.data() + 1);
  if (len < 4 || len - 4 > body_bytes_max) return Parse::invalid;
  if (in.size() < 1 + std::size_t(len)) return Parse::incomplete;
  out.type = in[0];
  out.body = in.substr(5, len - 4);
  consumed = 1 + std::size_t(len);
  return Parse::message;
}

bool data_row_two_columns(std::string_view body, std::string_view& first, std::string_view& second) {
  if (body.size() < 2 || get16(body.data()) < 2) return false;
  std::size_t at = 2;
  std::string_view* columns[] = {&first, &second};
  for (std::string_view* column : columns) {
    if (body.size() - at < 4) return false;
    const std::uint32_t len = get32(body.data() + at);
    at += 4;
    if (len == 0xffffffffu || len > body.size() - at) return false;  // NULL, or past the message
    *column = body.substr(at, len);
    at += len;
  }
  return true;
}

std::string_view error_sqlstate(std::string_view body) {
  // Fields: a code byte and a NUL-terminated string each, then a NUL.
  std::size_t at = 0;
  while (at < body.size() && body[at] != '\0') {
    const char code = body[at++];
    const std::size_t end = body.find('\0', at);
    if (end == std::string_view::npos) return {};
    if (code == 'C') return body.substr(at, end - at);
    at = end + 1;
  }
  return {};
}

}  // namespace ringhttp::server::db::wire
