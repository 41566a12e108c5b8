// The middleware a route's chain runs, adapted to the App's context:
// security headers, CORS, the rate limiter, the bearer token.
#include "server/app/app.hpp"

#include <cassert>
#include <charconv>

#include "core/text/ascii.hpp"
#include "server/app/context.hpp"
#include "server/counters.hpp"
#include "server/heads.hpp"
#include "server/middleware/security_headers.hpp"

namespace ringhttp::server {
namespace {

constexpr std::string_view unauthorized_body = "{\"error\":\"unauthorized\"}";
constexpr std::string_view auth_not_configured_body = "{\"error\":\"token verification is not configured\"}";
constexpr std::string_view too_many_requests_body = "{\"error\":\"too many requests\"}";

using text::equals_ignoring_case;

}  // namespace

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
