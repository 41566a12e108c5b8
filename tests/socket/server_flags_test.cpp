// The server's flags, each shown to do what docs/SERVER.md says by a test that
// fails when the flag is ignored: --shards, --shutdown-timeout-ms,
// --output-bytes-max, --address with IPv6, --connections-max; and HEAD on
// every GET route.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/eventually.hpp"
#include "support/ipv6.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/stream_pattern.hpp"
#include "tests/jwt_mint.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// --- --shards ----------------------------------------------------------------

struct TaskInfo {
  std::string name;               // Name: in status (the comm)
  std::string cpus_allowed_list;  // Cpus_allowed_list: in status
};

// Every thread of `pid`, from /proc/PID/task/*/status.
std::vector<TaskInfo> tasks_of(pid_t pid) {
  std::vector<TaskInfo> tasks;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::ifstream status(entry.path() / "status");
    TaskInfo task;
    for (std::string line; std::getline(status, line);) {
      const auto value = [&] { return line.substr(line.find_first_not_of(" \t", line.find(':') + 1)); };
      if (line.starts_with("Name:")) task.name = value();
      if (line.starts_with("Cpus_allowed_list:")) task.cpus_allowed_list = value();
    }
    if (!task.name.empty()) tasks.push_back(task);
  }
  return tasks;
}

bool may_run_on_cpus_0_and_1() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return ::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_ISSET(0, &set) && CPU_ISSET(1, &set);
}

// Two shards are two threads, one pinned to each CPU named (the io_uring
// workers, `iou-*`, are the kernel's and are left out). Each shard has its
// own rate limiter (docs/SERVER.md: "The limit is per shard"), so with a limit of
// one request per day from 127.0.0.1, exactly one request per shard that
// the kernel handed connections to is answered 200 and every other one
// 429: 64 connections spread by SO_REUSEPORT's hash reach both shards
// (all on one would have odds of 2^-63), and exactly two 200s say both
// shards took connections and answered them.
TEST(ServerFlags, two_shards_run_as_two_pinned_threads_that_each_answer_requests) {
  if (!may_run_on_cpus_0_and_1()) GTEST_SKIP() << "this test needs CPUs 0 and 1 in its CPU mask";
  constexpr int connections = 64;
  ServerProcess server({"--shards", "2", "--cpus", "0,1", "--rate-limit", "1", "--rate-window-ms", "86400000"});

  std::map<std::string, int> pinned;  // Cpus_allowed_list of a one-CPU thread -> how many
  std::string seen;
  for (const TaskInfo& task : tasks_of(server.pid())) {
    seen += " [" + task.name + ": " + task.cpus_allowed_list + "]";
    if (task.name.starts_with("iou-")) continue;
    if (task.cpus_allowed_list == "0" || task.cpus_allowed_list == "1") ++pinned[task.cpus_allowed_list];
  }
  EXPECT_EQ(pinned["0"], 1) << "threads:" << seen;
  EXPECT_EQ(pinned["1"], 1) << "threads:" << seen;

  std::map<int, int> statuses;
  for (int i = 0; i < connections; ++i) {
    Connection connection(server.port());
    ++statuses[round_trip(connection, get("/mw/ping")).status];
  }
  EXPECT_EQ(statuses[200], 2) << "one answered request per shard's own limiter";
  EXPECT_EQ(statuses[429], connections - 2);
}

// --- --shutdown-timeout-ms ---------------------------------------------------

// A client that asked for 1 TiB and reads nothing more than the head: its
// response can never finish, so only the shutdown timeout ends the server.
Connection stalled_endless_stream(std::uint16_t port) {
  Connection connection(port, {.receive_buffer_bytes = 16 * 1024});
  connection.send_all(get(stream_path(1ull << 40)));
  const Response head = connection.read_head();
  if (head.status != 200) throw std::runtime_error("stream answered " + std::to_string(head.status));
  return connection;
}

// Whether the process has not exited, read from /proc/PID/stat without
// reaping it (an exited child is a zombie, state Z, until its wait_exit).
bool still_running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');  // the name in parentheses may hold anything
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

