#pragma once
// The metrics endpoint's HTTP, without sockets: what the bytes read so far
// ask for, and the whole answer to it. Only the request line is read: the
// endpoint answers one request per connection and then closes, so the
// headers (and any body) need no framing, only an end to wait for, the
// empty line.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::server {

// The longest request the endpoint reads: a scraper's GET is a few hundred
// bytes, and 8 KiB is the main port's default header limit too.
inline constexpr std::size_t metrics_request_bytes_max = 8192;

enum class MetricsRequest : std::uint8_t {
  incomplete,          // no empty line yet: read more
  get,                 // 200 with the counters
  head,                // 200, the same headers, no body
  bad_request,         // 400: the request line is not METHOD SP /TARGET SP HTTP/1.x
  not_found,           // 404: a path other than /metrics
  method_not_allowed,  // 405: a method other than GET or HEAD on /metrics
  too_large,           // 431: no empty line within metrics_request_bytes_max
  timed_out,           // 408: the caller's verdict, when the request did not arrive in time
};

// Judges `received`, the bytes of one connection so far. A bad request line
// is refused as soon as it is complete; anything else waits for the empty
// line that ends the header section.
MetricsRequest judge_metrics_request(std::string_view received);

// The whole answer to `request` (anything but incomplete) into `out`, with
// Content-Length and Connection: close; `metrics_text` is the body of a GET
// (and the length a HEAD announces).
void build_metrics_answer(MetricsRequest request, std::string_view metrics_text, std::string& out);

}  // namespace ringhttp::server
