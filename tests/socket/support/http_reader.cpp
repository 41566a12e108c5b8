#include "support/http_reader.hpp"

#include <charconv>
#include <stdexcept>

namespace socket_test::http_reader {
namespace {

// Largest body this reader agrees to hold in memory; bigger ones are read
// through read_head() and Connection::read_some() instead.
constexpr unsigned long long body_bytes_max = 256ull << 20;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

void parse_status_line(const std::string& line, Response& response) {
  // "HTTP/1.1 200 OK"; the reason phrase may be empty.
  const auto first_space = line.find(' ');
  if (first_space == std::string::npos || !line.starts_with("HTTP/")) {
    throw std::runtime_error("malformed status line: \"" + line + "\"");
  }
  response.version = line.substr(0, first_space);
  const std::string_view code = std::string_view(line).substr(first_space + 1, 3);
  const auto [end, error] = std::from_chars(code.data(), code.data() + code.size(), response.status);
  if (error != std::errc{} || end != code.data() + 3 || code.size() != 3) {
    throw std::runtime_error("malformed status code in \"" + line + "\"");
  }
  if (line.size() > first_space + 4) response.reason = line.substr(first_space + 5);
}

void parse_header_line(const std::string& line, Response& response) {
  const auto colon = line.find(':');
  if (colon == std::string::npos || colon == 0) throw std::runtime_error("malformed header line: \"" + line + "\"");
  response.headers.emplace_back(line.substr(0, colon), std::string(trim(std::string_view(line).substr(colon + 1))));
}

unsigned long long parse_hex(const std::string& line) {
  const std::string_view size = trim(std::string_view(line).substr(0, line.find(';')));
  unsigned long long n = 0;
  const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), n, 16);
  if (size.empty() || error != std::errc{} || end != size.data() + size.size()) {
    throw std::runtime_error("malformed chunk size line: \"" + line + "\"");
  }
  return n;
}

std::string read_chunked_body(Connection& connection) {
  std::string body;
  while (true) {
    const unsigned long long size = parse_hex(connection.read_line());
    if (size == 0) break;
    if (body.size() + size > body_bytes_max) throw std::runtime_error("chunked body too large for the reader");
    body += connection.read_exact(size);
    if (!connection.read_line().empty()) throw std::runtime_error("chunk data not followed by CRLF");
  }
  while (!connection.read_line().empty()) {
    // Trailer fields are read and dropped.
  }
  return body;
}

bool has_no_body(const Response& response, bool head) {
  return head || (response.status >= 100 && response.status < 200) || response.status == 204 || response.status == 304;
}

}  // namespace

Response read_head(Connection& connection) {
  Response response;
  parse_status_line(connection.read_line(), response);
  for (std::string line = connection.read_line(); !line.empty(); line = connection.read_line()) {
    parse_header_line(line, response);
  }
  return response;
}

Response read_response(Connection& connection, bool head) {
  Response response = read_head(connection);
  if (has_no_body(response, head)) return response;
  if (response.has_token("Transfer-Encoding", "chunked")) {
    response.body = read_chunked_body(connection);
    return response;
  }
  if (response.header("Content-Length")) {
    const auto length = response.content_length();
    if (!length) throw std::runtime_error("unparsable Content-Length: " + *response.header("Content-Length"));
    if (*length > body_bytes_max) throw std::runtime_error("Content-Length too large for the reader");
    response.body = connection.read_exact(*length);
    return response;
  }
  // Neither: the body runs until the server closes (RFC 9112 section 6.3).
  response.body = connection.read_until_close();
  return response;
}

}  // namespace socket_test::http_reader
