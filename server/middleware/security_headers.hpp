#pragma once
// The security headers a production stack sets (helmet's defaults, less
// what only matters to HTML pages' legacy browsers), as one static block a
// response points at. The server sends no X-Powered-By, and its Server
// header names no version.

#include <string_view>

namespace ringhttp::server {

inline constexpr std::string_view security_headers =
    "Content-Security-Policy: default-src 'self';base-uri 'self';frame-ancestors 'self';"
    "object-src 'none';script-src 'self';upgrade-insecure-requests\r\n"
    "Strict-Transport-Security: max-age=31536000; includeSubDomains\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: SAMEORIGIN\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Cross-Origin-Opener-Policy: same-origin\r\n"
    "Cross-Origin-Resource-Policy: same-origin\r\n";

}  // namespace ringhttp::server
