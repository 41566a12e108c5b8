// One hostile-driver session against a fresh server: rounds of the driver
// (support/hostile_driver.hpp), each followed by the checks that the server
// came back: still alive, every connection closed, its descriptors back to
// where they started, /metrics in agreement with what the driver saw, and
// its memory no larger after a second identical round. Shared by the gtest
// (a fixed seed) and the standalone driver (random seeds, tools/fuzz.sh).
//
// Over HTTPS (driver.tls) the server gets fresh certificates, serves
// /metrics on a plain address of its own (so that the scrapes add no
// connection, request or handshake to what is checked), and its TLS
// counters are checked too: one handshake ended per connection, full or
// resumed as the driver saw it, and no failure but where the driver
// closed first.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/hostile_driver.hpp"

namespace socket_test::hostile {

struct SessionOptions {
  DriverOptions driver;
  // Round 2 and later repeat round 1 exactly, so the server's memory after
  // the last must be close to its memory after the first.
  std::uint32_t rounds = 2;
  // Server flags besides those that set the limits the scripts are made
  // for (shards, header and body limits, timeouts), which are derived from
  // driver.script.
  std::vector<std::string> extra_server_args;
  // Over HTTPS: the server's certificate and key, for a CA that
  // driver.tls_ca_file names. run_session makes a fresh set when they are
  // empty (support/certificates.hpp).
  std::string tls_cert_file;
  std::string tls_key_file;
  // The server's --output-bytes-max: small, so that a client that stops
  // reading soon makes the server stop reading it too.
  std::uint64_t output_bytes_max = 32 * 1024;
  // Resident memory may grow this much from the end of round 1 to the end
  // of the last round: the connection table is touched lazily, slot by slot,
  // and the allocator keeps what it has; a leak per connection or request
  // would be far more (thousands of each per round).
  std::uint64_t rss_growth_bytes_max = 8ull << 20;
  // After a round, how long active connections and descriptors may take to
  // come back (lingering connections end within a second).
  std::chrono::milliseconds settle_ms_max{10000};
  // After a failure, replay failing connections on fresh servers for a
  // minimal reproduction: when the server died, halve the set of failing
  // connections while a half still kills it; otherwise replay up to
  // replays_max of them one at a time. 0: no replays.
  std::uint32_t replays_max = 8;
  std::chrono::milliseconds replay_ms_max{30000};
  // Progress lines (round summaries); may be empty.
  std::function<void(const std::string&)> log;
};

struct SessionReport {
  std::vector<std::string> failures;  // empty: the server passed
  bool server_died = false;
};

// The server's flags for these limits (and over HTTPS with the certificate
// files set, for TLS and /metrics on 127.0.0.1:0); the socket tests'
// helpers add --port 0 --address 127.0.0.1.
std::vector<std::string> server_args(const SessionOptions& options);

SessionReport run_session(const SessionOptions& options);

}  // namespace socket_test::hostile
