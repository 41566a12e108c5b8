#include "client/options.hpp"

#include "client/load/batch_wait.hpp"
#include "client/tls_config.hpp"
#include "core/uring/ring.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "client/load/request.hpp"
#include "core/cli/shared_flags.hpp"
#include "core/net/cpu.hpp"
#include "core/text/parse_number.hpp"
#include "ringhttp_config.hpp"

namespace ringhttp::client {
namespace {

using text::parse_number;

constexpr std::uint32_t connections_max = 1'000'000;
constexpr std::uint32_t threads_max = 1024;
constexpr std::uint32_t pipeline_max = 1024;
// Streams per connection: nghttp2 keeps per stream a few hundred bytes, and
// servers allow 100 (nginx) to 256 (h2o) at once; past this it is a typo.
constexpr std::uint32_t streams_max = 1024;
constexpr std::uint64_t body_bytes_max = 64ull << 20;
constexpr std::uint32_t shards_max = 100'000;
// --start-at further ahead than this is a typo, not a plan.
constexpr std::int64_t start_at_ahead_max_ns = 24ll * 3600 * 1'000'000'000;
// Unix seconds a --start-at may name: up to 2096, far from overflowing
// nanoseconds in 64 bits (9.2e9 s).
constexpr std::uint64_t start_at_seconds_max = 4'000'000'000;

std::int64_t wall_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// "+5s" (from now) or Unix seconds with up to 9 decimals ("1764850000.25").
bool parse_start_at(std::string_view text, std::int64_t& out_unix_ns) {
  if (text.starts_with('+')) {
    std::uint64_t ns = 0;
    if (!parse_duration(text.substr(1), ns) || ns > std::uint64_t(start_at_ahead_max_ns)) return false;
    out_unix_ns = wall_now_ns() + std::int64_t(ns);
    return true;
  }
  const std::size_t dot = text.find('.');
  std::uint64_t seconds = 0;
  if (!parse_number<std::uint64_t>(text.substr(0, dot), 1, start_at_seconds_max, seconds)) return false;
  std::int64_t ns = 0;
  if (dot != std::string_view::npos) {
    const std::string_view fraction = text.substr(dot + 1);
    if (fraction.empty() || fraction.size() > 9) return false;
    std::int64_t scale = 100'000'000;
    for (const char c : fraction) {
      if (c < '0' || c > '9') return false;
      ns += (c - '0') * scale;
      scale /= 10;
    }
  }
  out_unix_ns = std::int64_t(seconds) * 1'000'000'000 + ns;
  return out_unix_ns <= wall_now_ns() + start_at_ahead_max_ns;
}

bool parse_status_list(std::string_view text, std::vector<std::uint16_t>& out) {
  out.clear();
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::uint16_t status = 0;
    if (!parse_number<std::uint16_t>(text.substr(0, comma), 100, 599, status)) return false;
    out.push_back(status);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return !out.empty();
}

}  // namespace

ShardShare shard_share(const Options& o) {
  ShardShare s;
  const std::uint32_t i = o.shard_index;
  const std::uint32_t n = o.shard_count;
  s.connections = o.connections / n + (i < o.connections % n ? 1 : 0);
  s.first_connection = i * (o.connections / n) + std::min(i, o.connections % n);
  if (o.requests > 0) s.requests = o.requests / n + (i < o.requests % n ? 1 : 0);
  return s;
}

namespace {
// Reads a whole file named by `flag` into `out`; returns what went wrong, or "".
std::string read_body_file(std::string_view flag, const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot read " + std::string(flag) + " " + path;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (out.size() > body_bytes_max) return std::string(flag) + " is larger than 64 MiB";
  return "";
}
}  // namespace

namespace {

using Flag = cli::Flag<Options>;
using cli::Kind;

// The custom flags' checks: each stores its value or says why not.
bool store_method(std::string_view value, Options& out, std::string&) {
  out.method = std::string(value);
  return !value.empty() && std::all_of(value.begin(), value.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}
bool store_header(std::string_view value, Options& out, std::string&) {
  const std::size_t colon = value.find(':');
  if (colon == std::string_view::npos || colon == 0 || value.find_first_of("\r\n") != std::string_view::npos) {
    return false;
  }
  out.headers.emplace_back(value);
  return true;
}
bool store_body(std::string_view value, Options& out, std::string&) {
  out.body = std::string(value);
  return true;
}
bool store_expect_status(std::string_view value, Options& out, std::string&) {
  return parse_status_list(value, out.expect_status);
}
bool store_expect_body(std::string_view value, Options& out, std::string&) {
  out.expect_body = std::string(value);
  out.check_body = true;
  return true;
}
bool store_resolve(std::string_view value, Options& out, std::string& error) {
  ResolveOverride r;
  error = parse_resolve(value, r);
  if (!error.empty()) return false;
  out.resolve.push_back(std::move(r));
  return true;
}
bool store_family(Options& out, Family family, std::string& error) {
  if (out.family != Family::any && out.family != family) {
    error = "-4 and -6 are exclusive";
    return false;
  }
  out.family = family;
  return true;
}
bool store_ipv4(std::string_view, Options& out, std::string& error) { return store_family(out, Family::ipv4, error); }
bool store_ipv6(std::string_view, Options& out, std::string& error) { return store_family(out, Family::ipv6, error); }
bool store_shard(std::string_view value, Options& out, std::string&) {
  const std::size_t slash = value.find('/');
  return slash != std::string_view::npos &&
         parse_number<std::uint32_t>(value.substr(slash + 1), 1, shards_max, out.shard_count) &&
         parse_number<std::uint32_t>(value.substr(0, slash), 0, out.shard_count - 1, out.shard_index);
}
bool store_start_at(std::string_view value, Options& out, std::string&) {
  return parse_start_at(value, out.start_at_unix_ns);
}

using cli::duration_ns_max;

// --batch-wait: "auto", "off", or a window of at most BatchWait::fixed_max_us.
bool store_batch_wait(std::string_view value, Options& out, std::string&) {
  if (value == "auto") {
    out.batch_wait_auto = true;
    return true;
  }
  out.batch_wait_auto = false;
  if (value == "off") {
    out.batch_wait_us = 0;
    return true;
  }
  std::uint64_t ns = 0;
  if (!cli::parse_duration(value, ns) || ns > BatchWait::fixed_max_us * 1000) return false;
  out.batch_wait_us = std::uint32_t(ns / 1000);
  return true;
}

// --http2 and --http2-prior-knowledge: each with its scheme, and what
// HTTP/2 does otherwise (streams, not pipelining or Connection: close).
std::string check_http2(const Options& out, const cli::Given& given) {
  if (out.http2 && out.http2_prior_knowledge) return "--http2 and --http2-prior-knowledge are exclusive";
  if (out.http2 && out.target.scheme != Scheme::https) {
    return "--http2 negotiates h2 by TLS: give an https:// URL, or --http2-prior-knowledge for h2c on http://";
  }
  if (out.http2_prior_knowledge && out.target.scheme != Scheme::http) {
    return "--http2-prior-knowledge is h2c, without TLS: give an http:// URL, or --http2 for https://";
  }
  if (!out.speaks_http2()) {
    if (given.has("--max-streams")) return "--max-streams is for HTTP/2: add --http2 or --http2-prior-knowledge";
    return {};
  }
  if (out.pipeline > 1) return "HTTP/2 sends requests side by side on streams: use --max-streams, not --pipeline";
  return {};
}

// The client's flags: docs/CLIENT.md's table is written from this one.
const Flag flags[] = {
    {.name = "--connections", .short_name = 'c', .value = "N", .kind = Kind::number, .target = &Options::connections,
     .min = 1, .max = connections_max, .help = "connections in total"},
    {.name = "--threads", .short_name = 't', .value = "N", .kind = Kind::number, .target = &Options::threads,
     .min = 1, .max = threads_max, .help = "worker threads, each pinned to a CPU"},
    {.name = "--cpus", .value = "LIST", .kind = Kind::custom, .target = Flag::Store(cli::store_cpus<Options>),
     .accepts = "CPU numbers and ranges within the CPU mask, e.g. 1 or 2-3",
     .fallback = "the process's CPU mask, spread over the threads", .help = "CPUs for the threads"},
    {.name = "--duration", .short_name = 'd', .value = "T", .kind = Kind::duration, .target = &Options::duration_ns,
     .min = 1, .max = duration_ns_max, .help = "measured time, e.g. 500ms, 10s, 2m"},
    {.name = "--warmup", .short_name = 'w', .value = "T", .kind = Kind::duration, .target = &Options::warmup_ns,
     .min = 0, .max = duration_ns_max, .fallback = "3s; 0 with -n",
     .help = "run this long first, then discard every figure"},
    {.name = "--requests", .short_name = 'n', .value = "N", .kind = Kind::number, .target = &Options::requests,
     .min = 1, .max = UINT64_MAX / 2, .fallback = "none: run for -d",
     .help = "stop after N responses; no warm-up, and -d then bounds the time"},
    {.name = "--method", .short_name = 'm', .value = "M", .kind = Kind::custom, .target = Flag::Store(store_method),
     .accepts = "capital letters", .fallback = "GET", .help = "request method"},
    {.name = "--header", .short_name = 'H', .value = "'N: V'", .kind = Kind::custom,
     .target = Flag::Store(store_header), .accepts = "a name, a colon, a value; no line break",
     .help = "request header", .repeatable = true},
    {.name = "--body", .short_name = 'b', .value = "STRING", .kind = Kind::custom, .target = Flag::Store(store_body),
     .accepts = "any text", .help = "request body; Content-Length is set"},
    {.name = "--body-file", .value = "PATH", .kind = Kind::text, .target = &Options::body_file,
     .accepts = "a file of at most 64 MiB", .help = "request body from a file"},
    {.name = "--pipeline", .short_name = 'p', .value = "N", .kind = Kind::number, .target = &Options::pipeline,
     .min = 1, .max = pipeline_max, .help = "requests per connection sent together in one send"},
    {.name = "--rate", .short_name = 'R', .value = "N", .kind = Kind::number, .target = &Options::rate, .min = 1,
     .max = rate_per_s_max, .accepts = "requests per second", .fallback = "none: the closed model",
     .help = "open model: N requests/s in total, latency from intended send times (with -p: batches of -p at "
             "N/p a second, each request timed from its batch's)"},
    {.name = "--timeout", .value = "T", .kind = Kind::duration, .target = &Options::timeout_ns, .min = 1,
     .max = duration_ns_max, .help = "a response not complete by then is a timeout error"},
    {.name = "--expect-status", .value = "L", .kind = Kind::custom, .target = Flag::Store(store_expect_status),
     .accepts = "statuses 100 to 599, comma-separated, e.g. 200,204", .fallback = "any 2xx",
     .help = "accepted statuses"},
    {.name = "--expect-body", .value = "S", .kind = Kind::custom, .target = Flag::Store(store_expect_body),
     .accepts = "any text", .help = "every response body must equal S"},
    {.name = "--expect-body-file", .value = "PATH", .kind = Kind::text, .target = &Options::expect_body_file,
     .accepts = "a file of at most 64 MiB", .help = "every response body must equal this file's bytes"},
    {.name = "--resolve", .value = "H:P:ADDR", .kind = Kind::custom, .target = Flag::Store(store_resolve),
     .accepts = "host:port:address[,address...], e.g. example.com:443:127.0.0.1",
     .help = "connect to ADDR for host H and port P instead of asking the resolver, as curl's flag does",
     .repeatable = true},
    {.name = "--ipv4", .short_name = '4', .kind = Kind::toggle, .target = Flag::Store(store_ipv4),
     .help = "only IPv4 addresses of the host"},
    {.name = "--ipv6", .short_name = '6', .kind = Kind::toggle, .target = Flag::Store(store_ipv6),
     .help = "only IPv6 addresses of the host"},
    {.name = "--unix-socket", .value = "PATH", .kind = Kind::text, .target = &Options::unix_socket,
     .accepts = "a socket's path", .help = "connect to this Unix-domain socket; the URL gives only Host and path"},
    {.name = "--cacert", .value = "FILE", .kind = Kind::text, .target = &Options::cacert, .accepts = "a PEM file",
     .fallback = "the system's store", .help = "https: trust this CA"},
    {.name = "--insecure", .short_name = 'k', .kind = Kind::toggle, .target = &Options::insecure,
     .help = "https: do not verify the server's certificate or host name"},
    {.name = "--no-sessionid", .kind = Kind::toggle, .target = &Options::no_sessionid,
     .help = "https: never resume a TLS session: every handshake is a full one"},
    {.name = "--ciphers", .value = "LIST", .kind = Kind::text, .target = &Options::ciphers,
     .accepts = "OpenSSL's cipher list syntax, e.g. ECDHE-ECDSA-AES128-GCM-SHA256", .fallback = "OpenSSL's",
     .help = "https: the TLS 1.2 ciphers offered, in order of preference (curl's flag)"},
    {.name = "--tls13-ciphers", .value = "LIST", .kind = Kind::text, .target = &Options::tls13_ciphers,
     .accepts = "TLS 1.3 suite names, colon-separated, e.g. TLS_AES_128_GCM_SHA256", .fallback = "OpenSSL's",
     .help = "https: the TLS 1.3 cipher suites offered, in order of preference (curl's flag)"},
    {.name = "--http2", .kind = Kind::toggle, .target = &Options::http2,
     .help = "https: HTTP/2, offered by ALPN as h2; a server that does not choose it fails the run"},
    {.name = "--http2-prior-knowledge", .kind = Kind::toggle, .target = &Options::http2_prior_knowledge,
     .help = "http: HTTP/2 without TLS (h2c), the connection preface sent at once, as curl's flag does"},
    {.name = "--max-streams", .value = "N", .kind = Kind::number, .target = &Options::max_streams, .min = 1,
     .max = streams_max,
     .help = "HTTP/2: requests in flight per connection, each on its stream (h2load's -m); the server's "
             "SETTINGS_MAX_CONCURRENT_STREAMS can lower it"},
    {.name = "--requests-per-connection", .value = "N", .kind = Kind::number,
     .target = &Options::requests_per_connection, .min = 1, .max = UINT32_MAX, .fallback = "0: keep them",
     .help = "close each connection after N responses, its last request saying Connection: close (HTTP/2: "
             "its last stream ended, a GOAWAY), and open a new one"},
    {.name = "--connect-timeout", .value = "T", .kind = Kind::duration, .target = &Options::connect_timeout_ns,
     .min = 1, .max = duration_ns_max,
     .help = "a connect, with its TLS handshake, not done by then is a timeout error"},
    {.name = "--batch-wait", .value = "W", .kind = Kind::custom, .target = Flag::Store(store_batch_wait),
     .accepts = "auto, off, or a time up to 1ms, e.g. 20us", .fallback = "auto",
     .help = "io_uring on Linux 6.12+: how long a wait may hold a completion back to gather others; auto: 1% of "
             "the shortest round trip of the last 10 ms, at most 50us (docs/CLIENT.md#batching-wait)"},
    {.name = "--backend", .value = "B", .kind = Kind::custom, .target = Flag::Store(cli::store_backend<Options>),
     .accepts = "uring or epoll", .fallback = "uring", .help = "the system calls the connections are driven by"},
    {.name = "--uring", .value = "LIST", .kind = Kind::custom, .target = Flag::Store(cli::store_uring<Options>),
     .accepts = "[profile,]switches, as the server's --uring", .fallback = "all",
     .help = "the io_uring features used, e.g. 6.1,sqpoll"},
    {.name = "--json", .kind = Kind::toggle, .target = &Options::json,
     .help = "the report as one JSON object on stdout (text goes to stderr)"},
    {.name = "--hdr-out", .value = "FILE", .kind = Kind::text, .target = &Options::hdr_out,
     .accepts = "a file path", .help = "latency distribution in HdrHistogram's .hgrm text format"},
    {.name = "--hdr-log", .value = "FILE", .kind = Kind::text, .target = &Options::hdr_log,
     .accepts = "a file path", .help = "HdrHistogram interval log (V2 compressed) of the measured window"},
    {.name = "--server-pid", .value = "PID", .kind = Kind::number, .target = &Options::server_pid, .min = 1,
     .max = 1 << 30, .fallback = "none", .help = "also report the server's CPU time per request"},
    {.name = "--shard", .value = "I/N", .kind = Kind::custom, .target = Flag::Store(store_shard),
     .accepts = "I from 0 to N-1, N from 1 to 100000",
     .help = "run share I of N of the connections, the rate and -n: N processes, on as many machines, together "
             "run what one would"},
    {.name = "--threshold", .value = "EXPR", .kind = Kind::custom, .target = Flag::Store(store_threshold<Options>),
     .accepts = "e.g. p99<=5ms, p99.9<20ms, max<1s, mean<2ms, errors==0, status_5xx==0, rps>=100000, "
                "requests>=1000",
     .help = "pass or fail; one that fails makes the exit status 3", .repeatable = true},
    {.name = "--threshold-interval", .value = "T", .kind = Kind::custom,
     .target = Flag::Store(store_threshold_interval<Options>), .accepts = "whole seconds, 1s or more",
     .help = "also judge the latency, requests and rps thresholds on every interval of T of the window: one "
             "failing fails the run"},
    {.name = "--start-at", .value = "TIME", .kind = Kind::custom, .target = Flag::Store(store_start_at),
     .accepts = "Unix seconds, e.g. 1764850000.5, or +DURATION from now, e.g. +5s; at most a day ahead",
     .fallback = "now", .help = "start the warm-up at this wall-clock instant; hosts share a clock by NTP"},
    {.name = "--help", .kind = Kind::help, .help = "print this list and exit"},
    {.name = "--version", .kind = Kind::version, .help = "print the version and exit"},
};

// The URL, and the flags that depend on its scheme or on the backend;
// the target resolved, once, before any connection.
std::string finish_target(Options& out, const cli::Given& given) {
  if (given.operands.size() > 1) return "more than one URL given";
  out.url_defaulted = given.operands.empty();
  out.url = given.operands.empty() ? std::string(default_url) : std::string(given.operands[0]);
  if (const std::string error = parse_url(out.url, out.target); !error.empty()) return error;
  if (out.target.scheme != Scheme::https && (!out.cacert.empty() || out.insecure || out.no_sessionid)) {
    return (std::string(out.insecure ? "-k/--insecure" : out.no_sessionid ? "--no-sessionid" : "--cacert") +
                " is for https:// URLs");
  }
  if (given.has("--ciphers") || given.has("--tls13-ciphers")) {
    const char* flag = given.has("--ciphers") ? "--ciphers" : "--tls13-ciphers";
    if (out.target.scheme != Scheme::https) return std::string(flag) + " is for https:// URLs";
    if (std::string e = tls::cipher_lists_error(tls_config(out)); !e.empty()) return e;
  }
  if (const std::string error = check_http2(out, given); !error.empty()) return error;
  if (given.has("--batch-wait") && !out.batch_wait_auto && out.batch_wait_us > 0 &&
      out.backend != io::BackendKind::uring) {
    return "--batch-wait is io_uring's (min_wait_usec): the epoll backend has none";
  }
  // --uring min-wait, the server's fixed window, is that window here.
  if (out.wanted_features.min_wait && !given.has("--batch-wait")) {
    out.batch_wait_auto = false;
    out.batch_wait_us = uring::Ring::min_wait_us;
  }
  if (!out.unix_socket.empty() && (out.family != Family::any || !out.resolve.empty())) {
    return "--unix-socket connects to a path: no -4, -6 or --resolve with it";
  }
  // Once, before any connection: nothing on the request path resolves.
  return resolve_target(out.target, out.resolve, out.family, out.unix_socket);
}

// The request's body and the expected one, read from their files, and
// their placeholders, which must agree.
std::string finish_bodies(Options& out) {
  if (!out.body_file.empty()) {
    if (!out.body.empty()) return "--body and --body-file are exclusive";
    if (const std::string error = read_body_file("--body-file", out.body_file, out.body); !error.empty()) {
      return error;
    }
  }
  if (!out.expect_body_file.empty()) {
    if (out.check_body) return "--expect-body and --expect-body-file are exclusive";
    if (const std::string error = read_body_file("--expect-body-file", out.expect_body_file, out.expect_body);
        !error.empty()) {
      return error;
    }
    out.check_body = true;
  }
  // A response to HEAD has no body (RFC 9110 section 9.3.2): only an empty
  // one could match.
  if (out.method == "HEAD" && out.check_body && !out.expect_body.empty()) {
    return "a response to HEAD has no body: --expect-body and --expect-body-file cannot match it (an empty "
           "--expect-body '' checks that none came)";
  }
  {
    std::vector<std::string_view> request_fields{out.target.path, out.body};
    for (const std::string& h : out.headers) request_fields.emplace_back(h);
    if (const std::string error = find_placeholder(request_fields, out.placeholder); !error.empty()) return error;
    std::optional<Placeholder> expected;
    if (const std::string error = find_placeholder({out.expect_body}, expected); !error.empty()) {
      return "--expect-body: " + error;
    }
    if (expected && (!out.placeholder || expected->text != out.placeholder->text)) {
      return ("--expect-body's placeholder " + expected->text + " is not the request's (" +
                  (out.placeholder ? out.placeholder->text : std::string("none")) +
                  "): each response is checked against its own request's number");
    }
    if (const std::string error = check_serialized_size(out); !error.empty()) return error;
  }
  return {};
}

// How much load, spread how: requests, shards, threads, rate, pipeline.
std::string finish_load(Options& out, const cli::Given& given) {
  if (out.backend == io::BackendKind::epoll && given.has("--uring")) {
    return "--uring tunes the io_uring backend: it has no meaning with --backend epoll";
  }
  if (out.requests > 0) {
    if (given.has("--warmup") && out.warmup_ns > 0) return "-n/--requests counts every response: no --warmup with it";
    out.warmup_ns = 0;
  }
  if (out.threshold_interval_ns > 0 && out.thresholds.empty()) {
    return "--threshold-interval judges the --threshold expressions: give at least one";
  }
  if (out.shard_count > out.connections) {
    return ("--shard: " + std::to_string(out.shard_count) + " shards for " + std::to_string(out.connections) +
                " connections: every shard needs a connection");
  }
  if (out.threads > shard_share(out).connections) {
    return ("--threads (" + std::to_string(out.threads) + ") exceeds this process's connections (" +
                std::to_string(shard_share(out).connections) + "): every thread needs a connection");
  }
  if (out.rate > 0 && out.rate < out.threads) {
    return ("--rate (" + std::to_string(out.rate) + "/s) is below --threads (" + std::to_string(out.threads) +
                "): every thread needs at least 1 request/s");
  }
  if (out.rate > 0 && out.pipeline > 1) {
    // Batches of -p are paced, at -R / -p a second: the schedule is exact
    // only if that is whole.
    if (out.rate % out.pipeline != 0) {
      return ("--rate (" + std::to_string(out.rate) + "/s) with --pipeline " + std::to_string(out.pipeline) +
                  ": the batches' rate (rate / pipeline) must be whole; make --rate a multiple of --pipeline");
    }
    if (out.rate / out.pipeline < out.threads) {
      return ("--rate / --pipeline (" + std::to_string(out.rate / out.pipeline) +
                  " batches/s) is below --threads: every thread needs at least one batch a second");
    }
  }
  if (out.requests > 0 && out.shard_count > 1 && out.requests < out.connections) {
    return ("-n (" + std::to_string(out.requests) + ") with --shard must be at least --connections (" +
                std::to_string(out.connections) + ")");
  }
  if (out.requests > 0 && out.requests < out.connections) {
    // Not impossible, but the spare connections would only ever idle.
    out.connections = std::uint32_t(out.requests);
    if (out.threads > out.connections) out.threads = out.connections;
  }
  return {};
}

// The checks that involve several flags or the URL, after each flag was
// parsed alone.
std::string finish(Options& out, const cli::Given& given) {
  out.duration_given = given.has("--duration");
  if (std::string e = finish_target(out, given); !e.empty()) return e;
  if (std::string e = finish_bodies(out); !e.empty()) return e;
  if (std::string e = finish_load(out, given); !e.empty()) return e;
  // The CPUs this process may run on (taskset, a cgroup's cpuset) are the
  // default, spread over the threads, and the only ones --cpus may name.
  const std::vector<int> allowed = net::allowed_cpus();
  if (const std::string e = net::cpus_outside(out.cpus, allowed); !e.empty()) return "--cpus: " + e;
  if (out.cpus.empty()) {
    for (std::uint32_t i = 0; i < out.threads; ++i) out.cpus.push_back(allowed[i % allowed.size()]);
  } else if (out.cpus.size() < out.threads) {
    return "--cpus lists fewer CPUs than --threads";
  }
  if (out.url_defaulted) std::fprintf(stderr, "client: no URL given: loading %s\n", default_url);
  return {};
}

const cli::Program<Options> program{
    .name = "client",
    .synopsis = "usage: client [options] [URL]\n"
                "       client merge [--json] [--hdr-out FILE] REPORT.json...   (see client merge --help)\n"
                "URL: http[s]://HOST[:PORT]/PATH (default http://127.0.0.1:8080/plaintext)\n",
    .notes = "A placeholder {seq:A..B} or {rand:A..B} in the URL's path, a header, the body or the expected\n"
             "body makes the requests vary: request i carries the i-th number from A to B (seq: in order,\n"
             "rand: in a fixed shuffled order), cycled; every request is serialized once at start.\n",
    .flags = flags,
    .takes_operands = true,
    .version = "ringhttp client " RINGHTTP_VERSION,
    .finish = finish,
};

}  // namespace

const cli::Program<Options>& command_line() { return program; }

ParseOutcome parse_options(int argc, char** argv, Options& out) { return cli::parse(program, argc, argv, out); }

}  // namespace ringhttp::client
