// Running out of file descriptors: the server keeps serving the connections
// it has, counts the failed accepts, and accepts again once fds are freed.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/proc_state.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

constexpr rlim_t server_fd_limit = 64;
// Far above what 64 fds allow: reaching it means the limit was never hit.
constexpr int connections_max = 4 * static_cast<int>(server_fd_limit);

// A connection with a request sent, and whether the server served it.
struct Probe {
  Connection connection;
  bool served;
};

// Sends a request on a new connection and waits for one of two events: its
// answer, or the state in which no answer can come: the server's
// descriptor table is full (its RLIMIT_NOFILE is reached, so accept(2) fails
// with EMFILE; with fixed-files its ring's file table, which the same limit
// bounds, is full and no accept is armed) and this connection is still in
// the listen queue. Nothing
// closes a connection while the probes run, so that state lasts until the
// test closes some. No clock decides it: a slow server is waited for.
// Over TLS the request waits for the handshake, which waits for the accept:
// the server's answer to the ClientHello is then the event.
Probe probe(std::uint16_t port, pid_t server_pid) {
  Connection connection(port, ConnectOptions{.defer_tls_handshake = true});
  if (!connection.tls()) connection.send_all(get("/plaintext"));
  bool stuck = false;
  const bool settled = eventually([&] {
    if (input_ready(connection)) return true;
    // The queue is read on both sides of the table, so a connection accepted
    // meanwhile (the last free descriptor) is not taken for a stuck one.
    const auto queued = [&] { return accept_queue_length(port).value_or(0) > 0; };
    stuck = queued() && held_descriptors(server_pid) >= server_fd_limit && queued();
    return stuck;
  });
  if (!settled) throw std::runtime_error("a probe connection was neither answered nor stuck in the listen queue");
  if (stuck) return {std::move(connection), false};
  if (connection.tls()) connection.send_all(get("/plaintext"));
  const bool served = is_plaintext_ok(connection.read_response());
  return {std::move(connection), served};
}

TEST(FdExhaustion, server_survives_running_out_of_fds_and_recovers) {
  ServerProcess server(ServerOptions{{"--shards", "1"}, server_fd_limit});

  std::vector<Connection> served;
  std::optional<Connection> waiting;  // the first connection the server could not accept
  while (static_cast<int>(served.size()) < connections_max) {
    Probe p = probe(server.port(), server.pid());
    if (!p.served) {
      waiting = std::move(p.connection);
      break;
    }
    served.push_back(std::move(p.connection));
  }
  ASSERT_TRUE(waiting) << "the server served " << served.size()
                       << " connections under RLIMIT_NOFILE=" << server_fd_limit
                       << "; it should have run out of descriptors";
  ASSERT_GT(served.size(), 20u) << "too few connections before exhaustion to run the test";

  for (std::size_t i = 0; i < served.size(); ++i) {
    ASSERT_TRUE(is_plaintext_ok(round_trip(served[i], get("/plaintext")))) << "existing connection " << i;
  }

  served.erase(served.begin(), served.begin() + 20);
  // The waiting connection is first in the accept queue; its request was
  // sent long ago and must now be answered. The server must first see the
  // closes and wait out its accept backoff: a generous bound, not a threshold.
  waiting->set_timeout(30s);
  if (waiting->tls()) waiting->send_all(get("/plaintext"));  // once accepted, after its handshake
  EXPECT_TRUE(is_plaintext_ok(waiting->read_response())) << "the backlogged connection was never served";
  // Accepting resumes on the server's next tick after the backoff; a new
  // connection is answered then (a stuck probe here would mean it never does).
  EXPECT_TRUE(probe(server.port(), server.pid()).served) << "new connections not served after 20 were closed";
  EXPECT_GT(scrape_metrics(server.port()).value(metric::accept_errors("fd_limit")), 0);
  for (std::size_t i = 0; i < served.size(); ++i) {
    ASSERT_TRUE(is_plaintext_ok(round_trip(served[i], get("/plaintext")))) << "existing connection " << i;
  }
}

}  // namespace
}  // namespace socket_test
