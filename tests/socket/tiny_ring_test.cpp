// "A full submission queue is a normal state that is flushed, never a crash":
// a 4-entry ring under 32 concurrent connections.
#include <gtest/gtest.h>

#include <string>

#include "support/checks.hpp"
#include "support/clients.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

TEST(TinyRing, four_entry_ring_serves_32_concurrent_connections) {
  constexpr int clients = 32;
  constexpr int requests_each = 50;
  ServerProcess server({"--shards", "1", "--ring-entries", "4"});

  const auto errors = run_clients(clients, [&](int client) {
    Connection connection(server.port());
    for (int i = 0; i < requests_each; ++i) {
      // Client 0 also streams, so long sends compete for the ring too.
      if (client == 0 && i % 10 == 0) {
        connection.send_all(get(stream_path(1 << 20)));
        if (connection.read_head().status != 200) throw std::runtime_error("stream status");
        if (!read_stream_body(connection, 1 << 20)) throw std::runtime_error("stream pattern");
        continue;
      }
      const Response response = round_trip(connection, get("/plaintext"));
      if (!is_plaintext_ok(response)) throw std::runtime_error("request " + std::to_string(i) + " failed");
    }
  });
  EXPECT_TRUE(errors.empty()) << join(errors);
}

TEST(TinyRing, four_entry_ring_answers_100_pipelined_requests) {
  ServerProcess server({"--shards", "1", "--ring-entries", "4"});
  Connection connection(server.port());
  std::string pipeline;
  for (int i = 0; i < 100; ++i) pipeline += get("/plaintext");
  connection.send_all(pipeline);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(is_plaintext_ok(connection.read_response())) << "response " << i;
}

TEST(TinyRing, one_entry_ring_still_serves) {
  ServerProcess server({"--shards", "1", "--ring-entries", "1"});
  const auto errors = run_clients(8, [&](int) {
    Connection connection(server.port());
    for (int i = 0; i < 20; ++i) {
      if (!is_plaintext_ok(round_trip(connection, get("/plaintext")))) throw std::runtime_error("not served");
    }
  });
  EXPECT_TRUE(errors.empty()) << join(errors);
}

}  // namespace
}  // namespace socket_test
