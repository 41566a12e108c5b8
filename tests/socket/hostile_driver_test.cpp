// A stateful test of the connection state machine, not only of the parser:
// a seeded, randomized hostile-client driver (support/hostile_driver.hpp)
// runs 256 connections, 64 at a time, each with its own script of pipelined
// bursts, Expect: 100-continue, bodies by Content-Length and chunked,
// requests split at random bytes, reading stopped for a while, resets,
// half-closes and idle gaps, against the real server, and checks every
// response against its model: each request gets exactly its own response,
// in order, or the connection is refused with the right status and closed.
// After each round the server must still run, every connection and
// descriptor must come back, /metrics must agree with what the driver saw,
// and a second identical round must not grow its memory. The same seed runs
// again over HTTPS: each connection's TLS handshake first, then the same
// script with every piece sent as one record, and the server's TLS
// counters checked too. These tests run one fixed seed; tools/fuzz.sh runs
// the standalone driver with random ones.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "support/hostile_session.hpp"

namespace socket_test {
namespace {

// The seed `meson test` runs (RINGHTTP_HOSTILE_SEED overrides it).
constexpr std::uint64_t fixed_seed = 20261203;

std::uint64_t seed() {
  const char* env = std::getenv("RINGHTTP_HOSTILE_SEED");
  return env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : fixed_seed;
}

void run_fixed_seed(bool tls) {
  hostile::SessionOptions options;
  options.driver.seed = seed();
  options.driver.tls = tls;
  options.log = [](const std::string& line) { std::cout << "[hostile] " << line << std::endl; };
  const hostile::SessionReport report = hostile::run_session(options);
  for (const std::string& failure : report.failures) ADD_FAILURE() << failure;
}

TEST(HostileDriver, every_request_gets_its_own_answer_in_order_and_the_server_comes_back) { run_fixed_seed(false); }

TEST(HostileDriver, over_tls_every_request_gets_its_own_answer_in_order_and_the_server_comes_back) {
  run_fixed_seed(true);
}

}  // namespace
}  // namespace socket_test
