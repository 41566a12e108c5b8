// The routes' handlers that answer at once: fixed bodies, JSON written per
// request, /stream, /metrics, and the validation several of them share.
#include "server/app/app.hpp"

#include <cassert>
#include <charconv>

#include "core/http/json_writer.hpp"
#include "core/text/ascii.hpp"
#include "core/text/parse_number.hpp"
#include "server/app/context.hpp"
#include "server/heads.hpp"

namespace ringhttp::server {
namespace {

static_assert(json::echo_body_bytes_max == http::RequestParser::body_kept_bytes_max,
              "the parser keeps exactly the bodies POST /echo accepts");
static_assert(json::body_padding_bytes <= http::RequestParser::body_padding_bytes,
              "the parser's body buffer has the padding simdjson reads");
static_assert(json::echo_response_bytes_max <= Reply::scratch_bytes());
static_assert(json::echo_error_bytes_max <= Reply::scratch_bytes());

constexpr std::string_view ping_body = "{\"ok\":true}";
constexpr std::string_view bad_user_id_body =
    "{\"error\":\"invalid path parameter\",\"param\":\"id\",\"expected\":\"an integer from 1 to 9007199254740991\"}";
constexpr std::string_view wrong_content_type_body = "{\"error\":\"Content-Type must be application/json\"}";
constexpr std::string_view body_too_large_body = "{\"error\":\"body too large\",\"limit\":4096}";

using text::equals_ignoring_case;

// "application/json", any case, optionally with parameters ("; charset=utf-8").
bool is_json_media_type(const http::HeaderValue& content_type) {
  if (!content_type.ok()) return false;
  std::string_view type = content_type.value.substr(0, content_type.value.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return equals_ignoring_case(type, "application/json");
}

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

void App::plaintext(Context& ctx) {
  static constexpr std::string_view body = "Hello, World!";
  ctx.reply.fixed(200, heads::ok_text, body);
}

void App::json(Context& ctx) {
  // Serialized for every request, as the JSON baseline of web-framework
  // benchmarks requires, into the response slot's own scratch.
  http::JsonWriter w(ctx.reply.scratch(), Reply::scratch_bytes());
  w.begin_object().key("message").string("Hello, World!").end_object();
  assert(w.ok());
  ctx.reply.scratch_body(200, heads::ok_json, w.size());
}

void App::ping(Context& ctx) { ctx.reply.fixed(200, heads::ok_json, ping_body); }

void App::stream(Context& ctx) {
  std::string_view text;
  std::uint64_t bytes = 0;
  const bool ok = query_param(ctx.request.query, "bytes", text) &&
                  text::parse_number<std::uint64_t>(text, 0, stream_bytes_max, bytes);
  if (!ok) {
    static constexpr std::string_view body = "bytes must be an integer from 0 to 2^50\n";
    ctx.reply.fixed(400, heads::bad_request, body);
    return;
  }
  ctx.reply.stream(200, heads::ok_octets, bytes);
}

void App::metrics(Context& ctx) { ctx.reply.metrics(heads::ok_metrics); }

// The :id of /users/:id and /db/users/:id: digits only, no sign, no leading
// zero (one spelling per id), 1 to user_id_max. False once it has answered 400.
bool App::user_id(Context& ctx, std::uint64_t& id) {
  const std::string_view text = ctx.params[0];
  const bool ok = !text.empty() && text.front() != '0' && text::parse_number<std::uint64_t>(text, 1, user_id_max, id);
  if (!ok) ctx.reply.fixed(400, heads::bad_request_json, bad_user_id_body);
  return ok;
}

// A JSON body of `shape`, as POST /echo and POST /db/users take it: 415
// unless application/json, 413 past the limit, 400 or 422 (naming the field)
// from the parser. False once it has answered the refusal.
bool App::json_body(Context& ctx, json::EchoShape shape, json::EchoParse& parsed) {
  const http::RequestHead& head = ctx.request.head;
  if (!is_json_media_type(head.header(http::KeptHeader::content_type))) {
    ctx.reply.fixed(415, heads::unsupported_media_type_json, wrong_content_type_body);
    return false;
  }
  if (head.body_truncated) {
    ctx.reply.fixed(413, heads::payload_too_large_json, body_too_large_body);
    return false;
  }
  parsed = ctx.app.echo_parser_.parse(head.body.data(), head.body.size(), shape);
  if (parsed.error == json::EchoError::none) return true;
  const std::size_t len = json::write_echo_error(parsed, ctx.reply.scratch(), Reply::scratch_bytes());
  assert(len > 0);
  const int status = json::status_for(parsed.error);
  ctx.reply.scratch_body(std::uint16_t(status), status == 422 ? heads::unprocessable_json : heads::bad_request_json, len);
  return false;
}

void App::user(Context& ctx) {
  std::uint64_t id = 0;
  if (!user_id(ctx, id)) return;
  char digits[20];
  const std::size_t n = std::size_t(std::to_chars(digits, digits + sizeof digits, id).ptr - digits);
  const std::string_view number(digits, n);
  char* const start = ctx.reply.scratch();
  char* p = put(start, "{\"id\":");
  p = put(p, number);
  p = put(p, ",\"name\":\"user-");
  p = put(p, number);
  p = put(p, "\"}");
  ctx.reply.scratch_body(200, heads::ok_json, std::size_t(p - start));
}

void App::echo(Context& ctx) {
  json::EchoParse parsed;
  if (!json_body(ctx, json::EchoShape::name_and_n, parsed)) return;
  const std::size_t len = json::write_echo_response(parsed.name, parsed.n, ctx.reply.scratch(), Reply::scratch_bytes());
  assert(len > 0);
#if RINGHTTP_CHECK_RESPONSE_SCHEMA
  // The response is validated against its schema too, as the request was.
  assert(json::check_echo_response(std::string_view(ctx.reply.scratch(), len), parsed.name, parsed.n));
#endif
  ctx.reply.scratch_body(200, heads::ok_json, len);
}

void App::profile(Context& ctx) {
  http::JsonWriter w(ctx.reply.scratch(), Reply::scratch_bytes());
  w.begin_object().key("sub").string(ctx.subject).end_object();
  assert(w.ok());
  ctx.reply.scratch_body(200, heads::ok_json, w.size());
}

}  // namespace ringhttp::server
