#include "server/metrics_request.hpp"

#include <cassert>

#include "core/text/ascii.hpp"
#include "server/heads.hpp"

namespace ringhttp::server {
namespace {

constexpr std::string_view metrics_path = "/metrics";

// An origin-form target: '/' first, then visible ASCII only (no space, no
// control byte, nothing past 0x7e).
constexpr bool is_origin_form(std::string_view text) {
  if (text.empty() || text.front() != '/') return false;
  for (const char c : text) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

// "METHOD SP TARGET SP HTTP/1.x", each separated by exactly one space.
MetricsRequest judge_request_line(std::string_view line) {
  const std::size_t space1 = line.find(' ');
  const std::size_t space2 = space1 == std::string_view::npos ? space1 : line.find(' ', space1 + 1);
  if (space2 == std::string_view::npos) return MetricsRequest::bad_request;
  const std::string_view method = line.substr(0, space1);
  const std::string_view target = line.substr(space1 + 1, space2 - space1 - 1);
  const std::string_view version = line.substr(space2 + 1);
  if (!text::is_token(method) || !is_origin_form(target) || (version != "HTTP/1.1" && version != "HTTP/1.0")) {
    return MetricsRequest::bad_request;
  }
  // A query is allowed and ignored: the exposition takes no parameters.
  if (target.substr(0, target.find('?')) != metrics_path) return MetricsRequest::not_found;
  if (method == "GET") return MetricsRequest::get;
  if (method == "HEAD") return MetricsRequest::head;
  return MetricsRequest::method_not_allowed;
}

// Fixed headers of every answer after the status line's own: the endpoint
// closes after one answer, and says so.
void append_framing(std::size_t content_length, std::string& out) {
  out.append("Content-Length: ").append(std::to_string(content_length)).append("\r\nConnection: close\r\n\r\n");
}

}  // namespace

MetricsRequest judge_metrics_request(std::string_view received) {
  const std::size_t line_end = received.find("\r\n");
  if (line_end != std::string_view::npos) {
    const MetricsRequest verdict = judge_request_line(received.substr(0, line_end));
    if (verdict == MetricsRequest::bad_request) return verdict;
    // The empty line may be the request line's own CRLF followed by one more.
    if (received.find("\r\n\r\n", line_end) != std::string_view::npos) return verdict;
  }
  return received.size() >= metrics_request_bytes_max ? MetricsRequest::too_large : MetricsRequest::incomplete;
}

void build_metrics_answer(MetricsRequest request, std::string_view metrics_text, std::string& out) {
  assert(request != MetricsRequest::incomplete);
  out.clear();
  if (request == MetricsRequest::get || request == MetricsRequest::head) {
    out.append(heads::ok_metrics);
    append_framing(metrics_text.size(), out);
    if (request == MetricsRequest::get) out.append(metrics_text);
    return;
  }
  if (request == MetricsRequest::method_not_allowed) {
    static constexpr std::string_view body = "Method Not Allowed\n";
    out.append(heads::method_not_allowed_get_head);
    append_framing(body.size(), out);
    out.append(body);
    return;
  }
  int status = 500;
  switch (request) {
    case MetricsRequest::bad_request: status = 400; break;
    case MetricsRequest::not_found: status = 404; break;
    case MetricsRequest::too_large: status = 431; break;
    case MetricsRequest::timed_out: status = 408; break;
    default: assert(false && "handled above"); break;
  }
  const heads::ErrorResponse error = heads::error_response(status);
  out.append(error.head);
  append_framing(error.body.size(), out);
  out.append(error.body);
}

}  // namespace ringhttp::server