// Two servers, each held by a stalled reader, get SIGTERM together: the one
// whose flag is 300 ms exits (0) once its flag has passed and while the one
// whose flag is 6 s is still waiting; that one exits once its own 6 s have
// passed. A fixed deadline, or none, fails one of the three checks. The
// lower bounds cannot be flaky: the server sets its deadline after the
// signal arrives (less 1 ms for its millisecond clock); the upper bound is
// only "before the other flag's deadline", 5.7 s of slack for the exit.
TEST(ServerFlags, shutdown_timeout_ms_is_how_long_a_stalled_response_may_hold_the_exit) {
  constexpr auto short_timeout = 300ms;
  constexpr auto long_timeout = 6000ms;
  constexpr auto clock_slack = 2ms;
  ServerProcess short_server({"--shards", "1", "--shutdown-timeout-ms", std::to_string(short_timeout.count())});
  ServerProcess long_server({"--shards", "1", "--shutdown-timeout-ms", std::to_string(long_timeout.count())});
  Connection short_reader = stalled_endless_stream(short_server.port());
  Connection long_reader = stalled_endless_stream(long_server.port());

  const auto signalled = Clock::now();
  short_server.signal(SIGTERM);
  long_server.signal(SIGTERM);

  const ExitStatus short_exit = short_server.wait_exit(long_timeout + 10s);
  const auto short_elapsed = Clock::now() - signalled;
  ASSERT_TRUE(short_exit.exited_zero()) << short_exit.describe();
  EXPECT_GE(short_elapsed, short_timeout - clock_slack) << "exited before its flag's deadline";
  EXPECT_LT(short_elapsed, long_timeout) << "a 300 ms flag held the exit longer than a 6 s one may";
  EXPECT_TRUE(still_running(long_server.pid())) << "the 6 s server did not wait its flag's time";

  const ExitStatus long_exit = long_server.wait_exit(long_timeout + 10s);
  const auto long_elapsed = Clock::now() - signalled;
  EXPECT_TRUE(long_exit.exited_zero()) << long_exit.describe();
  EXPECT_GE(long_elapsed, long_timeout - clock_slack) << "exited before its flag's deadline";
}

// --- --output-bytes-max ------------------------------------------------------

// Each /stream response of this size leaves in one send (the server sends a
// stream in chunks of 4 x 65,511 bytes), so many of them make one batch.
constexpr std::uint64_t medium_stream_bytes = 240'000;
constexpr int first_requests = 24;  // 5.76 MB in one send: more than tcp_wmem's 4 MiB and the reader's buffer
constexpr int later_requests = 6;   // with the first, within the 32 responses a connection may queue

std::uint64_t tcp_wmem_max() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_wmem");
  std::uint64_t low = 0, initial = 0, high = 0;
  in >> low >> initial >> high;
  return high;
}

// Pipelines `first_requests` medium streams in one send (parsed together,
// answered by one send far larger than the sockets can take, so it stays in
// flight with most of its bytes unsent while the reader reads nothing), then
// `later_requests` more in another send, and reports how many requests the
// server parsed once it has either paused or parsed them all. The metrics
// come from --metrics-address, so scrapes touch no shard counters.
struct Backlog {
  double parsed = 0;
  double held_buffers = 0;  // receive buffers and spill blocks
};

Backlog pipeline_behind_a_stuck_send(ServerProcess& server, Connection& reader) {
  const std::uint16_t metrics_port = *server.metrics_port();
  std::string first;
  for (int i = 0; i < first_requests; ++i) first += get(stream_path(medium_stream_bytes));
  reader.send_all(first);
  if (!eventually([&] { return scrape_metrics(metrics_port).value(metric::requests) == first_requests; })) {
    throw std::runtime_error("the first requests were not parsed together");
  }
  std::string later;
  for (int i = 0; i < later_requests; ++i) later += get(stream_path(medium_stream_bytes));
  reader.send_all(later);
  Backlog backlog;
  const bool settled = eventually([&] {
    const Metrics m = scrape_metrics(metrics_port);
    // Held as received, or over TLS decrypted into spill blocks.
    backlog = {m.value(metric::requests),
               m.value("ringhttp_input_buffers_held") + m.value("ringhttp_input_spill_blocks_used")};
    return backlog.held_buffers > 0 || backlog.parsed == first_requests + later_requests;
  });
  if (!settled) throw std::runtime_error("the later requests were neither parsed nor held");
  return backlog;
}

// Then the reader reads: every response arrives, whole and in order.
void expect_all_answered_in_order(Connection& reader) {
  for (int i = 0; i < first_requests + later_requests; ++i) {
    const Response head = reader.read_head();
    ASSERT_EQ(head.status, 200) << "response " << i;
    ASSERT_EQ(head.content_length(), medium_stream_bytes) << "response " << i;
    ASSERT_TRUE(read_stream_body(reader, medium_stream_bytes)) << "response " << i;
  }
}

