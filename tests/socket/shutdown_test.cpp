// SIGTERM and SIGINT: stop accepting, close idle connections, let in-flight
// responses finish (within --shutdown-timeout-ms), exit 0.
#include <gtest/gtest.h>

#include <csignal>
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
  server.signal(SIGTERM);
  std::this_thread::sleep_for(100ms);  // let the signal land; not a timing assertion

  // A connect may still complete in the kernel's backlog, but no request on
  // it may be answered: the server has stopped accepting.
  try {
    ConnectOptions probe;
    probe.timeout = 500ms;
    Connection late(server.port(), probe);
    late.send_all(get("/plaintext"));
    const std::string reply = late.read_some();
    EXPECT_TRUE(reply.empty()) << "a connection made after SIGTERM was served: " << reply.substr(0, 40);
  } catch (const std::exception&) {
    // Refused, reset or no answer: all mean "not served".
  }
  stream.close();
  const ExitStatus status = server.wait_exit();
  EXPECT_TRUE(status.exited_zero()) << status.describe();
}

}  // namespace
}  // namespace socket_test
