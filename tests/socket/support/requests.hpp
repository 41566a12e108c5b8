// Request bytes as a test sends them.
#pragma once

#include <string>
#include <string_view>

namespace socket_test {

// "METHOD path HTTP/1.1\r\nHost: localhost\r\n" + extra_headers + "\r\n" + body.
// `extra_headers` is zero or more complete "Name: value\r\n" lines.
inline std::string request(std::string_view method, std::string_view path, std::string_view extra_headers = "",
                           std::string_view body = "") {
  std::string out;
  out.reserve(64 + path.size() + extra_headers.size() + body.size());
  out.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: localhost\r\n");
  out.append(extra_headers).append("\r\n").append(body);
  return out;
}

inline std::string get(std::string_view path, std::string_view extra_headers = "") {
  return request("GET", path, extra_headers);
}

inline std::string head(std::string_view path, std::string_view extra_headers = "") {
  return request("HEAD", path, extra_headers);
}

inline std::string stream_path(unsigned long long bytes) { return "/stream?bytes=" + std::to_string(bytes); }

inline constexpr std::string_view plaintext_body = "Hello, World!";
inline constexpr std::string_view json_body = R"({"message":"Hello, World!"})";

}  // namespace socket_test
