#pragma once
// The server's command line.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cli/flags.hpp"
#include "core/net/address.hpp"
#include "core/io/completion.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::server {

using io::SendMode;  // --send

const char* send_mode_name(SendMode mode);

struct Options {
  // --address and --port, then both as one address.
  std::string host = "127.0.0.1";
  std::uint32_t port = 8080;
  net::Address address;
  int shards = 0;  // 0: one per online CPU
  std::vector<int> cpus;
  io::BackendKind backend = io::BackendKind::uring;
  uring::Features wanted_features = uring::Features::all();
  std::string uring_text = "all";
  SendMode send_mode = SendMode::sendmsg;  // as asked; zc falls back to sendmsg where the kernel lacks it

  std::uint32_t request_line_bytes_max = 8192;  // 414 beyond; RFC 9112 section 3 asks at least 8,000
  std::uint32_t header_bytes_max = 32768;       // 431 beyond; nginx: four 8 KiB buffers
  std::uint64_t body_bytes_max = 1 << 20;       // 413 beyond; nginx's client_max_body_size default
  std::uint32_t header_timeout_ms = 10'000;     // slowloris: a header section must arrive in this time
  std::uint32_t idle_timeout_ms = 60'000;       // keep-alive connections with nothing to do
  // A body must arrive within body_timeout_ms plus 1 s per body_min_rate
  // bytes received (Apache's RequestReadTimeout body=20,MinRate=500): a
  // body trickled a byte at a time is cut, a large one at a fair rate is not.
  std::uint32_t body_timeout_ms = 20'000;
  std::uint32_t body_min_rate = 500;            // bytes per second that each extend the deadline
  std::uint32_t send_timeout_ms = 60'000;       // unsent output making no progress (nginx's send_timeout)
  std::uint32_t connections_max = 4096;         // per shard; the table is reserved up front
  std::uint32_t output_bytes_max = 256 * 1024;  // unsent bytes per connection before it stops reading
  // Output blocks per shard (a response queue and its iovecs, about 47 KiB
  // of address space each, touched only as used): how many connections may
  // have responses queued or in flight at once; the others wait their turn,
  // input paused. 0: as many as --connections-max, so the pool never runs
  // out before the table does: with fewer, clients that read slowly enough
  // to keep their sends progressing could hold every block and make
  // everyone else wait.
  std::uint32_t output_blocks = 0;
  std::uint32_t shutdown_timeout_ms = 5'000;    // how long in-flight responses may take on SIGTERM
  std::uint32_t ring_entries = 1024;            // SQ entries per shard

  // The application's middleware and auth (see docs/SERVER.md's flags).
  std::string jwt_secret_file;            // else $RINGHTTP_JWT_SECRET; neither: bearer routes answer 503
  std::vector<std::string> cors_origins;  // exact origins allowed; empty: none
  std::uint32_t cors_max_age_s = 600;     // preflight cache time
  std::uint32_t rate_limit_requests = 1000;     // per address, per shard, per window
  std::uint32_t rate_limit_window_ms = 1000;    // the window those requests refill over
  std::uint32_t rate_limit_addresses = 4096;    // addresses each shard tracks
  // Accept bearer tokens without exp, for deployments that revoke tokens
  // another way; by default they are refused (401, missing_exp).
  bool jwt_allow_no_exp = false;

  // --metrics-address: /metrics is served there by its own thread, and not
  // on the main port. Absent: on the main port, to anyone who can reach it.
  std::optional<net::Address> metrics_address;
  std::uint32_t metrics_timeout_ms = 5'000;  // for a metrics client's request, then again for its answer

  // The database routes (/db/...): a libpq connection string or URL. Empty:
  // those routes answer 503.
  std::string db_url;
  std::uint32_t db_pool = 2;         // database connections per shard
  std::uint32_t db_queue = 512;      // queries in flight per shard; 503 at once beyond
  std::uint32_t db_timeout_ms = 5'000;  // a query's deadline: past it its connection is closed, 503

  // HTTPS: with a certificate and its key (PEM), the listener speaks TLS.
  std::string tls_cert_file;  // the server's certificate first, then its chain
  std::string tls_key_file;
  bool tls_tickets = true;          // resumption by stateless tickets (a key made at start-up)
  std::string tls_ciphers;          // OpenSSL's TLS 1.2 cipher list; empty: OpenSSL's default
  std::string tls_min_version = "1.2";  // "1.2" or "1.3"
  std::uint32_t tls_handshake_timeout_ms = 10'000;  // a handshake must finish in this time

  bool tls() const { return !tls_cert_file.empty(); }
};

// Checks a --db connection string: libpq must parse it, and a host it names
// must be an IP address or a socket directory (a name would be resolved by
// a blocking lookup on a shard's thread). Empty when usable, else why not.
std::string check_db_url(const std::string& url);

// The environment variable a JWT secret is read from without --jwt-secret-file.
inline constexpr const char* jwt_secret_env = "RINGHTTP_JWT_SECRET";
// A secret longer than this is not a secret file; refuse it.
inline constexpr std::size_t jwt_secret_bytes_max = 4096;

// Reads the HS256 secret from --jwt-secret-file (one trailing newline
// dropped) or $RINGHTTP_JWT_SECRET. Returns false with `error` set when one
// is named but unusable (unreadable, empty, too long); true with `secret`
// empty when neither is given.
bool load_jwt_secret(const Options& options, std::string& secret, std::string& error);

using ParseOutcome = cli::Outcome;

// Parses argv; on a bad flag prints a clear message to stderr.
ParseOutcome parse_options(int argc, char** argv, Options& out);

// The table of the server's flags (for tools/docs_tables).
const cli::Program<Options>& command_line();

}  // namespace ringhttp::server
