#pragma once
// The application a shard serves: a route table (method set, path pattern,
// middleware chain, handler) built once at start-up, and the per-shard state
// its handlers and middleware use (the rate limiter's table, the JSON body
// parser, the token verifier). Routing, middleware and handlers allocate
// nothing per request; middleware adds headers as static blocks or a few
// formatted bytes in the response's slot, so they go out in the same single
// writev as the rest of the response.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/auth/jwt.hpp"
#include "core/http/request_parser.hpp"
#include "server/app/echo_body.hpp"
#include "server/app/path_pattern.hpp"
#include "server/db/pool.hpp"
#include "server/middleware/client_key.hpp"
#include "server/middleware/cors.hpp"
#include "server/middleware/rate_limiter.hpp"
#include "server/reply.hpp"

namespace ringhttp::server {

struct ShardCounters;

// What every shard's App is built from; immutable once the shards start.
struct AppConfig {
  CorsPolicy cors;
  RateLimit rate_limit;
  std::optional<std::string> jwt_secret;  // none: routes behind a bearer token answer 503
  // Tokens without exp are refused unless --jwt-allow-no-exp.
  auth::MissingExp jwt_missing_exp = auth::MissingExp::refuse;
  // False with --metrics-address: the counters are served on that address
  // only, and GET /metrics on the main port is an unknown path (404).
  bool metrics_route = true;
};

struct Request {
  const http::RequestHead& head;
  std::string_view path;
  std::string_view query;  // without the '?'
  ClientKey client;        // the peer's address
  std::uint64_t now_ms;    // monotonic, for the rate limiter
  std::int64_t now_s;      // Unix time, for token expiry
  db::Waiter waiter;       // who a database query's result goes to (the connection, this response)
};

// Finds `name` in a query string ("a=1&bytes=5"). False if absent.
bool query_param(std::string_view query, std::string_view name, std::string_view& value);

// Longest stream /stream?bytes= accepts: 1 PiB, far past any test's need
// (2^40) while keeping offsets far from overflow.
inline constexpr std::uint64_t stream_bytes_max = std::uint64_t(1) << 50;

// The largest id GET /users/:id accepts: 2^53-1, the largest integer a
// JavaScript client reads exactly.
inline constexpr std::uint64_t user_id_max = (std::uint64_t(1) << 53) - 1;

class App {
 public:
  App(const AppConfig& config, const Cors& cors, ShardCounters& counters);
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Fills `reply` for `request`: a route's answer (or its middleware's),
  // 404, 405, or 204 for OPTIONS.
  void handle(const Request& request, Reply& reply);
  // The shard's database connections (--db); none: the /db routes answer 503.
  void set_database(db::Pool* pool) { db_ = pool; }
  // Fills a deferred reply from its query's result.
  static void answer(const db::Result& result, Reply& reply);

 private:
  struct Context;
  enum class Next : bool { proceed, answered };
  using Handler = void (*)(Context&);
  using Middleware = Next (*)(Context&);
  using MethodSet = std::uint8_t;  // bits of http::Method
  static constexpr std::size_t chain_max = 4;

  struct Route {
    MethodSet methods;
    PathPattern pattern;
    Handler handler;
    std::array<Middleware, chain_max> chain{};
    std::uint8_t chain_len = 0;
    std::string allow_block;  // "Allow: ...\r\n", for 405 and OPTIONS on this path
  };

  void add(MethodSet methods, std::string_view pattern, Handler handler, std::initializer_list<Middleware> chain);
  static Next run_chain(const Route& route, Context& ctx);

  // Handlers.
  static void plaintext(Context& ctx);
  static void json(Context& ctx);
  static void ping(Context& ctx);
  static void stream(Context& ctx);
  static void metrics(Context& ctx);
  static void user(Context& ctx);
  static void echo(Context& ctx);
  static void profile(Context& ctx);
  static void db_user(Context& ctx);
  static void db_insert(Context& ctx);
  static void submitted(Context& ctx, db::Submit outcome);
  // What several handlers validate the same way; false once answered.
  static bool user_id(Context& ctx, std::uint64_t& id);
  static bool json_body(Context& ctx, json::EchoShape shape, json::EchoParse& parsed);
  // Middleware.
  static Next security(Context& ctx);
  static Next cors(Context& ctx);
  static Next rate_limit(Context& ctx);
  static Next bearer_token(Context& ctx);

  const Cors& cors_;
  ShardCounters& counters_;
  std::vector<Route> routes_;
  std::string server_allow_block_;  // every method any route takes, for OPTIONS *
  RateLimiter limiter_;
  std::string rate_policy_block_;  // RateLimit-Policy and RateLimit-Limit, fixed by the policy
  json::EchoBodyParser echo_parser_;
  std::unique_ptr<auth::TokenVerifier> verifier_;  // null without a secret
  char subject_[auth::subject_bytes_max];          // the verified token's sub, for this request
  db::Pool* db_ = nullptr;
};

}  // namespace ringhttp::server
