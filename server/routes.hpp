#pragma once
// The route table: method set, exact path, handler. Routing happens once per
// request and allocates nothing.

#include <string_view>

#include "core/http/request_parser.hpp"
#include "server/reply.hpp"

namespace ringhttp::server {

struct Request {
  const http::RequestHead& head;
  std::string_view path;
  std::string_view query;  // without the '?'
};

// Fills `reply` for `request`: a route's answer, 404 or 405.
void route(const Request& request, Reply& reply);

// Finds `name` in a query string ("a=1&bytes=5"). False if absent.
bool query_param(std::string_view query, std::string_view name, std::string_view& value);

// Longest stream /stream?bytes= accepts: 1 PiB, far past any test's need
// (2^40) while keeping offsets far from overflow.
inline constexpr std::uint64_t stream_bytes_max = std::uint64_t(1) << 50;

}  // namespace ringhttp::server
