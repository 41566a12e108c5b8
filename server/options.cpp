#include "server/options.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <libpq-fe.h>

#include "core/cli/flags.hpp"
#include "core/cli/shared_flags.hpp"

#include "core/http/request_parser.hpp"
#include "core/net/cpu.hpp"
#include "core/text/parse_number.hpp"
#include "ringhttp_config.hpp"
#include "server/middleware/rate_limiter.hpp"

namespace ringhttp::server {
namespace {

bool parse_send_mode(std::string_view text, SendMode& out) {
  for (const SendMode mode : {SendMode::writev, SendMode::sendmsg, SendMode::zc}) {
    if (text == send_mode_name(mode)) {
      out = mode;
      return true;
    }
  }
  return false;
}

// "https://a.example,http://localhost:3000": each a scheme, "://", a host
// and an optional port, with no path; browsers send exactly that form.
bool parse_origins(std::string_view text, std::vector<std::string>& out, std::string& error) {
  out.clear();
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view origin = text.substr(0, comma);
    const std::size_t scheme_end = origin.find("://");
    const bool ok = scheme_end != std::string_view::npos && scheme_end > 0 && origin.size() > scheme_end + 3 &&
                    origin.find('/', scheme_end + 3) == std::string_view::npos &&
                    origin.find_first_of(" \t\r\n") == std::string_view::npos;
    if (!ok) {
      error = "bad origin '" + std::string(origin) + "' in --cors-origin (scheme://host[:port], no path)";
      return false;
    }
    out.emplace_back(origin);
    if (comma == std::string_view::npos) return true;
    text = text.substr(comma + 1);
  }
}

}  // namespace

bool load_jwt_secret(const Options& options, std::string& secret, std::string& error) {
  secret.clear();
  if (!options.jwt_secret_file.empty()) {
    std::FILE* f = std::fopen(options.jwt_secret_file.c_str(), "rb");
    if (f == nullptr) {
      error = "cannot read --jwt-secret-file " + options.jwt_secret_file + ": " + std::strerror(errno);
      return false;
    }
    char buf[jwt_secret_bytes_max + 2];
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    if (n > jwt_secret_bytes_max + 1) {  // room for the newline an editor adds
      error = "--jwt-secret-file " + options.jwt_secret_file + " is longer than " +
              std::to_string(jwt_secret_bytes_max) + " bytes";
      return false;
    }
    secret.assign(buf, n);
    if (secret.ends_with('\n')) secret.pop_back();
    if (secret.ends_with('\r')) secret.pop_back();
    if (secret.empty() || secret.size() > jwt_secret_bytes_max) {
      error = "--jwt-secret-file " + options.jwt_secret_file + (secret.empty() ? " is empty" : " is too long");
      return false;
    }
    return true;
  }
  if (const char* env = std::getenv(jwt_secret_env); env != nullptr) {
    secret = env;
    if (secret.empty() || secret.size() > jwt_secret_bytes_max) {
      error = std::string("$") + jwt_secret_env + (secret.empty() ? " is empty" : " is too long");
      return false;
    }
  }
  return true;
}

std::string check_db_url(const std::string& url) {
  if (url.empty()) return "empty connection string";
  char* parse_error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &parse_error);
  if (options == nullptr) {
    std::string e = parse_error != nullptr ? parse_error : "cannot parse (out of memory)";
    PQfreemem(parse_error);
    while (!e.empty() && e.back() == '\n') e.pop_back();
    return e;
  }
  std::string host, hostaddr;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (std::strcmp(o->keyword, "host") == 0) host = o->val;
    if (std::strcmp(o->keyword, "hostaddr") == 0) hostaddr = o->val;
  }
  PQconninfoFree(options);
  if (!hostaddr.empty()) return {};
  // host may list several, comma-separated: each must need no lookup.
  std::string_view rest = host;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string h(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    net::Address a;
    if (h.empty() || h.front() == '/' || h.front() == '@' || net::parse_address(h, 0, a)) continue;
    return "host '" + h + "' is a name: give an IP address (e.g. 127.0.0.1) or a socket directory, since a "
           "name would be resolved by a blocking lookup on a shard's thread";
  }
  return {};
}

const char* send_mode_name(SendMode mode) {
  switch (mode) {
    case SendMode::writev: return "writev";
    case SendMode::sendmsg: return "sendmsg";
    case SendMode::zc: return "zc";
  }
  return "unknown";
}

