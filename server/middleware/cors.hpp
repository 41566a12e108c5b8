#pragma once
// CORS with an allow-list of exact origins. Every header block a response
// may carry is built once at start-up, so answering points at static bytes:
// the Origin a browser sent is echoed from the allow-list's own copy, never
// from the request. A response that depends on Origin says so (Vary: Origin)
// whether or not the origin was allowed, so no cache serves one origin's
// answer to another.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/http/request_parser.hpp"

namespace ringhttp::server {

struct CorsPolicy {
  std::vector<std::string> origins;  // exact serialized origins: "https://app.example:8443"
  std::string allow_methods = "GET, HEAD, POST, OPTIONS";
  std::string allow_headers = "Authorization, Content-Type";
  std::uint32_t max_age_s = 600;  // how long a browser may cache a preflight's answer
};

class Cors {
 public:
  explicit Cors(const CorsPolicy& policy);

  // For an ordinary response: Access-Control-Allow-Origin with Vary when
  // `origin` is allowed, Vary alone otherwise.
  std::string_view response_block(const http::HeaderValue& origin) const;
  // For a preflight's 204: the same plus Allow-Methods, Allow-Headers and
  // Max-Age when allowed; Vary alone otherwise (the browser then refuses).
  std::string_view preflight_block(const http::HeaderValue& origin) const;
  // A preflight is an OPTIONS with Origin and Access-Control-Request-Method.
  static bool is_preflight(const http::RequestHead& head);

 private:
  int find(const http::HeaderValue& origin) const;  // index in the allow-list, or -1

  std::vector<std::string> origins_;
  std::vector<std::string> response_blocks_;
  std::vector<std::string> preflight_blocks_;
  std::string vary_only_ = "Vary: Origin\r\n";
};

}  // namespace ringhttp::server