// While the send in flight has more than --output-bytes-max unsent, the
// server parses no further request: at most the later send's first request
// is parsed (a request is checked after it is answered), the rest is held.
// Over plain TCP that first request arrives whole with the rest and is
// parsed; over TLS the input may be held in spill blocks before it is (the
// records' split decides), so the test asks for at most one, not exactly.
TEST(ServerFlags, output_bytes_max_stops_parsing_while_more_is_unsent) {
  ASSERT_GT(first_requests * medium_stream_bytes, tcp_wmem_max() + (1 << 20))
      << "the first batch must not fit in the server's send buffer";
  ServerProcess server({"--shards", "1", "--output-bytes-max", "65536", "--metrics-address", "127.0.0.1:0"});
  Connection reader(server.port(), {.receive_buffer_bytes = 16 * 1024});
  const Backlog backlog = pipeline_behind_a_stuck_send(server, reader);
  EXPECT_GE(backlog.parsed, first_requests);
  EXPECT_LE(backlog.parsed, first_requests + 1) << "the later requests were parsed past the limit";
  EXPECT_GE(backlog.held_buffers, 1) << "the later requests' input is held, not parsed";
  expect_all_answered_in_order(reader);
}

// The control: the same exchange with a limit above what is unsent parses
// every request at once, so the pause above is the flag's doing.
TEST(ServerFlags, output_bytes_max_above_the_unsent_bytes_lets_parsing_go_on) {
  ServerProcess server({"--shards", "1", "--output-bytes-max", "1073741824", "--metrics-address", "127.0.0.1:0"});
  Connection reader(server.port(), {.receive_buffer_bytes = 16 * 1024});
  const Backlog backlog = pipeline_behind_a_stuck_send(server, reader);
  EXPECT_EQ(backlog.parsed, first_requests + later_requests);
  EXPECT_EQ(backlog.held_buffers, 0);
  expect_all_answered_in_order(reader);
}

// --- HEAD on every GET route ---------------------------------------------------

constexpr std::string_view jwt_secret = "server flags test secret";

std::string bearer_token() {
  const long now = long(std::time(nullptr));
  const std::string payload = "{\"sub\":\"head-user\",\"exp\":" + std::to_string(now + 3600) + "}";
  return "Authorization: Bearer " +
         ringhttp::testing::mint_hs256(R"({"alg":"HS256","typ":"JWT"})", payload, jwt_secret) + "\r\n";
}

// Headers whose values may change between two requests a moment apart.
bool varies_between_requests(const std::string& name, const std::string& path) {
  return equals_ignoring_case(name, "Date") || equals_ignoring_case(name, "RateLimit-Remaining") ||
         equals_ignoring_case(name, "RateLimit-Reset") ||
         (path == "/metrics" && equals_ignoring_case(name, "Content-Length"));  // the counters move
}

// HEAD then GET of every GET route (and its refusals: a bad id, a missing
// token) on one keep-alive connection: the same status and headers, the
// Content-Length the GET's body has, and no body (a body would be read as
// the GET's status line and break the exchange).
TEST(ServerFlags, head_on_every_get_route_has_the_get_status_and_headers_and_no_body) {
  ServerOptions options;
  options.args = {"--shards", "1"};
  options.env = {"RINGHTTP_JWT_SECRET=" + std::string(jwt_secret)};
  ServerProcess server(options);
  Connection connection(server.port());
  const std::string token = bearer_token();
  struct Case {
    std::string path;
    std::string headers;
    int status;
  };
  const std::vector<Case> cases = {
      {"/plaintext", "", 200},          {"/json", "", 200},           {"/ping", "", 200},       {"/mw/ping", "", 200},
      {"/users/42", "", 200},           {"/users/abc", "", 400},      {"/profile", token, 200}, {"/profile", "", 401},
      {"/stream?bytes=70000", "", 200}, {"/stream?bytes=0", "", 200}, {"/metrics", "", 200},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path + (c.headers.empty() ? "" : " with a token"));
    connection.send_all(head(c.path, c.headers) + get(c.path, c.headers));
    const Response h = connection.read_response(/*head=*/true);
    const Response g = connection.read_response();
    EXPECT_EQ(g.status, c.status);
    EXPECT_EQ(h.status, g.status);
    EXPECT_EQ(h.reason, g.reason);
    EXPECT_TRUE(h.body.empty());
    ASSERT_TRUE(h.content_length()) << "HEAD carries the GET's Content-Length";
    if (c.path != "/metrics") {
      EXPECT_EQ(*h.content_length(), g.body.size());
    }
    ASSERT_EQ(h.headers.size(), g.headers.size());
    for (std::size_t i = 0; i < h.headers.size(); ++i) {
      EXPECT_EQ(h.headers[i].first, g.headers[i].first);
      if (!varies_between_requests(h.headers[i].first, c.path)) {
        EXPECT_EQ(h.headers[i].second, g.headers[i].second) << h.headers[i].first;
      }
    }
  }
  // Nothing was left unread between the pairs: the connection is in step.
  EXPECT_TRUE(is_plaintext_ok(round_trip(connection, get("/plaintext"))));
}

