#pragma once
// What the route table's handlers and middleware share while one request
// runs: the request, its reply, the shard's App, the path's parameters and
// what earlier middleware found. Inside server/app/ only.

#include <cstring>
#include <string_view>

#include "server/app/app.hpp"

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

// Copies `s` to `p`; returns the byte after it.
inline char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace ringhttp::server
