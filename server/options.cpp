#include "server/options.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <libpq-fe.h>

#include "core/http/request_parser.hpp"
#include "core/net/cpu.hpp"
#include "core/text/parse_number.hpp"
#include "ringhttp_config.hpp"
#include "server/middleware/rate_limiter.hpp"

namespace ringhttp::server {
namespace {

using text::parse_number;

constexpr const char* usage_text =
    "usage: server [options]\n"
    "  --address ADDR            IPv4 or IPv6 address to listen on (default 127.0.0.1)\n"
    "  --port N                  TCP port (default 8080; 0 picks a free port shared by all shards)\n"
    "  --shards N                shard threads (default: one per CPU of the process's CPU mask)\n"
    "  --cpus LIST               CPUs to pin shards to, within the CPU mask, e.g. 0,1 or 0-3\n"
    "                            (default: the mask's CPUs in order)\n"
    "  --uring LIST              [profile,]switches: profile 5.10, 5.19, 6.0, 6.1, 6.6, 6.10, 6.12 or all\n"
    "                            (default), then no-FEATURE switches, sqpoll, min-wait, no-sqarray,\n"
    "                            fixed-files, recv-bundle, incremental-buffers, e.g. 5.19,sqpoll\n"
    "  --send MODE               writev, sendmsg (default) or zc (IORING_OP_SENDMSG_ZC)\n"
    "  --backend B               uring (default) or epoll: the system calls the shards are driven by\n"
    "  --request-line-bytes-max N\n"
    "                            request line limit (method, target, version), 414 beyond\n"
    "                            (default 8192, at most 32768)\n"
    "  --header-bytes-max N      request line + headers limit, 431 beyond (default 32768)\n"
    "  --body-bytes-max N        request body limit, 413 beyond (default 1048576)\n"
    "  --header-timeout-ms N     time allowed for a header section, 408 beyond (default 10000)\n"
    "  --idle-timeout-ms N       keep-alive idle time before closing (default 60000)\n"
    "  --body-timeout-ms N       time allowed for a request body, 408 beyond (default 20000),\n"
    "  --body-min-rate N         ...extended by 1 s per N body bytes received (default 500)\n"
    "  --send-timeout-ms N       unsent output making no progress this long is dropped (default 60000)\n"
    "  --connections-max N       connections per shard (default 4096)\n"
    "  --output-bytes-max N      unsent bytes per connection before reading stops (default 262144)\n"
    "  --output-blocks N         connections per shard with responses queued or in flight at once; the\n"
    "                            others wait, input paused (default 0: as many as --connections-max)\n"
    "  --shutdown-timeout-ms N   time in-flight responses get on SIGTERM/SIGINT (default 5000)\n"
    "  --ring-entries N          io_uring SQ entries per shard (default 1024)\n"
    "  --jwt-secret-file PATH    HS256 secret for routes behind a bearer token (/profile);\n"
    "                            default $RINGHTTP_JWT_SECRET; neither: those routes answer 503\n"
    "  --cors-origin LIST        origins CORS allows, comma-separated exact origins such as\n"
    "                            https://app.example (default: none)\n"
    "  --cors-max-age N          seconds a browser may cache a preflight (default 600)\n"
    "  --rate-limit N            requests per window per client (IPv4 address or IPv6 /64), per shard\n"
    "                            (default 1000)\n"
    "  --rate-window-ms N        the window the rate limit refills over (default 1000)\n"
    "  --rate-limit-addresses N  clients each shard's limiter tracks (default 4096)\n"
    "  --jwt-allow-no-exp        accept bearer tokens without exp (default: refused, 401)\n"
    "  --metrics-address A:P     serve GET /metrics on this address only, e.g. 127.0.0.1:9100 or\n"
    "                            [::1]:9100 (port 0 picks one); default: on the main port, to anyone\n"
    "                            who reaches it\n"
    "  --metrics-timeout-ms N    time a metrics client has to send its request, then to read the\n"
    "                            answer (default 5000)\n"
    "  --db URL                  PostgreSQL for /db/users: a libpq URL or key=value string whose host is\n"
    "                            an IP address or a socket directory, e.g.\n"
    "                            postgresql://user@127.0.0.1:5432/db (default: none; /db routes answer 503)\n"
    "  --db-pool N               database connections per shard, in pipeline mode (default 2)\n"
    "  --db-queue N              database queries in flight per shard, an equal share on each of its\n"
    "                            connections; beyond, 503 at once (default 512)\n"
    "  --db-timeout-ms N         a query's deadline: past it its connection is closed and every query on\n"
    "                            it answered 503, then reconnected (default 5000)\n"
    "  --tls-cert FILE           serve HTTPS: the certificate (PEM), its chain after it\n"
    "  --tls-key FILE            the certificate's private key (PEM); with --tls-cert\n"
    "  --tls-tickets on|off      TLS session resumption by stateless tickets (default on)\n"
    "  --tls-ciphers LIST        TLS 1.2 cipher list, OpenSSL's syntax (default: OpenSSL's)\n"
    "  --tls-min-version V       1.2 (default) or 1.3\n"
    "  --tls-handshake-timeout-ms N\n"
    "                            time a TLS handshake may take, then the connection is closed\n"
    "                            (default 10000)\n"
    "  --help, --version\n";

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

ParseOutcome parse_options(int argc, char** argv, Options& out) {
  std::string host = "127.0.0.1";
  std::uint32_t port = 8080;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "server: %s\n%s", message.c_str(), usage_text);
    return ParseOutcome::exit_usage;
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    std::string_view value;
    const size_t eq = flag.find('=');
    bool has_inline_value = false;
    if (flag.starts_with("--") && eq != std::string_view::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_inline_value = true;
    }
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage_text, stdout);
      return ParseOutcome::exit_ok;
    }
    if (flag == "--version") {
      std::printf("ringhttp server %s\n", RINGHTTP_VERSION);
      return ParseOutcome::exit_ok;
    }
    if (flag == "--jwt-allow-no-exp") {  // a switch: it takes no value
      if (has_inline_value) return fail("--jwt-allow-no-exp takes no value");
      out.jwt_allow_no_exp = true;
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= argc) return fail("missing value for " + std::string(flag));
      value = argv[++i];
    }
    bool ok = true;
    if (flag == "--address") {
      host = std::string(value);
    } else if (flag == "--port") {
      ok = parse_number<std::uint32_t>(value, 0, 65535, port);
    } else if (flag == "--shards") {
      ok = parse_number<int>(value, 1, 1024, out.shards);
    } else if (flag == "--cpus") {
      std::string error;
      if (!net::parse_cpu_list(value, out.cpus, error)) return fail(error);
    } else if (flag == "--uring") {
      std::string error;
      if (!uring::parse_switches(value, out.wanted_features, error)) return fail(error);
      out.uring_text = std::string(value);
      out.uring_given = true;
    } else if (flag == "--backend") {
      if (!io::parse_backend(value, out.backend)) {
        return fail("bad value '" + std::string(value) + "' for --backend (uring or epoll)");
      }
    } else if (flag == "--send") {
      if (!parse_send_mode(value, out.send_mode)) {
        return fail("bad value '" + std::string(value) + "' for --send (writev, sendmsg or zc)");
      }
    } else if (flag == "--request-line-bytes-max") {
      ok = parse_number<std::uint32_t>(value, 256, std::uint32_t(http::RequestParser::request_line_bytes_limit),
                                       out.request_line_bytes_max);
    } else if (flag == "--header-bytes-max") {
      ok = parse_number<std::uint32_t>(value, 256, 1 << 20, out.header_bytes_max);
    } else if (flag == "--body-bytes-max") {
      ok = parse_number<std::uint64_t>(value, 0, std::uint64_t(1) << 40, out.body_bytes_max);
    } else if (flag == "--header-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.header_timeout_ms);
    } else if (flag == "--idle-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.idle_timeout_ms);
    } else if (flag == "--body-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.body_timeout_ms);
    } else if (flag == "--body-min-rate") {
      ok = parse_number<std::uint32_t>(value, 1, 1'000'000'000, out.body_min_rate);
    } else if (flag == "--send-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.send_timeout_ms);
    } else if (flag == "--connections-max") {
      ok = parse_number<std::uint32_t>(value, 1, 1 << 20, out.connections_max);
    } else if (flag == "--output-blocks") {
      ok = parse_number<std::uint32_t>(value, 0, 1 << 20, out.output_blocks);
    } else if (flag == "--output-bytes-max") {
      ok = parse_number<std::uint32_t>(value, 4096, 1 << 30, out.output_bytes_max);
    } else if (flag == "--shutdown-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 0, 3'600'000, out.shutdown_timeout_ms);
    } else if (flag == "--ring-entries") {
      ok = parse_number<std::uint32_t>(value, 1, 32768, out.ring_entries);
    } else if (flag == "--jwt-secret-file") {
      ok = !value.empty();
      out.jwt_secret_file = std::string(value);
    } else if (flag == "--cors-origin") {
      std::string error;
      if (!parse_origins(value, out.cors_origins, error)) return fail(error);
    } else if (flag == "--cors-max-age") {
      ok = parse_number<std::uint32_t>(value, 0, 86'400, out.cors_max_age_s);
    } else if (flag == "--rate-limit") {
      ok = parse_number<std::uint32_t>(value, 1, 1'000'000'000, out.rate_limit_requests);
    } else if (flag == "--rate-window-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 86'400'000, out.rate_limit_window_ms);
    } else if (flag == "--rate-limit-addresses") {
      ok = parse_number<std::uint32_t>(value, 1, rate_limit_addresses_max_limit, out.rate_limit_addresses);
    } else if (flag == "--metrics-address") {
      net::Address address;
      if (!net::parse_endpoint(value, address)) {
        return fail("bad --metrics-address '" + std::string(value) +
                    "' (ADDR:PORT: an IPv4 literal or a bracketed IPv6 one, e.g. 127.0.0.1:9100 or [::1]:9100)");
      }
      out.metrics_address = address;
    } else if (flag == "--metrics-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.metrics_timeout_ms);
    } else if (flag == "--db") {
      out.db_url = std::string(value);
      if (const std::string e = check_db_url(out.db_url); !e.empty()) return fail("--db: " + e);
    } else if (flag == "--db-pool") {
      ok = parse_number<std::uint32_t>(value, 1, 64, out.db_pool);
    } else if (flag == "--db-queue") {
      ok = parse_number<std::uint32_t>(value, 1, 1 << 16, out.db_queue);
    } else if (flag == "--db-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.db_timeout_ms);
    } else if (flag == "--tls-cert") {
      ok = !value.empty();
      out.tls_cert_file = std::string(value);
    } else if (flag == "--tls-key") {
      ok = !value.empty();
      out.tls_key_file = std::string(value);
    } else if (flag == "--tls-tickets") {
      ok = value == "on" || value == "off";
      out.tls_tickets = value == "on";
    } else if (flag == "--tls-ciphers") {
      ok = !value.empty();
      out.tls_ciphers = std::string(value);
    } else if (flag == "--tls-min-version") {
      ok = value == "1.2" || value == "1.3";
      out.tls_min_version = std::string(value);
    } else if (flag == "--tls-handshake-timeout-ms") {
      ok = parse_number<std::uint32_t>(value, 1, 3'600'000, out.tls_handshake_timeout_ms);
    } else {
      return fail("unknown option " + std::string(flag));
    }
    if (!ok) return fail("bad value '" + std::string(value) + "' for " + std::string(flag));
  }
  if (out.backend == io::BackendKind::epoll) {
    if (out.uring_given) return fail("--uring tunes the io_uring backend: it has no meaning with --backend epoll");
    if (out.send_mode != SendMode::sendmsg) {
      return fail(std::string("--send ") + send_mode_name(out.send_mode) +
                  " is io_uring's: the epoll backend sends with sendmsg");
    }
  }
  if (out.tls_cert_file.empty() != out.tls_key_file.empty()) {
    return fail("--tls-cert and --tls-key go together: give both to serve HTTPS");
  }
  if (out.tls() && out.send_mode == SendMode::zc) {
    // The ciphertext is rewritten for each part of a batch, while a
    // zero-copy send's bytes must stay unchanged until its notification.
    return fail("--send zc cannot carry TLS: its ciphertext area is reused before the notification comes");
  }
  if (!net::parse_address(host, std::uint16_t(port), out.address)) {
    return fail("bad --address '" + host + "' (an IPv4 or IPv6 literal, no host names)");
  }
  // The CPUs this process may run on (taskset, a cgroup's cpuset) are the
  // default, and the only ones --cpus may name: a shard pinned elsewhere
  // would fail, or share a CPU the user kept for something else.
  const std::vector<int> allowed = net::allowed_cpus();
  if (const std::string e = net::cpus_outside(out.cpus, allowed); !e.empty()) return fail("--cpus: " + e);
  if (out.shards == 0) out.shards = out.cpus.empty() ? int(allowed.size()) : int(out.cpus.size());
  if (out.cpus.empty()) {
    for (int s = 0; s < out.shards; ++s) out.cpus.push_back(allowed[std::size_t(s) % allowed.size()]);
  }
  if (int(out.cpus.size()) < out.shards) {
    return fail("--cpus names " + std::to_string(out.cpus.size()) + " CPUs for " + std::to_string(out.shards) +
                " shards");
  }
  out.cpus.resize(std::size_t(out.shards));
  return ParseOutcome::run;
}

}  // namespace ringhttp::server