// --- --address with IPv6 -----------------------------------------------------

TEST(ServerFlags, address_ipv6_loopback_listens_there_and_answers) {
  if (!has_ipv6_loopback()) GTEST_SKIP() << "this machine has no ::1";
  ServerProcess server({"--shards", "1", "--address", "::1"});
  EXPECT_NE(server.startup_line().find(" listening on [::1]:" + std::to_string(server.port()) + " "), std::string::npos)
      << server.startup_line();
  const std::string reply = exchange_over_ipv6(server.port(), get("/plaintext", "Connection: close\r\n"));
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 200 ")) << reply.substr(0, 40);
  EXPECT_TRUE(reply.ends_with("\r\n\r\n" + std::string(plaintext_body))) << reply;
  // The default address was replaced, not joined: nothing listens on 127.0.0.1.
  EXPECT_THROW(Connection(server.port(), {.timeout = 1s}), std::runtime_error);
}

// --- --connections-max ---------------------------------------------------------

// How long a test waits for a close it expects: a hang guard that holds
// under ASan on a busy machine, not a timing assertion.
constexpr auto close_wait = 30s;

// A full table of connections each in the middle of a request has none to
// reclaim, so the newcomer is closed at once and counted as table_full.
// The server has read the partial requests once bytes_received says so
// (scraped from --metrics-address, which takes no slot).
TEST(ServerFlags, connections_max_full_of_busy_connections_closes_the_newcomer_and_counts_table_full) {
  constexpr int table = 3;
  const std::string partial = "GET /plaintext HTTP/1.1\r\n";
  ServerProcess server(
      {"--shards", "1", "--connections-max", std::to_string(table), "--metrics-address", "127.0.0.1:0"});
  const std::uint16_t metrics_port = *server.metrics_port();
  std::vector<Connection> busy;
  for (int i = 0; i < table; ++i) {
    busy.emplace_back(server.port());
    busy.back().send_all(partial);
  }
  const std::string received = metric::http_bytes_received(server.tls());
  ASSERT_TRUE(
      eventually([&] { return scrape_metrics(metrics_port).value(received) == table * partial.size(); }));

  Connection newcomer(server.port(), {.timeout = close_wait});
  EXPECT_TRUE(newcomer.expect_closed());
  const Metrics m = scrape_metrics(metrics_port);
  EXPECT_EQ(m.value(metric::accept_errors("table_full")), 1);
  EXPECT_EQ(m.value("ringhttp_connections_reclaimed_total"), 0);
  EXPECT_EQ(m.value(metric::accepted), table);
  for (Connection& c : busy) EXPECT_TRUE(is_plaintext_ok(round_trip(c, "Host: x\r\n\r\n")));
}

// A full table of idle connections: the newcomer is served, the oldest idle
// connection (the first: each was accepted after the one before) closed to
// make room and counted, and the others stay open and served.
TEST(ServerFlags, connections_max_full_of_idle_connections_reclaims_the_oldest_and_counts_it) {
  constexpr int table = 3;
  ServerProcess server(
      {"--shards", "1", "--connections-max", std::to_string(table), "--metrics-address", "127.0.0.1:0"});
  std::vector<Connection> idle;
  for (int i = 0; i < table; ++i) {
    idle.emplace_back(server.port(), ConnectOptions{.timeout = close_wait});
    ASSERT_TRUE(is_plaintext_ok(round_trip(idle.back(), get("/plaintext"))));
  }
  EXPECT_TRUE(fresh_connection_is_served(server.port()));
  EXPECT_TRUE(idle.front().expect_closed());
  const Metrics m = scrape_metrics(*server.metrics_port());
  EXPECT_EQ(m.value("ringhttp_connections_reclaimed_total"), 1);
  EXPECT_EQ(m.value(metric::accept_errors("table_full")), 0);
  for (int i = 1; i < table; ++i) EXPECT_TRUE(is_plaintext_ok(round_trip(idle[i], get("/plaintext")))) << i;
}

}  // namespace
}  // namespace socket_test
