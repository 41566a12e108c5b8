// Output blocks (the parser's buffers for a request in progress, a response
// queue and its iovecs) are lent to connections only while they have a
// request in progress or output to make or send: an idle keep-alive
// connection holds none, a connection that finds every block lent waits in
// arrival order with its input paused and is answered in full once one is
// given back, and a waiter is closed after --header-timeout-ms of waiting.
// Over real sockets; readers that stop reading hold their blocks.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/connection.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

const std::string lent = "ringhttp_output_blocks_lent";
const std::string waits = "ringhttp_output_block_waits_total";
const std::string refusals = "ringhttp_output_block_refusals_total";
const std::string tls_timeouts = "ringhttp_tls_handshakes_failed_total{reason=\"timeout\"}";

// A response far larger than loopback's socket buffers with a 4 KiB
// receive window: its send stays in flight until the reader reads.
constexpr unsigned long long stalled_bytes = 4ull << 20;
const ConnectOptions small_window{.receive_buffer_bytes = 4096};

TEST(OutputBlocks, idle_keep_alive_connections_hold_none) {
  ServerProcess server({"--shards", "1"});
  std::vector<Connection> connections;
  for (int i = 0; i < 10; ++i) {
    connections.emplace_back(server.port());
    ASSERT_TRUE(is_plaintext_ok(round_trip(connections.back(), get("/plaintext"))));
  }
  // The scrape's own connection holds one while it is answered, and gives
  // it back after its send; the ten idle ones hold none.
  EXPECT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(lent) <= 1; }));
  // Pipelined requests borrow one, and give it back once answered.
  std::string pipeline;
  for (int i = 0; i < 20; ++i) pipeline += get("/json");
  connections[3].send_all(pipeline);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(connections[3].read_response().body, json_body);
  EXPECT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(lent) <= 1; }));
  EXPECT_EQ(scrape_metrics(server.port()).value(waits), 0);
}

// A request that arrives in pieces keeps what the parser has read of it
// (target, kept headers, body) in the block: it holds one from its first
// byte to its answer, and every piece reaches the application intact.
TEST(OutputBlocks, a_request_in_progress_holds_one_until_it_is_answered) {
  ServerProcess server({"--shards", "1", "--metrics-address", "127.0.0.1:0"});
  const std::uint16_t metrics = *server.metrics_port();
  std::vector<Connection> idle;
  for (int i = 0; i < 4; ++i) {
    idle.emplace_back(server.port());
    ASSERT_TRUE(is_plaintext_ok(round_trip(idle.back(), get("/plaintext"))));
  }
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 0; }));
  const std::string body = R"({"name":"Ada","n":21})";
  const std::string echo = request("POST", "/echo?from=pieces",
                                   "Content-Type: application/json\r\nContent-Length: " +
                                       std::to_string(body.size()) + "\r\n",
                                   body);
  const std::size_t in_head = echo.find("Content-Type") + 6;  // mid header value
  const std::size_t in_body = echo.size() - 8;                // mid body
  Connection a(server.port());
  Connection b(server.port());
  a.send_all(echo.substr(0, in_head));
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 1; }));
  b.send_all(echo.substr(0, in_body));
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 2; }));
  // The other connections' requests come and go meanwhile, in blocks of
  // their own, and leave the two requests in progress untouched.
  for (auto& c : idle) ASSERT_TRUE(is_plaintext_ok(round_trip(c, get("/plaintext"))));
  a.send_all(echo.substr(in_head));
  b.send_all(echo.substr(in_body));
  for (Connection* c : {&a, &b}) {
    const Response r = c->read_response();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, R"({"hello":"Ada","doubled":42})");
  }
  EXPECT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 0; }));
}

TEST(OutputBlocks, connections_beyond_the_pool_wait_their_turn_and_are_answered_in_full) {
  ServerProcess server({"--shards", "1", "--output-blocks", "2", "--metrics-address", "127.0.0.1:0"});
  const std::uint16_t metrics = *server.metrics_port();
  std::vector<Connection> readers;
  for (int i = 0; i < 4; ++i) {
    readers.emplace_back(server.port(), ConnectOptions{.receive_buffer_bytes = 4096, .defer_tls_handshake = true});
    // Over TLS the waiters wait at their handshake, whose first flight
    // needs a block too: their requests go once they are served.
    if (i < 2 || !readers.back().tls()) readers.back().send_all(get(stream_path(stalled_bytes)));
  }
  // Two streams hold the two blocks, stalled; the two others wait.
  ASSERT_TRUE(eventually([&] {
    const Metrics m = scrape_metrics(metrics);
    return m.value(lent) == 2 && m.value(waits) == 2;
  }));
  // Reading frees blocks; the waiters get them in turn and are answered.
  for (std::size_t i = 0; i < readers.size(); ++i) {
    Connection& reader = readers[i];
    if (i >= 2 && reader.tls()) reader.send_all(get(stream_path(stalled_bytes)));
    const Response head = reader.read_head();
    ASSERT_EQ(head.status, 200);
    ASSERT_EQ(head.content_length(), stalled_bytes);
    ASSERT_TRUE(read_stream_body(reader, stalled_bytes));
  }
  for (auto& reader : readers) {
    ASSERT_TRUE(is_plaintext_ok(round_trip(reader, get("/plaintext")))) << "the connection goes on";
  }
  EXPECT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 0; }));
  const Metrics m = scrape_metrics(metrics);
  EXPECT_EQ(m.value(waits), 2);
  EXPECT_EQ(m.value(refusals), 0);
}

TEST(OutputBlocks, a_waiter_is_closed_after_the_header_timeout_and_the_holder_is_still_served) {
  ServerProcess server({"--shards", "1", "--output-blocks", "1", "--header-timeout-ms", "400", "--metrics-address",
                        "127.0.0.1:0"});
  const std::uint16_t metrics = *server.metrics_port();
  Connection holder(server.port(), small_window);
  holder.send_all(get(stream_path(stalled_bytes)));
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(lent) == 1; }));
  // Over TLS the waiter waits at its handshake (its first flight needs a
  // block), and is closed at the handshake's deadline, which is the header
  // timeout here: counted as a handshake that timed out.
  Connection waiter(server.port(), {.defer_tls_handshake = true});
  if (!waiter.tls()) waiter.send_all(get("/plaintext"));
  ASSERT_TRUE(eventually([&] { return scrape_metrics(metrics).value(waits) == 1; }));
  // Closed unanswered once it has waited --header-timeout-ms.
  EXPECT_TRUE(eventually([&] {
    const Metrics m = scrape_metrics(metrics);
    return waiter.tls() ? m.value(tls_timeouts) == 1 && m.value(refusals) == 0 : m.value(refusals) == 1;
  }));
  EXPECT_TRUE(waiter.expect_closed()) << "no answer: there was no block to make one in";
  const Response head = holder.read_head();
  ASSERT_EQ(head.status, 200);
  EXPECT_TRUE(read_stream_body(holder, stalled_bytes));
}

}  // namespace
}  // namespace socket_test
