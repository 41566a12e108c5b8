#pragma once
// Status lines with the fixed headers that go with them, as static bytes.
// A response's first iovec points here.

#include <string_view>

#include "core/http/status.hpp"

namespace ringhttp::server::heads {

// The fixed headers that follow a status line.
#define RINGHTTP_SERVER "Server: ringhttp\r\n"
#define RINGHTTP_TEXT RINGHTTP_SERVER "Content-Type: text/plain\r\n"
#define RINGHTTP_JSON RINGHTTP_SERVER "Content-Type: application/json\r\n"

inline constexpr std::string_view ok_text = http::status_head<200, RINGHTTP_TEXT>;
inline constexpr std::string_view ok_json = http::status_head<200, RINGHTTP_JSON>;
inline constexpr std::string_view ok_octets =
    http::status_head<200, RINGHTTP_SERVER "Content-Type: application/octet-stream\r\n">;
inline constexpr std::string_view ok_metrics =
    http::status_head<200, RINGHTTP_SERVER "Content-Type: text/plain; version=0.0.4\r\n">;
inline constexpr std::string_view continue_100 = http::status_head<100, "\r\n">;
inline constexpr std::string_view bad_request = http::status_head<400, RINGHTTP_TEXT>;
inline constexpr std::string_view not_found = http::status_head<404, RINGHTTP_TEXT>;
inline constexpr std::string_view method_not_allowed_get_head =
    http::status_head<405, RINGHTTP_SERVER "Allow: GET, HEAD\r\nContent-Type: text/plain\r\n">;
inline constexpr std::string_view request_timeout = http::status_head<408, RINGHTTP_TEXT>;
inline constexpr std::string_view payload_too_large = http::status_head<413, RINGHTTP_TEXT>;
inline constexpr std::string_view uri_too_long = http::status_head<414, RINGHTTP_TEXT>;
inline constexpr std::string_view header_too_large = http::status_head<431, RINGHTTP_TEXT>;
inline constexpr std::string_view internal_error = http::status_head<500, RINGHTTP_TEXT>;
inline constexpr std::string_view not_implemented = http::status_head<501, RINGHTTP_TEXT>;
inline constexpr std::string_view version_not_supported = http::status_head<505, RINGHTTP_TEXT>;

inline constexpr std::string_view method_not_allowed =  // an Allow block follows, from the route table
    http::status_head<405, RINGHTTP_TEXT>;
inline constexpr std::string_view no_content = http::status_head<204, RINGHTTP_SERVER>;

// The application's refusals, with JSON bodies.
inline constexpr std::string_view bad_request_json = http::status_head<400, RINGHTTP_JSON>;
// RFC 6750 section 3.1: a request with no credentials gets the challenge
// without an error code; one whose token failed gets error="invalid_token"
// and nothing that says which check failed.
inline constexpr std::string_view unauthorized_no_token =
    http::status_head<401, RINGHTTP_SERVER "WWW-Authenticate: Bearer\r\nContent-Type: application/json\r\n">;
inline constexpr std::string_view unauthorized_invalid_token =
    http::status_head<401, RINGHTTP_SERVER "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n"
                           "Content-Type: application/json\r\n">;
inline constexpr std::string_view payload_too_large_json = http::status_head<413, RINGHTTP_JSON>;
inline constexpr std::string_view unsupported_media_type_json = http::status_head<415, RINGHTTP_JSON>;
inline constexpr std::string_view unprocessable_json = http::status_head<422, RINGHTTP_JSON>;
inline constexpr std::string_view too_many_requests_json = http::status_head<429, RINGHTTP_JSON>;
inline constexpr std::string_view created_json = http::status_head<201, RINGHTTP_JSON>;
inline constexpr std::string_view not_found_json = http::status_head<404, RINGHTTP_JSON>;
inline constexpr std::string_view internal_error_json = http::status_head<500, RINGHTTP_JSON>;
inline constexpr std::string_view service_unavailable_json = http::status_head<503, RINGHTTP_JSON>;

#undef RINGHTTP_JSON
#undef RINGHTTP_TEXT
#undef RINGHTTP_SERVER

// The head and a short plain-text body for an error status.
struct ErrorResponse {
  std::string_view head;
  std::string_view body;
};

constexpr ErrorResponse error_response(int status) {
  switch (status) {
    case 400: return {bad_request, http::reason_line<400>};
    case 404: return {not_found, http::reason_line<404>};
    case 408: return {request_timeout, http::reason_line<408>};
    case 413: return {payload_too_large, http::reason_line<413>};
    case 414: return {uri_too_long, http::reason_line<414>};
    case 431: return {header_too_large, http::reason_line<431>};
    case 501: return {not_implemented, http::reason_line<501>};
    case 505: return {version_not_supported, http::reason_line<505>};
    default: return {internal_error, http::reason_line<500>};
  }
}

}  // namespace ringhttp::server::heads
