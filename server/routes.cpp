#include "server/routes.hpp"

#include <array>

#include "core/http/json_writer.hpp"
#include "core/text/parse_number.hpp"
#include "server/counters.hpp"
#include "server/heads.hpp"

namespace ringhttp::server {
namespace {

using Handler = void (*)(const Request&, Reply&);

void plaintext(const Request&, Reply& reply) {
  static constexpr std::string_view body = "Hello, World!";
  reply.fixed(200, heads::ok_text, body);
}

void json(const Request&, Reply& reply) {
  // Serialized for every request, as the JSON baseline of web-framework
  // benchmarks requires, into the response slot's own scratch.
  http::JsonWriter w(reply.scratch(), Reply::scratch_bytes());
  w.begin_object().key("message").string("Hello, World!").end_object();
  if (!w.ok()) {
    const auto error = heads::error_response(500);
    reply.fixed(500, error.head, error.body);
    return;
  }
  reply.scratch_body(200, heads::ok_json, w.size());
}

void stream(const Request& request, Reply& reply) {
  std::string_view text;
  std::uint64_t bytes = 0;
  const bool ok =
      query_param(request.query, "bytes", text) && text::parse_number<std::uint64_t>(text, 0, stream_bytes_max, bytes);
  if (!ok) {
    static constexpr std::string_view body = "bytes must be an integer from 0 to 2^50\n";
    reply.fixed(400, heads::bad_request, body);
    return;
  }
  reply.stream(200, heads::ok_octets, bytes);
}

void metrics(const Request&, Reply& reply) { reply.metrics(heads::ok_metrics); }

struct Route {
  std::string_view path;
  Handler handler;
};

// Every route here answers GET and HEAD; other methods get 405.
constexpr std::array routes = {
    Route{"/plaintext", &plaintext},
    Route{"/json", &json},
    Route{"/stream", &stream},
    Route{"/metrics", &metrics},
};

}  // namespace

bool query_param(std::string_view query, std::string_view name, std::string_view& value) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
      return true;
    }
  }
  return false;
}

void Reply::stream(std::uint16_t status, std::string_view head, std::uint64_t bytes) {
  set(status, head, {}, BodySource::none);
  content_length_ = bytes;
  if (!head_only_ && bytes > 0) {
    response_.source = BodySource::stream;
    response_.stream_offset = 0;
    response_.stream_remaining = bytes;
  }
}

void Reply::metrics(std::string_view head) {
  metrics_text_.clear();
  render_metrics(all_shards_, metrics_text_);
  set(200, head, metrics_text_, BodySource::metrics);
}

void route(const Request& request, Reply& reply) {
  for (const Route& r : routes) {
    if (r.path != request.path) continue;
    const http::Method m = request.head.method;
    if (m != http::Method::get && m != http::Method::head) {
      static constexpr std::string_view body = "Method Not Allowed\n";
      reply.fixed(405, heads::method_not_allowed_get_head, body);
      return;
    }
    r.handler(request, reply);
    return;
  }
  const auto error = heads::error_response(404);
  reply.fixed(404, error.head, error.body);
}

}  // namespace ringhttp::server
