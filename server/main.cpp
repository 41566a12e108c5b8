// ringhttp server: parses the command line, probes io_uring, opens one
// SO_REUSEPORT listener per shard, starts the shards, prints the start-up
// line, and waits for SIGTERM/SIGINT to stop them (and the metrics
// endpoint, when --metrics-address gives /metrics an address of its own).

#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/alloc/allocator_name.hpp"
#include "core/net/cpu.hpp"
#include "core/net/listen.hpp"
#include "core/tls/context.hpp"
#include "core/uring/features.hpp"
#include "ringhttp_config.hpp"
#include "server/counters.hpp"
#include "server/metrics_endpoint.hpp"
#include "server/options.hpp"
#include "server/shard.hpp"

namespace {

using namespace ringhttp;

// Whether the kernel offers TLS in the kernel (kTLS): the "tls" upper-layer
// protocol. Not used yet: said on the start-up line, so that a run on a
// kernel that has it is not mistaken for one that used it.
bool kernel_tls_available() {
  std::FILE* f = std::fopen("/proc/sys/net/ipv4/tcp_available_ulp", "r");
  if (f == nullptr) return false;
  char line[256] = {};
  const bool read = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  if (!read) return false;
  for (const char* p = line; (p = std::strstr(p, "tls")) != nullptr; p += 3) {
    const bool starts = p == line || p[-1] == ' ';
    const bool ends = p[3] == '\0' || p[3] == ' ' || p[3] == '\n';
    if (starts && ends) return true;
  }
  return false;
}

// The io_uring features this run uses: what the kernel offers of what was
// asked for. False when io_uring cannot be probed.
bool settle_features(const server::Options& options, uring::Features& features) {
  // The epoll backend needs no io_uring at all: a kernel without it (or
  // with io_uring_disabled set) still serves.
  if (options.backend != io::BackendKind::uring) return true;
  uring::Features kernel;
  try {
    kernel = uring::probe_kernel();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "server: %s\n", e.what());
    return false;
  }
  features = kernel.intersect(options.wanted_features);
  // With direct descriptors the shard keeps single-shot accepts armed,
  // each with its peer's address (server/shard.hpp, direct_accepts): the
  // start-up line says so by leaving multishot-accept out.
  if (features.fixed_files) features.multishot_accept = false;
  if (const std::string note = uring::unavailable_note(options.wanted_features, kernel); !note.empty()) {
    std::fprintf(stderr, "server: %s\n", note.c_str());
  }
  return true;
}

// The send every connection uses: --send zc falls back to sendmsg where
// the kernel cannot send zero-copy.
server::SendPath settle_send(const server::Options& options) {
  server::SendPath send;
  send.mode = options.send_mode;
  if (send.mode != server::SendMode::zc) return send;
  const uring::ZeroCopySend zc = uring::probe_zero_copy_send();
  if (zc.available) {
    send.zc_report_usage = zc.report_usage;
  } else {
    std::fprintf(stderr, "server: --send zc: %s; sending with sendmsg instead\n", zc.why_not.c_str());
    send.mode = server::SendMode::sendmsg;
  }
  return send;
}

// The application's configuration, shared read-only by every shard.
bool load_app_config(const server::Options& options, server::AppConfig& app_config) {
  std::string secret, error;
  if (!server::load_jwt_secret(options, secret, error)) {
    std::fprintf(stderr, "server: %s\n", error.c_str());
    return false;
  }
  if (secret.empty()) {
    std::fprintf(stderr, "server: no JWT secret (--jwt-secret-file or $%s): routes behind a bearer token answer 503\n",
                 server::jwt_secret_env);
  } else {
    app_config.jwt_secret = std::move(secret);
  }
  app_config.cors.origins = options.cors_origins;
  app_config.cors.max_age_s = options.cors_max_age_s;
  app_config.rate_limit.requests = options.rate_limit_requests;
  app_config.rate_limit.window_ms = options.rate_limit_window_ms;
  app_config.rate_limit.addresses_max = options.rate_limit_addresses;
  app_config.jwt_missing_exp = options.jwt_allow_no_exp ? auth::MissingExp::accept : auth::MissingExp::refuse;
  app_config.metrics_route = !options.metrics_address;
  return true;
}

// HTTPS: one context for every shard (a ticket made on one resumes on
// any other), loaded before any thread starts so a bad file fails here.
bool load_tls(const server::Options& options, std::unique_ptr<tls::ServerContext>& context) {
  if (!options.tls()) return true;
  tls::ServerConfig config;
  config.certificate_file = options.tls_cert_file;
  config.key_file = options.tls_key_file;
  config.tickets = options.tls_tickets;
  config.ciphers = options.tls_ciphers;
  config.tls13_only = options.tls_min_version == "1.3";
  std::string error;
  context = tls::ServerContext::make(config, error);
  if (context != nullptr) return true;
  std::fprintf(stderr, "server: %s\n", error.c_str());
  return false;
}

// Everything the shards share, made before any thread starts.
struct Shared {
  uring::Features features;
  server::SendPath send;
  server::AppConfig app_config;
  std::unique_ptr<server::Cors> cors;
  std::unique_ptr<tls::ServerContext> tls;
  std::vector<std::unique_ptr<server::ShardCounters>> counters;
  std::vector<const server::ShardCounters*> all_counters;
};

