// Output larger than the socket can hold: the server must resume short
// sends and stop reading a connection whose responses are not being read,
// without losing or reordering a byte.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/proc_state.hpp"
#include "support/send_modes.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

// Small enough that the server's output outruns the client at once.
constexpr int client_receive_buffer_bytes = 16 * 1024;
// For many small zero-copy responses the kernel's receive side collapses a
// 16 KiB window: each response arrives as several page fragments whose
// memory charge dwarfs their bytes, so the window shrinks to a few hundred
// bytes, segments are dropped and zero-window probes back off (about 100 ms
// per response). That is a property of zero-copy sends of scattered small
// buffers, not of the server; a 256 KiB buffer is still far below the
// backlog's 530 KB, so the backlog still builds up.
constexpr int zc_small_responses_receive_buffer_bytes = 256 * 1024;

// Short writes resume exactly, and backpressure holds, in every --send mode.
class Drain : public testing::TestWithParam<std::string> {
 protected:
  std::vector<std::string> args(std::vector<std::string> extra = {}) const {
    extra.insert(extra.end(), {"--shards", "1", "--send", GetParam()});
    return extra;
  }
};

TEST_P(Drain, large_stream_reaches_a_slow_reader_complete_and_in_order) {
  constexpr unsigned long long bytes = 64ull << 20;
  ServerProcess server(args());
  Connection connection(server.port(), {.receive_buffer_bytes = client_receive_buffer_bytes});
  connection.send_all(get(stream_path(bytes)));
  // Read nothing until the server's sends have filled the socket and come
  // back short: the event this test is about, seen in the server's counter.
  EXPECT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(metric::sends_short) > 0; }))
      << "no send came back short while the reader read nothing";
  const Response response = connection.read_head();
  ASSERT_EQ(response.status, 200);
  ASSERT_EQ(response.content_length(), bytes);
  ASSERT_TRUE(read_stream_body(connection, bytes));
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
  // The path this test is about was taken: a 16 KiB receive window cannot
  // take a 256 KiB send whole.
  EXPECT_GT(scrape_metrics(server.port()).value(metric::sends_short), 0);
}

// Request i of the backlog test; three shapes so that any reordering,
// duplication or loss changes what arrives.
std::string backlog_path(int i) {
  switch (i % 3) {
    case 0: return "/plaintext";
    case 1: return "/json";
    default: return stream_path(static_cast<unsigned long long>(i % 97));
  }
}

testing::AssertionResult is_backlog_response(const Response& response, int i) {
  if (response.status != 200) return testing::AssertionFailure() << "status " << response.status;
  switch (i % 3) {
    case 0: return is_plaintext_ok(response);
    case 1:
      if (response.body == json_body) return testing::AssertionSuccess();
      return testing::AssertionFailure() << "expected the json body, got \"" << response.body << "\"";
    default:
      if (response.body.size() != static_cast<std::size_t>(i % 97)) {
        return testing::AssertionFailure() << "stream of " << response.body.size() << " bytes, expected " << i % 97;
      }
      if (first_pattern_mismatch(response.body, 0)) return testing::AssertionFailure() << "stream pattern";
      return testing::AssertionSuccess();
  }
}

// The client writes 4,000 pipelined requests from one thread while the main
// thread reads nothing for a while: with --output-bytes-max 16384 the server
// has to stop reading this connection (and the writer blocks in send), then
// resume as responses drain. Every response must arrive, in order.
TEST_P(Drain, pipelined_backlog_is_answered_in_order_without_loss) {
  constexpr int batches = 20;
  constexpr int batch_requests = 200;
  constexpr int count = batches * batch_requests;
  ServerProcess server(args({"--output-bytes-max", "16384"}));
  const int receive_buffer_bytes =
      GetParam() == "zc" ? zc_small_responses_receive_buffer_bytes : client_receive_buffer_bytes;
  Connection connection(server.port(), {.receive_buffer_bytes = receive_buffer_bytes});

  std::atomic<bool> writer_failed = false;
  std::atomic<bool> writer_done = false;
  std::atomic<pid_t> writer_tid = 0;
  std::string writer_error;
  std::thread writer([&] {
    writer_tid = ::gettid();
    try {
      for (int batch = 0; batch < batches; ++batch) {
        std::string pipeline;
        for (int i = batch * batch_requests; i < (batch + 1) * batch_requests; ++i) {
          pipeline += get(backlog_path(i));
        }
        connection.send_all(pipeline);
      }
    } catch (const std::exception& e) {
      writer_error = e.what();
      writer_failed = true;
    }
    writer_done = true;
  });
  // Read nothing until the backlog has built up: the writer blocks in send()
  // (asleep, the only place it sleeps) once the server stops reading and the
  // socket buffers are full; or it finished, if they held everything. What is
  // checked below holds either way; this only makes the pause path likely.
  EXPECT_TRUE(eventually([&] {
    if (writer_done) return true;
    const pid_t tid = writer_tid;
    return tid != 0 && thread_state(tid) == 'S';
  }));

  int answered = 0;
  try {
    for (; answered < count; ++answered) {
      const Response response = connection.read_response();
      if (const auto ok = is_backlog_response(response, answered); !ok) {
        ADD_FAILURE() << "response " << answered << ": " << ok.message();
        break;
      }
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "after " << answered << " of " << count << " responses: " << e.what();
  }
  if (answered < count) ::shutdown(connection.fd(), SHUT_RDWR);  // unblock the writer
  writer.join();
  EXPECT_FALSE(writer_failed.load()) << writer_error;
  EXPECT_EQ(answered, count);
}

INSTANTIATE_TEST_SUITE_P(SendModes, Drain, testing::ValuesIn(send_modes), send_mode_test_name);

}  // namespace
}  // namespace socket_test