namespace {

using Flag = cli::Flag<Options>;
using cli::Kind;

// The custom flags' checks: each stores its value or says why not.
bool store_send(std::string_view value, Options& out, std::string&) { return parse_send_mode(value, out.send_mode); }
bool store_origins(std::string_view value, Options& out, std::string& error) {
  return parse_origins(value, out.cors_origins, error);
}
bool store_metrics_address(std::string_view value, Options& out, std::string& error) {
  net::Address address;
  if (!net::parse_endpoint(value, address)) {
    error = "bad --metrics-address '" + std::string(value) +
            "' (ADDR:PORT: an IPv4 literal or a bracketed IPv6 one, e.g. 127.0.0.1:9100 or [::1]:9100)";
    return false;
  }
  out.metrics_address = address;
  return true;
}
bool store_db(std::string_view value, Options& out, std::string& error) {
  out.db_url = std::string(value);
  if (const std::string e = check_db_url(out.db_url); !e.empty()) {
    error = "--db: " + e;
    return false;
  }
  return true;
}
bool store_tickets(std::string_view value, Options& out, std::string&) {
  out.tls_tickets = value == "on";
  return value == "on" || value == "off";
}
bool store_tls_min_version(std::string_view value, Options& out, std::string&) {
  out.tls_min_version = std::string(value);
  return value == "1.2" || value == "1.3";
}

constexpr std::uint64_t timeout_ms_max = 3'600'000;  // an hour: longer is a typo, not a timeout

// The server's flags: docs/SERVER.md's table is written from this one.
const Flag flags[] = {
    {.name = "--address", .value = "ADDR", .kind = Kind::text, .target = &Options::host,
     .accepts = "an IPv4 or IPv6 literal", .help = "address to listen on"},
    {.name = "--port", .value = "N", .kind = Kind::number, .target = &Options::port, .min = 0, .max = 65535,
     .help = "TCP port; 0 picks a free port, shared by all shards"},
    {.name = "--shards", .value = "N", .kind = Kind::number, .target = &Options::shards, .min = 1, .max = 1024,
     .accepts = ", at most as many as --cpus names", .fallback = "one per CPU of the CPU mask",
     .help = "shard threads"},
    {.name = "--cpus", .value = "LIST", .kind = Kind::custom, .target = Flag::Store(cli::store_cpus<Options>),
     .accepts = "CPU numbers and ranges within the CPU mask, e.g. 0,1 or 0-3", .fallback = "the mask's CPUs in order",
     .help = "CPUs to pin the shards to"},
    {.name = "--uring", .value = "LIST", .kind = Kind::custom, .target = Flag::Store(cli::store_uring<Options>),
     .accepts = "[profile,]switches: profile 5.10, 5.19, 6.0, 6.1, 6.6, 6.10, 6.12 or all; then no-FEATURE, sqpoll, "
                "min-wait, no-sqarray, fixed-files, recv-bundle, incremental-buffers",
     .fallback = "all", .help = "the io_uring features used, e.g. 5.19,sqpoll"},
    {.name = "--send", .value = "MODE", .kind = Kind::custom, .target = Flag::Store(store_send),
     .accepts = "writev, sendmsg or zc", .fallback = "sendmsg",
     .help = "how responses are sent; zc is IORING_OP_SENDMSG_ZC"},
    {.name = "--backend", .value = "B", .kind = Kind::custom, .target = Flag::Store(cli::store_backend<Options>),
     .accepts = "uring or epoll", .fallback = "uring", .help = "the system calls the shards are driven by"},
    {.name = "--request-line-bytes-max", .value = "N", .kind = Kind::number, .target = &Options::request_line_bytes_max,
     .min = 256, .max = http::RequestParser::request_line_bytes_limit, .accepts = "bytes",
     .help = "request line limit (method, target, version, CRLF), 414 beyond"},
    {.name = "--header-bytes-max", .value = "N", .kind = Kind::number, .target = &Options::header_bytes_max,
     .min = 256, .max = 1 << 20, .accepts = "bytes", .help = "request line and header section limit, 431 beyond"},
    {.name = "--body-bytes-max", .value = "N", .kind = Kind::number, .target = &Options::body_bytes_max, .min = 0,
     .max = std::uint64_t(1) << 40, .accepts = "bytes", .help = "request body limit, 413 beyond"},
    {.name = "--header-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::header_timeout_ms,
     .min = 1, .max = timeout_ms_max, .help = "time to receive a whole header section, then 408 and close"},
    {.name = "--idle-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::idle_timeout_ms, .min = 1,
     .max = timeout_ms_max, .help = "keep-alive idle time before the server closes"},
    {.name = "--body-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::body_timeout_ms, .min = 1,
     .max = timeout_ms_max,
     .help = "time allowed for a request body, then 408 and close; extended by --body-min-rate"},
    {.name = "--body-min-rate", .value = "N", .kind = Kind::number, .target = &Options::body_min_rate, .min = 1,
     .max = 1'000'000'000, .accepts = "bytes per second",
     .help = "the body's deadline moves 1 s later per N body bytes received"},
    {.name = "--send-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::send_timeout_ms, .min = 1,
     .max = timeout_ms_max, .help = "unsent output making no progress this long: the connection is dropped"},
    {.name = "--connections-max", .value = "N", .kind = Kind::number, .target = &Options::connections_max, .min = 1,
     .max = 1 << 20, .accepts = "per shard", .help = "connections per shard"},
    {.name = "--output-bytes-max", .value = "N", .kind = Kind::number, .target = &Options::output_bytes_max,
     .min = 4096, .max = 1 << 30, .accepts = "bytes",
     .help = "unsent bytes per connection before the server stops reading it"},
    {.name = "--output-blocks", .value = "N", .kind = Kind::number, .target = &Options::output_blocks, .min = 0,
     .max = 1 << 20, .accepts = "per shard, at most --connections-max made",
     .fallback = "0: as many as --connections-max",
     .help = "connections per shard with responses queued or in flight at once; the others wait their turn, "
             "input paused"},
    {.name = "--shutdown-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::shutdown_timeout_ms,
     .min = 0, .max = timeout_ms_max, .help = "on SIGTERM or SIGINT, how long in-flight responses may take"},
    {.name = "--ring-entries", .value = "N", .kind = Kind::number, .target = &Options::ring_entries, .min = 1,
     .max = 32768, .help = "io_uring submission queue entries per shard (tiny values are survived)"},
    {.name = "--jwt-secret-file", .value = "PATH", .kind = Kind::text, .target = &Options::jwt_secret_file,
     .accepts = "a file of at most 4096 bytes", .fallback = "$RINGHTTP_JWT_SECRET",
     .help = "HS256 secret for the routes behind a bearer token (GET /profile); with neither, they answer 503"},
    {.name = "--jwt-allow-no-exp", .kind = Kind::toggle, .target = &Options::jwt_allow_no_exp,
     .help = "accept bearer tokens without exp (else refused, 401)"},
    {.name = "--cors-origin", .value = "LIST", .kind = Kind::custom, .target = Flag::Store(store_origins),
     .accepts = "comma-separated scheme://host[:port], no path", .fallback = "none: no cross-origin request is allowed",
     .help = "the exact origins CORS allows"},
    {.name = "--cors-max-age", .value = "N", .kind = Kind::number, .target = &Options::cors_max_age_s, .min = 0,
     .max = 86'400, .accepts = "seconds", .help = "seconds a browser may cache a preflight's answer"},
    {.name = "--rate-limit", .value = "N", .kind = Kind::number, .target = &Options::rate_limit_requests, .min = 1,
     .max = 1'000'000'000, .accepts = "requests per window",
     .help = "requests per window per client (an IPv4 address or an IPv6 /64), per shard"},
    {.name = "--rate-window-ms", .value = "N", .kind = Kind::number, .target = &Options::rate_limit_window_ms,
     .min = 1, .max = 86'400'000, .help = "the window the rate limit refills over, continuously"},
    {.name = "--rate-limit-addresses", .value = "N", .kind = Kind::number, .target = &Options::rate_limit_addresses,
     .min = 1, .max = rate_limit_addresses_max_limit, .accepts = "per shard",
     .help = "clients each shard's rate limiter tracks"},
    {.name = "--metrics-address", .value = "A:P", .kind = Kind::custom, .target = Flag::Store(store_metrics_address),
     .accepts = "ADDR:PORT, e.g. 127.0.0.1:9100 or [::1]:9100; port 0 picks one",
     .fallback = "on the main port, to anyone who reaches it", .help = "serve GET /metrics on this address only"},
    {.name = "--metrics-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::metrics_timeout_ms,
     .min = 1, .max = timeout_ms_max,
     .help = "time a metrics client has to send its request, then to read the answer"},
    {.name = "--db", .value = "URL", .kind = Kind::custom, .target = Flag::Store(store_db),
     .accepts = "a libpq URL or key=value string whose host is an IP address or a socket directory, e.g. "
                "postgresql://user@127.0.0.1:5432/db",
     .fallback = "none: the /db routes answer 503", .help = "PostgreSQL for the /db routes"},
    {.name = "--db-pool", .value = "N", .kind = Kind::number, .target = &Options::db_pool, .min = 1, .max = 64,
     .accepts = "per shard", .help = "database connections per shard, in pipeline mode"},
    {.name = "--db-queue", .value = "N", .kind = Kind::number, .target = &Options::db_queue, .min = 1,
     .max = 1 << 16, .accepts = "per shard",
     .help = "database queries in flight per shard, an equal share on each of its connections; beyond, 503 at once"},
    {.name = "--db-timeout-ms", .value = "N", .kind = Kind::number, .target = &Options::db_timeout_ms, .min = 1,
     .max = timeout_ms_max,
     .help = "a query's deadline: past it its connection is closed, every query on it answered 503, and a new "
             "one made"},
    {.name = "--tls-cert", .value = "FILE", .kind = Kind::text, .target = &Options::tls_cert_file,
     .accepts = "a PEM file", .help = "serve HTTPS: the certificate, its chain after it"},
    {.name = "--tls-key", .value = "FILE", .kind = Kind::text, .target = &Options::tls_key_file,
     .accepts = "a PEM file", .help = "the certificate's private key; with --tls-cert"},
    {.name = "--tls-tickets", .value = "on|off", .kind = Kind::custom, .target = Flag::Store(store_tickets),
     .accepts = "on or off", .fallback = "on", .help = "TLS session resumption by stateless tickets"},
    {.name = "--tls-ciphers", .value = "LIST", .kind = Kind::text, .target = &Options::tls_ciphers,
     .accepts = "OpenSSL's cipher list syntax", .fallback = "OpenSSL's", .help = "TLS 1.2 cipher list"},
    {.name = "--tls-min-version", .value = "V", .kind = Kind::custom, .target = Flag::Store(store_tls_min_version),
     .accepts = "1.2 or 1.3", .fallback = "1.2", .help = "the oldest TLS version accepted"},
    {.name = "--tls-handshake-timeout-ms", .value = "N", .kind = Kind::number,
     .target = &Options::tls_handshake_timeout_ms, .min = 1, .max = timeout_ms_max,
     .help = "time a TLS handshake may take, then the connection is closed"},
    {.name = "--help", .kind = Kind::help, .help = "print this list and exit"},
    {.name = "--version", .kind = Kind::version, .help = "print the version and exit"},
};

// The checks that involve several flags, after each was parsed alone.
std::string finish(Options& out, const cli::Given& given) {
  if (out.backend == io::BackendKind::epoll) {
    if (given.has("--uring")) return "--uring tunes the io_uring backend: it has no meaning with --backend epoll";
    if (out.send_mode != SendMode::sendmsg) {
      return std::string("--send ") + send_mode_name(out.send_mode) +
             " is io_uring's: the epoll backend sends with sendmsg";
    }
  }
  if (out.tls_cert_file.empty() != out.tls_key_file.empty()) {
    return "--tls-cert and --tls-key go together: give both to serve HTTPS";
  }
  if (out.tls() && out.send_mode == SendMode::zc) {
    // The ciphertext is rewritten for each part of a batch, while a
    // zero-copy send's bytes must stay unchanged until its notification.
    return "--send zc cannot carry TLS: its ciphertext area is reused before the notification comes";
  }
  if (!net::parse_address(out.host, std::uint16_t(out.port), out.address)) {
    return "bad --address '" + out.host + "' (an IPv4 or IPv6 literal, no host names)";
  }
  // The CPUs this process may run on (taskset, a cgroup's cpuset) are the
  // default, and the only ones --cpus may name: a shard pinned elsewhere
  // would fail, or share a CPU the user kept for something else.
  const std::vector<int> allowed = net::allowed_cpus();
  if (const std::string e = net::cpus_outside(out.cpus, allowed); !e.empty()) return "--cpus: " + e;
  if (out.shards == 0) out.shards = out.cpus.empty() ? int(allowed.size()) : int(out.cpus.size());
  if (out.cpus.empty()) {
    for (int s = 0; s < out.shards; ++s) out.cpus.push_back(allowed[std::size_t(s) % allowed.size()]);
  }
  if (int(out.cpus.size()) < out.shards) {
    return "--cpus names " + std::to_string(out.cpus.size()) + " CPUs for " + std::to_string(out.shards) + " shards";
  }
  out.cpus.resize(std::size_t(out.shards));
  return {};
}

const cli::Program<Options> program{
    .name = "server",
    .synopsis = "usage: server [options]\n",
    .notes = "Times are whole milliseconds (the -ms flags) or seconds; docs/SERVER.md says more.\n",
    .flags = flags,
    .version = "ringhttp server " RINGHTTP_VERSION,
    .finish = finish,
};

}  // namespace

const cli::Program<Options>& command_line() { return program; }

ParseOutcome parse_options(int argc, char** argv, Options& out) { return cli::parse(program, argc, argv, out); }

}  // namespace ringhttp::server
