#include "client/options.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string_view>

#include "client/request.hpp"
#include "core/net/cpu.hpp"
#include "core/text/parse_number.hpp"
#include "ringhttp_config.hpp"

namespace ringhttp::client {
namespace {

using text::parse_number;

constexpr const char* usage_text =
    "usage: client [options] [URL]      (URL: http[s]://HOST[:PORT]/PATH; default http://127.0.0.1:8080/plaintext)\n"
    "       client merge [--json] [--hdr-out FILE] REPORT.json...   (see client merge --help)\n"
    "  -c, --connections N     connections in total (default 10)\n"
    "  -t, --threads N         worker threads, each pinned to a CPU (default 1)\n"
    "      --cpus LIST         CPUs for the threads, within the CPU mask, e.g. 1 or 2-3\n"
    "                          (default: the process's CPU mask, spread over the threads)\n"
    "  -d, --duration T        measured time: 500ms, 10s, 2m (default 10s)\n"
    "  -w, --warmup T          run this long first, then discard every figure (default 3s; 0 with -n)\n"
    "  -n, --requests N        stop after N responses (no warm-up; -d then bounds the time)\n"
    "  -m, --method M          request method (default GET)\n"
    "  -H, --header 'N: V'     request header, repeatable\n"
    "  -b, --body STRING       request body (Content-Length is set)\n"
    "      --body-file PATH    request body from a file\n"
    "  -p, --pipeline N        requests per connection sent together in one send (default 1)\n"
    "  -R, --rate N            open model: N requests/s in total, latency from intended send times\n"
    "                          (with -p: batches of -p at N/p a second, each request timed from its batch's)\n"
    "      --timeout T         a response not complete by then is a timeout error (default 2s)\n"
    "      --expect-status L   accepted statuses, e.g. 200,204 (default any 2xx)\n"
    "      --expect-body S     every response body must equal S\n"
    "      --expect-body-file PATH  every response body must equal this file's bytes\n"
    "  A placeholder {seq:A..B} or {rand:A..B} in the URL's path, a header, the body or the expected\n"
    "  body makes the requests vary: request i carries the i-th number from A to B (seq: in order,\n"
    "  rand: in a fixed shuffled order), cycled; every request is serialized once at start.\n"
    "      --resolve H:P:ADDR  connect to ADDR (an IP address, or several, comma-separated) for host H and\n"
    "                          port P instead of asking the resolver (curl's flag), repeatable\n"
    "  -4, --ipv4 / -6, --ipv6 only IPv4 / IPv6 addresses of the host\n"
    "      --unix-socket PATH  connect to this Unix-domain socket; the URL gives only the Host and path\n"
    "      --cacert FILE       https: trust this CA (PEM) instead of the system's store\n"
    "  -k, --insecure          https: do not verify the server's certificate or host name\n"
    "      --no-sessionid      https: never resume a TLS session: every handshake is a full one\n"
    "      --requests-per-connection N  close each connection after N responses (its last request\n"
    "                          says Connection: close) and open a new one (default 0: keep them)\n"
    "      --connect-timeout T a connect (and its TLS handshake) not done by then is a timeout error\n"
    "                          (default 2s)\n"
    "      --backend B         uring (default) or epoll: the system calls the connections are driven by\n"
    "      --uring LIST        [profile,]switches: 5.10 ... 6.6, 6.10, 6.12 or all, then no-FEATURE, sqpoll, min-wait,\n"
    "                          no-sqarray, fixed-files, recv-bundle, incremental-buffers\n"
    "      --json              the report as one JSON object on stdout (text goes to stderr)\n"
    "      --hdr-out FILE      latency distribution in HdrHistogram's .hgrm text format\n"
    "      --hdr-log FILE      HdrHistogram interval log (V2 compressed) of the measured window\n"
    "      --server-pid PID    also report the server's CPU time per request\n"
    "      --shard I/N         run share I (0 to N-1) of N of the connections, the rate and -n: N\n"
    "                          processes, on as many machines, together run what one would\n"
    "      --threshold EXPR    pass/fail, repeatable: p99<=5ms, p99.9<20ms, max<1s, mean<2ms, errors==0,\n"
    "                          status_5xx==0, rps>=100000, requests>=1000; one that fails makes the exit\n"
    "                          status 3\n"
    "      --threshold-interval T  also judge the latency, requests and rps thresholds on every\n"
    "                          interval of T (whole seconds, e.g. 1s) of the window: one failing fails the run\n"
    "      --start-at TIME     start the warm-up at this wall-clock instant: Unix seconds (e.g.\n"
    "                          1764850000.5) or +DURATION from now (e.g. +5s); hosts share a clock (NTP)\n"
    "      --help, --version\n";

constexpr std::uint32_t connections_max = 1'000'000;
constexpr std::uint32_t threads_max = 1024;
constexpr std::uint32_t pipeline_max = 1024;
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

// Short flags and the long names they stand for; all of them take a value.
struct Alias {
  char short_name;
  const char* long_name;
};
constexpr Alias aliases[] = {
    {'c', "--connections"}, {'t', "--threads"}, {'d', "--duration"}, {'w', "--warmup"},   {'n', "--requests"},
    {'m', "--method"},      {'H', "--header"},  {'b', "--body"},     {'p', "--pipeline"}, {'R', "--rate"},
    {'4', "--ipv4"},        {'6', "--ipv6"},    {'k', "--insecure"},
};

constexpr std::string_view boolean_flags[] = {"--json",  "--help",     "--version",     "--ipv4",
                                              "--ipv6", "--insecure", "--no-sessionid"};

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

bool parse_duration(std::string_view text, std::uint64_t& out_ns) {
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) return false;
  const std::string_view unit(end, std::size_t(text.data() + text.size() - end));
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1'000'000'000;
  } else if (unit == "ms") {
    scale = 1'000'000;
  } else if (unit == "us") {
    scale = 1'000;
  } else if (unit == "m") {
    scale = 60'000'000'000;
  } else if (unit == "h") {
    scale = 3'600'000'000'000;
  } else {
    return false;
  }
  constexpr std::uint64_t duration_ns_max = 366ull * 24 * 3'600'000'000'000;  // a year: beyond is a typo
  if (number > duration_ns_max / scale) return false;
  out_ns = number * scale;
  return true;
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

ParseOutcome parse_options(int argc, char** argv, Options& out) {
  // One line says what is wrong; the whole usage would bury it.
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "client: %s\n(client --help lists the options)\n", message.c_str());
    return ParseOutcome::exit_usage;
  };
  std::vector<std::string_view> positional;
  bool warmup_given = false;
  std::string body_file;
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    std::string_view value;
    bool has_value = false;
    if (flag.size() >= 2 && flag[0] == '-' && flag[1] != '-') {
      std::string_view rest = flag.substr(2);
      bool known = false;
      for (const Alias& a : aliases) {
        if (flag[1] == a.short_name) {
          flag = a.long_name;
          known = true;
          break;
        }
      }
      if (!known) {
        if (flag == "-h")
          flag = "--help";
        else
          return fail("unknown option " + std::string(argv[i]));
      }
      if (!rest.empty()) {
        value = rest;
        has_value = true;
      }
    } else if (flag.starts_with("--")) {
      if (const std::size_t eq = flag.find('='); eq != std::string_view::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
        has_value = true;
      }
    } else {
      positional.push_back(flag);
      continue;
    }
    bool is_boolean = false;
    for (const std::string_view b : boolean_flags) is_boolean = is_boolean || flag == b;
    if (flag == "--help") {
      std::fputs(usage_text, stdout);
      return ParseOutcome::exit_ok;
    }
    if (flag == "--version") {
      std::printf("ringhttp client %s\n", RINGHTTP_VERSION);
      return ParseOutcome::exit_ok;
    }
    if (is_boolean) {
      if (has_value) return fail(std::string(flag) + " takes no value");
      if (flag == "--json") {
        out.json = true;
      } else if (flag == "--insecure") {
        out.insecure = true;
      } else if (flag == "--no-sessionid") {
        out.no_sessionid = true;
      } else {
        const Family family = flag == "--ipv4" ? Family::ipv4 : Family::ipv6;
        if (out.family != Family::any && out.family != family) return fail("-4 and -6 are exclusive");
        out.family = family;
      }
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return fail("missing value for " + std::string(flag));
      value = argv[++i];
    }
    bool ok = true;
    if (flag == "--connections") {
      ok = parse_number<std::uint32_t>(value, 1, connections_max, out.connections);
      if (!ok && value == "0") return fail("--connections must be at least 1");
    } else if (flag == "--threads") {
      ok = parse_number<std::uint32_t>(value, 1, threads_max, out.threads);
    } else if (flag == "--cpus") {
      std::string error;
      if (!net::parse_cpu_list(value, out.cpus, error)) return fail(error);
    } else if (flag == "--duration") {
      ok = parse_duration(value, out.duration_ns) && out.duration_ns > 0;
      out.duration_given = true;
    } else if (flag == "--warmup") {
      ok = parse_duration(value, out.warmup_ns);
      warmup_given = true;
    } else if (flag == "--requests") {
      ok = parse_number<std::uint64_t>(value, 1, UINT64_MAX / 2, out.requests);
    } else if (flag == "--method") {
      out.method = std::string(value);
      for (const char c : out.method) ok = ok && c >= 'A' && c <= 'Z';
      ok = ok && !out.method.empty();
    } else if (flag == "--header") {
      const std::size_t colon = value.find(':');
      ok = colon != std::string_view::npos && colon > 0 && value.find_first_of("\r\n") == std::string_view::npos;
      if (ok) out.headers.emplace_back(value);
    } else if (flag == "--body") {
      out.body = std::string(value);
    } else if (flag == "--body-file") {
      body_file = std::string(value);
    } else if (flag == "--pipeline") {
      ok = parse_number<std::uint32_t>(value, 1, pipeline_max, out.pipeline);
    } else if (flag == "--rate") {
      ok = parse_number<std::uint64_t>(value, 1, rate_per_s_max, out.rate);
    } else if (flag == "--timeout") {
      ok = parse_duration(value, out.timeout_ns) && out.timeout_ns > 0;
    } else if (flag == "--expect-status") {
      ok = parse_status_list(value, out.expect_status);
    } else if (flag == "--expect-body") {
      out.expect_body = std::string(value);
      out.check_body = true;
    } else if (flag == "--expect-body-file") {
      out.expect_body_file = std::string(value);
    } else if (flag == "--uring") {
      std::string error;
      if (!uring::parse_switches(value, out.wanted_features, error)) return fail(error);
      out.uring_text = std::string(value);
      out.uring_given = true;
    } else if (flag == "--backend") {
      if (!io::parse_backend(value, out.backend)) {
        return fail("--backend: expected uring or epoll, got '" + std::string(value) + "'");
      }
    } else if (flag == "--hdr-out") {
      out.hdr_out = std::string(value);
      ok = !out.hdr_out.empty();
    } else if (flag == "--hdr-log") {
      out.hdr_log = std::string(value);
      ok = !out.hdr_log.empty();
    } else if (flag == "--server-pid") {
      ok = parse_number<int>(value, 1, 1 << 30, out.server_pid);
    } else if (flag == "--shard") {
      const std::size_t slash = value.find('/');
      ok = slash != std::string_view::npos &&
           parse_number<std::uint32_t>(value.substr(slash + 1), 1, shards_max, out.shard_count) &&
           parse_number<std::uint32_t>(value.substr(0, slash), 0, out.shard_count - 1, out.shard_index);
    } else if (flag == "--threshold") {
      std::string error;
      std::optional<Threshold> t = parse_threshold(value, error);
      if (!t) return fail(error);
      out.thresholds.push_back(std::move(*t));
    } else if (flag == "--threshold-interval") {
      ok = parse_duration(value, out.threshold_interval_ns) && out.threshold_interval_ns >= 1'000'000'000 &&
           out.threshold_interval_ns % 1'000'000'000 == 0;
    } else if (flag == "--start-at") {
      ok = parse_start_at(value, out.start_at_unix_ns);
    } else if (flag == "--resolve") {
      ResolveOverride r;
      if (const std::string e = parse_resolve(value, r); !e.empty()) return fail(e);
      out.resolve.push_back(std::move(r));
    } else if (flag == "--unix-socket") {
      out.unix_socket = std::string(value);
      ok = !out.unix_socket.empty();
    } else if (flag == "--cacert") {
      out.cacert = std::string(value);
      ok = !out.cacert.empty();
    } else if (flag == "--requests-per-connection") {
      ok = parse_number<std::uint32_t>(value, 1, UINT32_MAX, out.requests_per_connection);
    } else if (flag == "--connect-timeout") {
      ok = parse_duration(value, out.connect_timeout_ns) && out.connect_timeout_ns > 0;
    } else {
      return fail("unknown option " + std::string(flag));
    }
    if (!ok) return fail("bad value '" + std::string(value) + "' for " + std::string(flag));
  }

  if (positional.size() > 1) return fail("more than one URL given");
  out.url_defaulted = positional.empty();
  out.url = positional.empty() ? std::string(default_url) : std::string(positional[0]);
  if (const std::string error = parse_url(out.url, out.target); !error.empty()) return fail(error);
  if (out.target.scheme != Scheme::https && (!out.cacert.empty() || out.insecure || out.no_sessionid)) {
    return fail(std::string(out.insecure ? "-k/--insecure" : out.no_sessionid ? "--no-sessionid" : "--cacert") +
                " is for https:// URLs");
  }
  if (!out.unix_socket.empty() && (out.family != Family::any || !out.resolve.empty())) {
    return fail("--unix-socket connects to a path: no -4, -6 or --resolve with it");
  }
  // Once, before any connection: nothing on the request path resolves.
  if (const std::string error = resolve_target(out.target, out.resolve, out.family, out.unix_socket);
      !error.empty()) {
    return fail(error);
  }
  if (!body_file.empty()) {
    if (!out.body.empty()) return fail("--body and --body-file are exclusive");
    if (const std::string error = read_body_file("--body-file", body_file, out.body); !error.empty()) {
      return fail(error);
    }
  }
  if (!out.expect_body_file.empty()) {
    if (out.check_body) return fail("--expect-body and --expect-body-file are exclusive");
    if (const std::string error = read_body_file("--expect-body-file", out.expect_body_file, out.expect_body);
        !error.empty()) {
      return fail(error);
    }
    out.check_body = true;
  }
  {
    std::vector<std::string_view> request_fields{out.target.path, out.body};
    for (const std::string& h : out.headers) request_fields.emplace_back(h);
    if (const std::string error = find_placeholder(request_fields, out.placeholder); !error.empty()) return fail(error);
    std::optional<Placeholder> expected;
    if (const std::string error = find_placeholder({out.expect_body}, expected); !error.empty()) {
      return fail("--expect-body: " + error);
    }
    if (expected && (!out.placeholder || expected->text != out.placeholder->text)) {
      return fail("--expect-body's placeholder " + expected->text + " is not the request's (" +
                  (out.placeholder ? out.placeholder->text : std::string("none")) +
                  "): each response is checked against its own request's number");
    }
    if (const std::string error = check_serialized_size(out); !error.empty()) return fail(error);
  }
  if (out.backend == io::BackendKind::epoll && out.uring_given) {
    return fail("--uring tunes the io_uring backend: it has no meaning with --backend epoll");
  }
  if (out.requests > 0) {
    if (warmup_given && out.warmup_ns > 0) return fail("-n/--requests counts every response: no --warmup with it");
    out.warmup_ns = 0;
  }
  if (out.threshold_interval_ns > 0 && out.thresholds.empty()) {
    return fail("--threshold-interval judges the --threshold expressions: give at least one");
  }
  if (out.shard_count > out.connections) {
    return fail("--shard: " + std::to_string(out.shard_count) + " shards for " + std::to_string(out.connections) +
                " connections: every shard needs a connection");
  }
  if (out.threads > shard_share(out).connections) {
    return fail("--threads (" + std::to_string(out.threads) + ") exceeds this process's connections (" +
                std::to_string(shard_share(out).connections) + "): every thread needs a connection");
  }
  if (out.rate > 0 && out.rate < out.threads) {
    return fail("--rate (" + std::to_string(out.rate) + "/s) is below --threads (" + std::to_string(out.threads) +
                "): every thread needs at least 1 request/s");
  }
  if (out.rate > 0 && out.pipeline > 1) {
    // Batches of -p are paced, at -R / -p a second: the schedule is exact
    // only if that is whole.
    if (out.rate % out.pipeline != 0) {
      return fail("--rate (" + std::to_string(out.rate) + "/s) with --pipeline " + std::to_string(out.pipeline) +
                  ": the batches' rate (rate / pipeline) must be whole; make --rate a multiple of --pipeline");
    }
    if (out.rate / out.pipeline < out.threads) {
      return fail("--rate / --pipeline (" + std::to_string(out.rate / out.pipeline) +
                  " batches/s) is below --threads: every thread needs at least one batch a second");
    }
  }
  if (out.requests > 0 && out.shard_count > 1 && out.requests < out.connections) {
    return fail("-n (" + std::to_string(out.requests) + ") with --shard must be at least --connections (" +
                std::to_string(out.connections) + ")");
  }
  if (out.requests > 0 && out.requests < out.connections) {
    // Not impossible, but the spare connections would only ever idle.
    out.connections = std::uint32_t(out.requests);
    if (out.threads > out.connections) out.threads = out.connections;
  }
  // The CPUs this process may run on (taskset, a cgroup's cpuset) are the
  // default, spread over the threads, and the only ones --cpus may name.
  const std::vector<int> allowed = net::allowed_cpus();
  if (const std::string e = net::cpus_outside(out.cpus, allowed); !e.empty()) return fail("--cpus: " + e);
  if (out.cpus.empty()) {
    for (std::uint32_t i = 0; i < out.threads; ++i) out.cpus.push_back(allowed[i % allowed.size()]);
  } else if (out.cpus.size() < out.threads) {
    return fail("--cpus lists fewer CPUs than --threads");
  }
  if (out.url_defaulted) std::fprintf(stderr, "client: no URL given: loading %s\n", default_url);
  return ParseOutcome::run;
}

}  // namespace ringhttp::client
