#pragma once
// The client's command line: what to load, how hard, for how long, and what
// counts as a correct response.

#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "client/load/placeholder.hpp"
#include "client/load/target.hpp"
#include "client/results/threshold.hpp"
#include "core/cli/flags.hpp"
#include "core/io/completion.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::client {

// The highest -R accepted. Pacing's arithmetic relies on it (remainders of
// a division by the rate, times 10^9, stay far below 2^64).
inline constexpr std::uint64_t rate_per_s_max = 100'000'000;

// With no URL the client loads the server's default address.
inline constexpr const char* default_url = "http://127.0.0.1:8080/plaintext";

struct Options {
  Target target;
  std::string url;
  bool url_defaulted = false;  // no URL was given: default_url
  // --resolve, repeatable; -4/-6; --unix-socket (the URL then names Host and path).
  std::vector<ResolveOverride> resolve;
  Family family = Family::any;
  std::string unix_socket;
  // https://: --cacert (empty: the system's store), -k/--insecure,
  // --no-sessionid (curl's name: no session resumed, every handshake full).
  std::string cacert;
  bool insecure = false;
  bool no_sessionid = false;
  // --ciphers, --tls13-ciphers (curl's): what the handshake offers, in
  // OpenSSL's syntax; empty: OpenSSL's defaults.
  std::string ciphers;
  std::string tls13_ciphers;
  // HTTP/2: --http2 over https:// (ALPN h2), --http2-prior-knowledge over
  // http:// (h2c, curl's name); --max-streams: requests in flight per
  // connection, each on its own stream (h2load's -m).
  bool http2 = false;
  bool http2_prior_knowledge = false;
  std::uint32_t max_streams = 1;
  // --requests-per-connection: each connection closes after this many
  // responses (its last request says Connection: close); 0: never.
  std::uint32_t requests_per_connection = 0;
  // --batch-wait: auto (client/load/batch_wait.hpp), or this many µs
  // always (0: off).
  bool batch_wait_auto = true;
  std::uint32_t batch_wait_us = 0;
  // A connection (and its TLS handshake) not ready by then is a connect error.
  std::uint64_t connect_timeout_ns = 2'000'000'000;
  std::uint32_t connections = 10;
  std::uint32_t threads = 1;
  std::vector<int> cpus;  // one per thread, within the process's CPU mask (default: the mask, spread)
  std::uint64_t duration_ns = 10'000'000'000;
  bool duration_given = false;
  std::uint64_t warmup_ns = 3'000'000'000;
  std::uint64_t requests = 0;  // 0: run for the duration
  std::string method = "GET";
  std::vector<std::string> headers;  // "Name: value", as given
  std::string body;
  std::string body_file;  // --body-file: where body is read from
  std::uint32_t pipeline = 1;
  std::uint64_t rate = 0;  // requests/s in total; 0: closed model
  std::uint64_t timeout_ns = 2'000'000'000;
  std::vector<std::uint16_t> expect_status;  // empty: any 2xx
  std::string expect_body;
  std::string expect_body_file;  // where expect_body was read from, if from a file
  bool check_body = false;
  // {seq:A..B} or {rand:A..B} in the path, a header, the body or the
  // expected body: the requests vary (client/load/placeholder.hpp).
  std::optional<Placeholder> placeholder;
  io::BackendKind backend = io::BackendKind::uring;
  uring::Features wanted_features = uring::Features::all();
  std::string uring_text = "all";
  bool json = false;
  std::string hdr_out;
  std::string hdr_log;
  int server_pid = 0;  // 0: none
  std::uint32_t ring_entries = 1024;
  // --shard I/N: this process runs share I of N of the connections (and of
  // -n), with their global indices, so N processes together run exactly
  // the connections and the rate schedule one process would.
  std::uint32_t shard_index = 0;
  std::uint32_t shard_count = 1;
  // --start-at: the wall-clock instant (Unix ns) the warm-up starts; 0: now.
  std::int64_t start_at_unix_ns = 0;
  // --threshold, repeatable: judged on the report; any failed: exit 3.
  std::vector<Threshold> thresholds;
  // --threshold-interval: also judge the latency, requests and rps
  // thresholds on every interval of this length (whole seconds); 0: the
  // whole window only.
  std::uint64_t threshold_interval_ns = 0;

  // The window ends at a deadline (-d, or no -n), not only when -n's
  // requests are done.
  bool timed() const { return requests == 0 || duration_given; }

  // The requests go as HTTP/2 streams.
  bool speaks_http2() const { return http2 || http2_prior_knowledge; }

  // Per-second interval histograms are kept (--hdr-log, --threshold-interval).
  bool keeps_intervals() const { return !hdr_log.empty() || threshold_interval_ns > 0; }
};

// This process's share of the connections: the global index of its first
// and how many (the first shards take the remainder).
struct ShardShare {
  std::uint32_t first_connection = 0;
  std::uint32_t connections = 0;
  std::uint64_t requests = 0;  // its share of -n (0: run for the duration)
};
ShardShare shard_share(const Options& options);

using ParseOutcome = cli::Outcome;

// Parses argv; on a bad flag or URL prints a clear message to stderr.
ParseOutcome parse_options(int argc, char** argv, Options& out);

// The table of the client's flags (for tools/docs_tables).
const cli::Program<Options>& command_line();

// "500ms", "10s", "2m", "1h", "250us"; a bare number is seconds.
using cli::parse_duration;

// --threshold and --threshold-interval, for the client and client merge:
// each stores into `thresholds` and `threshold_interval_ns` of its options.
template <typename Options>
bool store_threshold(std::string_view value, Options& out, std::string& error) {
  std::optional<Threshold> t = parse_threshold(value, error);
  if (!t) return false;
  out.thresholds.push_back(std::move(*t));
  return true;
}
template <typename Options>
bool store_threshold_interval(std::string_view value, Options& out, std::string&) {
  constexpr std::uint64_t ns_per_s = 1'000'000'000;  // whole seconds: the interval logs' own grain
  return parse_duration(value, out.threshold_interval_ns) && out.threshold_interval_ns >= ns_per_s &&
         out.threshold_interval_ns % ns_per_s == 0;
}

}  // namespace ringhttp::client