// One listener per shard, and the shard over it. Listeners are opened here
// so that a bad address fails before any thread starts; port 0 is resolved
// by the first and shared by the rest. False when one cannot listen.
bool make_shards(const server::Options& options, const Shared& shared, net::Address& address,
                 std::vector<std::unique_ptr<server::ShardBase>>& shards) {
  if (address.port() != 0) {
    if (const int rc = net::probe_free(address); rc < 0) {
      std::fprintf(stderr, "server: cannot listen on %s: %s\n", address.to_string().c_str(),
                   rc == -EADDRINUSE ? "address already in use (another server is listening there)" : std::strerror(-rc));
      return false;
    }
  }
  for (std::size_t i = 0; i < std::size_t(options.shards); ++i) {
    const int fd = net::listen_reuseport(address);
    if (fd < 0) {
      std::fprintf(stderr, "server: cannot listen on %s: %s\n", address.to_string().c_str(), std::strerror(-fd));
      return false;
    }
    if (i == 0) net::bound_address(fd, address);
    shards.push_back(server::make_shard(options.backend, options, shared.app_config, *shared.cors, int(i), fd,
                                        shared.features, shared.send, shared.tls.get(), *shared.counters[i],
                                        shared.all_counters));
  }
  return true;
}

// Starts every shard and waits until each serves or failed; on a failure,
// says why and stops them all.
bool start_shards(std::vector<std::unique_ptr<server::ShardBase>>& shards) {
  std::latch ready{std::ptrdiff_t(shards.size())};
  for (auto& shard : shards) shard->start(ready);
  ready.wait();
  bool failed = false;
  for (auto& shard : shards) {
    if (!shard->error().empty()) {
      std::fprintf(stderr, "server: %s\n", shard->error().c_str());
      failed = true;
    }
  }
  if (!failed) return true;
  for (auto& shard : shards) shard->request_stop();
  for (auto& shard : shards) shard->join();
  return false;
}

// The database's line, then the start-up line scripts wait for.
void print_started(const server::Options& options, const Shared& shared, const net::Address& address,
                   const server::MetricsEndpoint* metrics) {
  if (options.db_url.empty()) {
    std::fprintf(stderr, "server: no --db: the /db routes answer 503\n");
  } else {
    // The URL is not printed: it may hold a password.
    std::fprintf(stderr,
                 "server: database: %u connections per shard in pipeline mode, queue %u per shard, query "
                 "deadline %u ms; connecting (503 until ready)\n",
                 options.db_pool, options.db_queue, options.db_timeout_ms);
  }
  // metrics= comes last, and only with --metrics-address: scripts that read
  // the fields before it see the same line either way.
  const std::string metrics_field = metrics ? " metrics=" + metrics->address().to_string() : std::string();
  const bool on_uring = options.backend == io::BackendKind::uring;
  // tls=off, or the lowest version, tickets on or off, and whether the
  // kernel could have done the record layer (it does not here, yet).
  std::string tls_field = "off";
  if (options.tls()) {
    tls_field = "TLSv" + options.tls_min_version + "+";
    tls_field += options.tls_tickets ? ",tickets" : ",no-tickets";
    tls_field += kernel_tls_available() ? ",ktls-unused" : ",no-ktls";
  }
  std::printf("ringhttp %s listening on %s shards=%d cpus=%s allocator=%s backend=%s uring=%s send=%s tls=%s%s\n",
              RINGHTTP_VERSION, address.to_string().c_str(), options.shards,
              net::format_cpu_list(options.cpus).c_str(), alloc::allocator_name().c_str(),
              io::backend_name(options.backend), on_uring ? shared.features.describe().c_str() : "unused",
              server::send_mode_name(shared.send.mode), tls_field.c_str(), metrics_field.c_str());
  std::fflush(stdout);
}

int run(const server::Options& options) {
  Shared shared;
  if (!settle_features(options, shared.features)) return 1;
  // Signals are taken by sigwait() in this thread only. SIGPIPE is ignored
  // process-wide: sendmsg passes MSG_NOSIGNAL, but --send writev cannot, and
  // a writev to a socket whose peer has gone must fail with EPIPE, not kill us.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  shared.send = settle_send(options);
  if (!load_app_config(options, shared.app_config)) return 1;
  shared.cors = std::make_unique<server::Cors>(shared.app_config.cors);
  if (!load_tls(options, shared.tls)) return 1;
  for (int i = 0; i < options.shards; ++i) {
    shared.counters.push_back(std::make_unique<server::ShardCounters>());
    shared.all_counters.push_back(shared.counters.back().get());
  }
  // Opened before the shards' listeners, so that a busy metrics address
  // fails before any thread starts; its thread starts with the shards.
  std::unique_ptr<server::MetricsEndpoint> metrics;
  if (options.metrics_address) {
    metrics = std::make_unique<server::MetricsEndpoint>(shared.all_counters, options.metrics_timeout_ms);
    if (const std::string error = metrics->open(*options.metrics_address); !error.empty()) {
      std::fprintf(stderr, "server: %s\n", error.c_str());
      return 1;
    }
  }
  net::Address address = options.address;
  std::vector<std::unique_ptr<server::ShardBase>> shards;
  if (!make_shards(options, shared, address, shards) || !start_shards(shards)) return 1;
  if (metrics) metrics->start();
  print_started(options, shared, address, metrics.get());

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  if (metrics) metrics->request_stop();
  for (auto& shard : shards) shard->request_stop();
  if (metrics) metrics->join();
  for (auto& shard : shards) shard->join();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  server::Options options;
  switch (server::parse_options(argc, argv, options)) {
    case server::ParseOutcome::exit_ok: return 0;
    case server::ParseOutcome::exit_usage: return 2;
    case server::ParseOutcome::run: break;
  }
  return run(options);
}
