// SIGTERM and SIGINT: stop accepting, close idle connections, let in-flight
// responses finish (within --shutdown-timeout-ms), exit 0.
#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

// Small so that most of the stream is still inside the server, not in
// socket buffers, when the signal arrives.
constexpr int client_receive_buffer_bytes = 64 * 1024;

TEST(Shutdown, sigterm_lets_an_in_flight_stream_finish_then_exits_0) {
  constexpr std::uint64_t bytes = 8 << 20;
  constexpr std::uint64_t read_before_signal = 1 << 20;
  ServerProcess server({"--shards", "1"});
  Connection connection(server.port(), {.receive_buffer_bytes = client_receive_buffer_bytes});
  connection.send_all(get(stream_path(bytes)));
  const Response response = connection.read_head();
  ASSERT_EQ(response.status, 200);
  ASSERT_TRUE(read_stream_body(connection, read_before_signal));

  server.signal(SIGTERM);
  EXPECT_TRUE(read_stream_body(connection, bytes - read_before_signal, read_before_signal));
  EXPECT_TRUE(connection.expect_closed());
  const ExitStatus status = server.wait_exit();
  EXPECT_TRUE(status.exited_zero()) << status.describe();
}

// --shutdown-timeout-ms is long here, so a server that waits for idle
// connections instead of closing them fails the 5 s receive timeout.
TEST(Shutdown, sigterm_closes_idle_keep_alive_connections_and_exits_0) {
  ServerProcess server({"--shards", "2", "--shutdown-timeout-ms", "60000"});
  std::vector<Connection> idle;
  for (int i = 0; i < 4; ++i) {
    idle.emplace_back(server.port());
    ASSERT_TRUE(is_plaintext_ok(round_trip(idle.back(), get("/plaintext"))));
  }
  idle.emplace_back(server.port());  // connected, never sent a request

  server.signal(SIGTERM);
  for (std::size_t i = 0; i < idle.size(); ++i) EXPECT_TRUE(idle[i].expect_closed()) << "connection " << i;
  const ExitStatus status = server.wait_exit();
  EXPECT_TRUE(status.exited_zero()) << status.describe();
}

TEST(Shutdown, sigint_exits_0) {
  ServerProcess server({"--shards", "1"});
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  const ExitStatus status = server.stop(SIGINT);
  EXPECT_TRUE(status.exited_zero()) << status.describe();
}

// A response that cannot finish (1 TiB to a client that reads nothing) is
// cut off at --shutdown-timeout-ms, and the exit is still 0.
TEST(Shutdown, shutdown_timeout_cuts_off_an_endless_stream_and_exits_0) {
  ServerProcess server({"--shards", "1", "--shutdown-timeout-ms", "300"});
  Connection connection(server.port(), {.receive_buffer_bytes = client_receive_buffer_bytes});
  connection.send_all(get(stream_path(1ull << 40)));
  ASSERT_EQ(connection.read_head().status, 200);

  server.signal(SIGTERM);
  const ExitStatus status = server.wait_exit(10s);
  EXPECT_TRUE(status.exited_zero()) << status.describe();
  // What was in the socket is still readable; then the connection ends.
  std::uint64_t received = 0;
  for (std::string chunk = connection.read_some(); !chunk.empty(); chunk = connection.read_some()) {
    received += chunk.size();
  }
  EXPECT_LT(received, 1ull << 40);
}

TEST(Shutdown, after_sigterm_new_connections_are_not_served) {
  ServerProcess server({"--shards", "1", "--shutdown-timeout-ms", "60000"});
  // Keep the server busy with an in-flight stream so it is still running.
  Connection stream(server.port(), {.receive_buffer_bytes = client_receive_buffer_bytes});
  stream.send_all(get(stream_path(64 << 20)));
  ASSERT_EQ(stream.read_head().status, 200);
  // An idle keep-alive connection is closed when the shard takes the signal,
  // in the same step that stops its accepting: its close is the event that
  // says the signal has landed.
  Connection idle(server.port(), {.timeout = 30s});  // a hang guard, not a timing assertion
  ASSERT_TRUE(is_plaintext_ok(round_trip(idle, get("/plaintext"))));
  server.signal(SIGTERM);
  ASSERT_TRUE(idle.expect_closed());

  // A connect may still complete in the kernel's listen queue, but no
  // request on it may be answered: the server has stopped accepting. The
  // late connection is read only after the server has exited, so an
  // answer, however slow, would be there to read; there is none, only the
  // connection's end (EOF, or the reset of a listener closed with the
  // connection still queued).
  std::optional<Connection> late;
  try {
    late.emplace(server.port());
    late->send_all(get("/plaintext"));
  } catch (const std::exception&) {
    late.reset();  // refused: not served either
  }
  stream.close();
  const ExitStatus status = server.wait_exit();
  EXPECT_TRUE(status.exited_zero()) << status.describe();
  if (late) {
    std::string reply;
    try {
      reply = late->read_some();
    } catch (const std::exception&) {
      // Reset: not served.
    }
    EXPECT_TRUE(reply.empty()) << "a connection made after SIGTERM was served: " << reply.substr(0, 40);
  }
}

}  // namespace
}  // namespace socket_test
