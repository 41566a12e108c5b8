// The hostile-client driver: many connections at once, each running its own
// random script (support/hostile_script.hpp) over nonblocking sockets from
// one thread, every response checked against the script's model as it
// arrives: each request gets exactly its own response, in order, or the
// connection is refused with the right status and closed.
//
// Over HTTPS too (DriverOptions::tls): each connection does its TLS
// handshake before its script starts, every piece the script sends leaves
// as exactly one record, and the responses are read from the decrypted
// records (support/tls_channel.hpp). A reset is still a TCP reset; a
// half-close sends a close_notify, then the FIN.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/hostile_script.hpp"

namespace socket_test::hostile {

struct DriverOptions {
  std::uint64_t seed = 1;
  std::uint32_t connections = 256;  // scripts per round, connections 0..connections-1
  std::uint32_t concurrency = 64;   // connections open at once
  // Run only these connections' scripts (a replay of failures); all when empty.
  std::vector<std::uint32_t> only_connections;
  ScriptOptions script;
  // The server's --header-timeout-ms: short, so that the slow-loris scripts
  // end quickly. The scripts send every other header section far faster
  // (in 300 ms at most); one that took nearly this long anyway (a slow
  // machine, a sanitizer) may get a 408, which the model then accepts.
  std::chrono::milliseconds header_timeout{2000};
  // The server's --idle-timeout-ms: a connection that ends idle must be
  // closed by the server, and no sooner than this after its last answer.
  std::chrono::milliseconds idle_timeout{3000};
  // A connection that neither sends, receives nor moves to its next step
  // for this long is one the server has stopped serving. Longer than the
  // server's header and idle timeouts plus its tick.
  std::chrono::milliseconds stall_ms_max{6000};
  // How long a request's body waits for its 100 Continue (RFC 9110 section
  // 10.1.1: the server must send it, or a final status, at once).
  std::chrono::milliseconds continue_wait_ms_max{3000};
  std::chrono::milliseconds round_ms_max{60000};
  // HTTPS: the server serves it with a certificate for "localhost" that
  // tls_ca_file (PEM) signed. Sessions are resumed where the server gave a
  // ticket, so both full and resumed handshakes happen.
  bool tls = false;
  std::string tls_ca_file;
};

// What the driver saw in a round, to compare with the server's /metrics.
// `seen` counts are certain. `unsure` counts are requests the driver sent
// whole on a connection it reset (or that failed) before their answer
// arrived: the server may or may not have parsed them.
struct Tally {
  std::uint64_t connections = 0;  // connected (the server accepts each one)
  std::uint64_t routed_seen = 0;  // answered by the router: ringhttp_requests_total
  std::uint64_t routed_unsure = 0;
  std::map<int, std::uint64_t> status_seen;  // 100 Continue included
  std::map<int, std::uint64_t> status_unsure;
  std::map<std::string, std::uint64_t> refusal_seen;  // parse error kinds, and "header" for the header timeout
  std::map<std::string, std::uint64_t> refusal_unsure;
  // On the wire: ciphertext over TLS, the handshakes' included.
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t resets = 0;         // connections the driver reset
  std::uint64_t half_closes = 0;    // connections the driver half-closed
  std::uint64_t server_closes = 0;  // EOFs the model expected
  std::uint64_t idle_timeouts = 0;  // of them, idle connections the server closed
  // 408s to header sections the driver happened to send nearly as slowly
  // as the header timeout (counted in refusal_seen too).
  std::uint64_t slow_header_timeouts = 0;
  // Idle timeouts of connections whose script had more to send, which the
  // driver itself left idle that long (a loaded machine delays its loop);
  // counted in idle_timeouts and server_closes too.
  std::uint64_t late_idle_timeouts = 0;
  // Over TLS. Handshakes the driver completed, full or resumed, as the
  // server counts them once it has read the client's Finished: `unsure`
  // ones are on connections the driver reset (or that failed) before any
  // response came, so the server may never have read it and counts the
  // handshake as failed ("closed") instead. Handshakes still unfinished
  // when the driver closed (failures only) fail for the server too.
  std::uint64_t tls_full_seen = 0;
  std::uint64_t tls_full_unsure = 0;
  std::uint64_t tls_resumed_seen = 0;
  std::uint64_t tls_resumed_unsure = 0;
  std::uint64_t tls_unfinished = 0;
  std::uint64_t plaintext_sent = 0;      // the scripts' bytes, in records wholly sent
  std::uint64_t plaintext_received = 0;  // decrypted
  std::uint64_t close_notifies_received = 0;

  void add(const Tally& other);
  std::string summary() const;
};

struct Failure {
  std::uint32_t connection = 0;
  std::string message;  // what went wrong, the script, and how to replay it
};

struct RoundReport {
  Tally tally;
  std::vector<Failure> failures;
  std::chrono::milliseconds elapsed{0};
};

// Runs every script of one round against the server on 127.0.0.1:port.
RoundReport run_round(std::uint16_t port, const DriverOptions& options);

}  // namespace socket_test::hostile
