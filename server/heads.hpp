#pragma once
// Status lines with the fixed headers that go with them, as static bytes.
// A response's first iovec points here.

#include <string_view>

namespace ringhttp::server::heads {

#define RINGHTTP_SERVER_HEADER "Server: ringhttp\r\n"

inline constexpr std::string_view ok_text = "HTTP/1.1 200 OK\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view ok_json =
    "HTTP/1.1 200 OK\r\n" RINGHTTP_SERVER_HEADER "Content-Type: application/json\r\n";
inline constexpr std::string_view ok_octets =
    "HTTP/1.1 200 OK\r\n" RINGHTTP_SERVER_HEADER "Content-Type: application/octet-stream\r\n";
inline constexpr std::string_view ok_metrics =
    "HTTP/1.1 200 OK\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain; version=0.0.4\r\n";
inline constexpr std::string_view continue_100 = "HTTP/1.1 100 Continue\r\n\r\n";
inline constexpr std::string_view bad_request =
    "HTTP/1.1 400 Bad Request\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view not_found =
    "HTTP/1.1 404 Not Found\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view method_not_allowed_get_head =
    "HTTP/1.1 405 Method Not Allowed\r\n" RINGHTTP_SERVER_HEADER "Allow: GET, HEAD\r\nContent-Type: text/plain\r\n";
inline constexpr std::string_view request_timeout =
    "HTTP/1.1 408 Request Timeout\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view payload_too_large =
    "HTTP/1.1 413 Content Too Large\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view uri_too_long =
    "HTTP/1.1 414 URI Too Long\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view header_too_large =
    "HTTP/1.1 431 Request Header Fields Too Large\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view internal_error =
    "HTTP/1.1 500 Internal Server Error\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view not_implemented =
    "HTTP/1.1 501 Not Implemented\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view version_not_supported =
    "HTTP/1.1 505 HTTP Version Not Supported\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";

inline constexpr std::string_view method_not_allowed =  // an Allow block follows, from the route table
    "HTTP/1.1 405 Method Not Allowed\r\n" RINGHTTP_SERVER_HEADER "Content-Type: text/plain\r\n";
inline constexpr std::string_view no_content = "HTTP/1.1 204 No Content\r\n" RINGHTTP_SERVER_HEADER;

// The application's refusals, with JSON bodies.
#define RINGHTTP_JSON_TYPE "Content-Type: application/json\r\n"
inline constexpr std::string_view bad_request_json =
    "HTTP/1.1 400 Bad Request\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
// RFC 6750 section 3.1: a request with no credentials gets the challenge
// without an error code; one whose token failed gets error="invalid_token"
// and nothing that says which check failed.
inline constexpr std::string_view unauthorized_no_token =
    "HTTP/1.1 401 Unauthorized\r\n" RINGHTTP_SERVER_HEADER "WWW-Authenticate: Bearer\r\n" RINGHTTP_JSON_TYPE;
inline constexpr std::string_view unauthorized_invalid_token =
    "HTTP/1.1 401 Unauthorized\r\n" RINGHTTP_SERVER_HEADER
    "WWW-Authenticate: Bearer error=\"invalid_token\"\r\n" RINGHTTP_JSON_TYPE;
inline constexpr std::string_view payload_too_large_json =
    "HTTP/1.1 413 Content Too Large\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view unsupported_media_type_json =
    "HTTP/1.1 415 Unsupported Media Type\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view unprocessable_json =
    "HTTP/1.1 422 Unprocessable Content\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view too_many_requests_json =
    "HTTP/1.1 429 Too Many Requests\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view created_json =
    "HTTP/1.1 201 Created\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view not_found_json = "HTTP/1.1 404 Not Found\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view internal_error_json =
    "HTTP/1.1 500 Internal Server Error\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
inline constexpr std::string_view service_unavailable_json =
    "HTTP/1.1 503 Service Unavailable\r\n" RINGHTTP_SERVER_HEADER RINGHTTP_JSON_TYPE;
#undef RINGHTTP_JSON_TYPE

#undef RINGHTTP_SERVER_HEADER

// The head and a short plain-text body for an error status.
struct ErrorResponse {
  std::string_view head;
  std::string_view body;
};

constexpr ErrorResponse error_response(int status) {
  switch (status) {
    case 400: return {bad_request, "Bad Request\n"};
    case 404: return {not_found, "Not Found\n"};
    case 408: return {request_timeout, "Request Timeout\n"};
    case 413: return {payload_too_large, "Content Too Large\n"};
    case 414: return {uri_too_long, "URI Too Long\n"};
    case 431: return {header_too_large, "Request Header Fields Too Large\n"};
    case 501: return {not_implemented, "Not Implemented\n"};
    case 505: return {version_not_supported, "HTTP Version Not Supported\n"};
    default: return {internal_error, "Internal Server Error\n"};
  }
}

}  // namespace ringhttp::server::heads
