// The route table, built once, and the router: path, then method, then the
// route's middleware chain and its handler; 404, 405 and OPTIONS otherwise.
#include "server/app/app.hpp"

#include <cassert>

#include "server/app/context.hpp"
#include "server/heads.hpp"

namespace ringhttp::server {
namespace {

constexpr std::uint8_t bit(http::Method m) { return std::uint8_t(1u << unsigned(m)); }
constexpr std::uint8_t get_head = bit(http::Method::get) | bit(http::Method::head);
constexpr std::uint8_t post = bit(http::Method::post);

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

}  // namespace

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

}  // namespace ringhttp::server
