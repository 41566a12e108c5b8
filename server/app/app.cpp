#include "server/app/app.hpp"

#include <cassert>
#include <charconv>
#include <cstring>

#include "core/http/json_writer.hpp"
#include "core/text/ascii.hpp"
#include "core/text/parse_number.hpp"
#include "server/counters.hpp"
#include "server/heads.hpp"
#include "server/middleware/security_headers.hpp"

namespace ringhttp::server {

struct App::Context {
  const Request& request;
  Reply& reply;
  App& app;
  PathPattern::Params params{};
  std::string_view subject;  // set by bearer_token
  // Set by cors on a preflight: the chain's end answers 204 instead of the
  // handler, so the middleware after cors (the rate limiter) still runs.
  bool preflight = false;
};

namespace {

constexpr std::uint8_t bit(http::Method m) { return std::uint8_t(1u << unsigned(m)); }
constexpr std::uint8_t get_head = bit(http::Method::get) | bit(http::Method::head);
constexpr std::uint8_t post = bit(http::Method::post);

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
constexpr std::string_view unauthorized_body = "{\"error\":\"unauthorized\"}";
constexpr std::string_view auth_not_configured_body = "{\"error\":\"token verification is not configured\"}";
constexpr std::string_view too_many_requests_body = "{\"error\":\"too many requests\"}";
constexpr std::string_view db_not_configured_body = "{\"error\":\"no database configured (--db)\"}";
constexpr std::string_view db_unavailable_body = "{\"error\":\"database unavailable\"}";
constexpr std::string_view db_queue_full_body = "{\"error\":\"database queue full\"}";
constexpr std::string_view db_failed_body = "{\"error\":\"database error\"}";
constexpr std::string_view no_such_user_body = "{\"error\":\"no such user\"}";

using text::equals_ignoring_case;

// "application/json", any case, optionally with parameters ("; charset=utf-8").
bool is_json_media_type(const http::HeaderValue& content_type) {
  if (!content_type.ok()) return false;
  std::string_view type = content_type.value.substr(0, content_type.value.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return equals_ignoring_case(type, "application/json");
}

std::string allow_line(std::uint8_t methods) {
  std::string out = "Allow: ";
  const std::pair<http::Method, const char*> names[] = {
      {http::Method::get, "GET"}, {http::Method::head, "HEAD"},  {http::Method::post, "POST"},
      {http::Method::put, "PUT"}, {http::Method::del, "DELETE"},
  };
  for (const auto& [m, name] : names) {
    if ((methods & bit(m)) != 0) out += std::string(name) + ", ";
  }
  return out + "OPTIONS\r\n";
}

char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
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

App::App(const AppConfig& config, const Cors& cors, ShardCounters& counters)
    : cors_(cors), counters_(counters), limiter_(config.rate_limit) {
  if (config.jwt_secret) {
    verifier_ = std::make_unique<auth::TokenVerifier>(*config.jwt_secret, config.jwt_missing_exp);
  }
  rate_policy_block_ = "RateLimit-Policy: " + std::to_string(config.rate_limit.requests) +
                       ";w=" + std::to_string((config.rate_limit.window_ms + 999) / 1000) +
                       "\r\nRateLimit-Limit: " + std::to_string(config.rate_limit.requests) + "\r\n";
  // The seeds' ladder: each rung adds one piece to the one before.
  add(get_head, "/plaintext", &plaintext, {});
  add(get_head, "/json", &json, {});
  add(get_head, "/ping", &ping, {});
  add(get_head, "/mw/ping", &ping, {&security, &App::cors, &rate_limit});
  add(post, "/echo", &echo, {});
  add(get_head, "/users/:id", &user, {});
  add(get_head, "/profile", &profile, {&bearer_token});
  add(get_head, "/stream", &stream, {});
  // Seed 000's database rows, through the shard's own connections (--db).
  add(get_head, "/db/users/:id", &db_user, {});
  add(post, "/db/users", &db_insert, {});
  if (config.metrics_route) add(get_head, "/metrics", &metrics, {});
  // Each path's Allow line names every method any route on it takes;
  // OPTIONS * (the server as a whole) every method of every route.
  std::uint8_t all_methods = 0;
  for (const Route& r : routes_) all_methods |= r.methods;
  server_allow_block_ = allow_line(all_methods);
  for (Route& r : routes_) {
    std::uint8_t methods = 0;
    for (const Route& other : routes_) {
      if (other.pattern.text() == r.pattern.text()) methods |= other.methods;
    }
    r.allow_block = allow_line(methods);
  }
}

void App::add(MethodSet methods, std::string_view pattern, Handler handler, std::initializer_list<Middleware> chain) {
  assert(chain.size() <= chain_max);
  Route r{methods, PathPattern(pattern), handler};
  for (Middleware m : chain) r.chain[r.chain_len++] = m;
  routes_.push_back(std::move(r));
}

App::Next App::run_chain(const Route& route, Context& ctx) {
  for (std::uint8_t i = 0; i < route.chain_len; ++i) {
    if (route.chain[i](ctx) == Next::answered) return Next::answered;
  }
  if (ctx.preflight) {
    // Every middleware let the preflight through (the limiter took its
    // token): its answer is the 204 that cors prepared the headers for.
    ctx.reply.no_content(204, heads::no_content);
    return Next::answered;
  }
  return Next::proceed;
}

void App::handle(const Request& request, Reply& reply) {
  Context ctx{request, reply, *this};
  const std::uint8_t method = bit(request.head.method);
  const Route* on_path = nullptr;  // a route for this path, not this method
  for (const Route& r : routes_) {
    if (!r.pattern.match(request.path, ctx.params)) continue;
    if ((r.methods & method) == 0) {
      if (on_path == nullptr) on_path = &r;
      continue;
    }
    if (run_chain(r, ctx) == Next::answered) return;
    r.handler(ctx);
    return;
  }
  if (on_path == nullptr) {
    if (request.path == "*") {
      // OPTIONS * (the parser lets "*" through with OPTIONS only): about
      // the server as a whole (RFC 9110 section 9.3.7).
      reply.add_header_block(server_allow_block_);
      reply.no_content(204, heads::no_content);
      return;
    }
    const auto error = heads::error_response(404);
    reply.fixed(404, error.head, error.body);
    return;
  }
  if (request.head.method == http::Method::options) {
    // The path's middleware runs: a preflight is answered at the chain's
    // end (run_chain), after the rate limiter, or by whichever refuses it.
    if (run_chain(*on_path, ctx) == Next::answered) return;
    reply.add_header_block(on_path->allow_block);
    reply.no_content(204, heads::no_content);
    return;
  }
  static constexpr std::string_view body = "Method Not Allowed\n";
  reply.add_header_block(on_path->allow_block);
  reply.fixed(405, heads::method_not_allowed, body);
}

// ---------------------------------------------------------------------------
// Handlers

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

// ---------------------------------------------------------------------------
// The database routes: validated as /users/:id and /echo are, then a query
// whose result answers later (Shard::on_result calls answer()).

void App::db_user(Context& ctx) {
  std::uint64_t id = 0;
  if (!user_id(ctx, id)) return;
  if (ctx.app.db_ == nullptr) {
    ctx.reply.fixed(503, heads::service_unavailable_json, db_not_configured_body);
    return;
  }
  submitted(ctx, ctx.app.db_->read_user(ctx.params[0], ctx.request.waiter));  // the id's one spelling
}

void App::db_insert(Context& ctx) {
  json::EchoParse parsed;
  if (!json_body(ctx, json::EchoShape::name_only, parsed)) return;
  if (ctx.app.db_ == nullptr) {
    ctx.reply.fixed(503, heads::service_unavailable_json, db_not_configured_body);
    return;
  }
  static_assert(json::echo_name_chars_max * 4 <= db::Pool::name_bytes_max);
  submitted(ctx, ctx.app.db_->insert_user(parsed.name, ctx.request.waiter));
}

void App::submitted(Context& ctx, db::Submit outcome) {
  switch (outcome) {
    case db::Submit::accepted: ctx.reply.defer(); return;
    case db::Submit::unavailable: ctx.reply.fixed(503, heads::service_unavailable_json, db_unavailable_body); return;
    case db::Submit::queue_full: ctx.reply.fixed(503, heads::service_unavailable_json, db_queue_full_body); return;
  }
}

void App::answer(const db::Result& result, Reply& reply) {
  switch (result.outcome) {
    case db::Outcome::row: {
      // {"id":…,"name":…}: the id as Postgres wrote it (a bigint's digits), the
      // name escaped. db/schema.sql's 100 characters fit the scratch; a row
      // from a database without that CHECK may not, and is a 500, not a crash.
      http::JsonWriter w(reply.scratch(), Reply::scratch_bytes());
      w.begin_object().key("id").integer_digits(result.id).key("name").string(result.name).end_object();
      if (!w.ok()) break;
      const bool created = result.statement == db::Statement::user_insert;
      reply.scratch_body(created ? 201 : 200, created ? heads::created_json : heads::ok_json, w.size());
      return;
    }
    case db::Outcome::no_row:
      if (result.statement == db::Statement::user_by_id) {
        reply.fixed(404, heads::not_found_json, no_such_user_body);
        return;
      }
      break;  // an INSERT … RETURNING with no row: the database misbehaved
    case db::Outcome::unavailable: reply.fixed(503, heads::service_unavailable_json, db_unavailable_body); return;
    case db::Outcome::failed: break;
  }
  reply.fixed(500, heads::internal_error_json, db_failed_body);
}

void App::profile(Context& ctx) {
  http::JsonWriter w(ctx.reply.scratch(), Reply::scratch_bytes());
  w.begin_object().key("sub").string(ctx.subject).end_object();
  assert(w.ok());
  ctx.reply.scratch_body(200, heads::ok_json, w.size());
}

// ---------------------------------------------------------------------------
// Middleware

App::Next App::security(Context& ctx) {
  ctx.reply.add_header_block(security_headers);
  return Next::proceed;
}

App::Next App::cors(Context& ctx) {
  const http::RequestHead& head = ctx.request.head;
  const http::HeaderValue& origin = head.header(http::KeptHeader::origin);
  if (Cors::is_preflight(head)) {
    // Not answered here: a preflight is a request like any other to the
    // middleware after cors, so the rate limiter takes a token for it and
    // may refuse it (429). Answering here let preflights past the limiter.
    ctx.reply.add_header_block(ctx.app.cors_.preflight_block(origin));
    ctx.preflight = true;
    return Next::proceed;
  }
  ctx.reply.add_header_block(ctx.app.cors_.response_block(origin));
  return Next::proceed;
}

App::Next App::rate_limit(Context& ctx) {
  App& app = ctx.app;
  const std::uint64_t evictions_before = app.limiter_.evictions();
  const RateDecision d = app.limiter_.take(ctx.request.client, ctx.request.now_ms);
  if (app.limiter_.evictions() != evictions_before) app.counters_.rate_limit_evictions.add();
  ctx.reply.add_header_block(app.rate_policy_block_);
  char* const start = ctx.reply.header_text_end();
  char* const end = start + ctx.reply.header_text_room();
  char* p = put(start, "RateLimit-Remaining: ");
  p = std::to_chars(p, end, d.remaining).ptr;
  p = put(p, "\r\nRateLimit-Reset: ");
  p = std::to_chars(p, end, d.reset_s).ptr;
  p = put(p, "\r\n");
  if (!d.allowed) {
    p = put(p, "Retry-After: ");
    p = std::to_chars(p, end, d.retry_after_s).ptr;
    p = put(p, "\r\n");
  }
  assert(p <= end);
  ctx.reply.header_text_written(std::size_t(p - start));
  if (d.allowed) return Next::proceed;
  app.counters_.rate_limited.add();
  ctx.reply.fixed(429, heads::too_many_requests_json, too_many_requests_body);
  return Next::answered;
}

App::Next App::bearer_token(Context& ctx) {
  App& app = ctx.app;
  if (!app.verifier_) {
    ctx.reply.fixed(503, heads::service_unavailable_json, auth_not_configured_body);
    return Next::answered;
  }
  const http::HeaderValue& authorization = ctx.request.head.header(http::KeptHeader::authorization);
  // The scheme is case-insensitive (RFC 9110 section 11.1); one space, then the token.
  constexpr std::string_view scheme = "bearer ";
  const std::string_view value = authorization.value;
  if (!authorization.present ||
      (authorization.usable && !equals_ignoring_case(value.substr(0, scheme.size()), scheme))) {
    app.counters_.token_refusals[std::size_t(auth::TokenError::missing)].add();
    ctx.reply.fixed(401, heads::unauthorized_no_token, unauthorized_body);
    return Next::answered;
  }
  std::size_t subject_len = 0;
  const auth::TokenError error =
      authorization.usable
          ? app.verifier_->verify(value.substr(scheme.size()), ctx.request.now_s, app.subject_, subject_len)
          : auth::TokenError::too_long;
  if (error != auth::TokenError::none) {
    app.counters_.token_refusals[std::size_t(error)].add();
    ctx.reply.fixed(401, heads::unauthorized_invalid_token, unauthorized_body);
    return Next::answered;
  }
  ctx.subject = std::string_view(app.subject_, subject_len);
  return Next::proceed;
}

}  // namespace ringhttp::server
