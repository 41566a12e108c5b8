// Connections up to the descriptor limit, opened and closed twice in one
// server process: nothing lost. The server runs with RLIMIT_NOFILE at this
// machine's hard limit (20,000 here; root cannot raise it) and
// --connections-max a little under it; the test's own processes have the
// same limit, so the clients are spread over a few forked children that
// the test drives through pipes. Most connections have had one request
// answered and sit idle; some have a request in progress (part of a header,
// or part of a body: each holds an output block); some have pipelined
// requests behind a response they do not read (input paused: an output
// block, a held-input ring and a receive buffer or spill block each). While
// they are all open, /metrics shows every connection and what each kind
// holds, and the server has one descriptor per connection more than at
// start (with fixed-files none: each is a direct descriptor in its ring's
// table, which the same limit bounds); once they are closed, every gauge is back to zero and the server's
// descriptor count back to exactly what it was. The second round, in the
// same server process, shows the table filled again after the first: a
// full table and its descriptors all handed out and all given back twice.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/checks.hpp"
#include "support/connection.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/proc_state.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;

const std::string blocks_lent = "ringhttp_output_blocks_lent";
const std::string held_rings = "ringhttp_held_input_rings_lent";
const std::string buffers_held = "ringhttp_input_buffers_held";
const std::string spill_used = "ringhttp_input_spill_blocks_used";
const std::string block_waits = "ringhttp_output_block_waits_total";
const std::string input_overflow = "ringhttp_input_overflow_total";

// Where the hard limit is higher than these machines', the test still opens
// at most about this many connections: bounded in count everywhere.
constexpr rlim_t descriptors_max = 20000;
constexpr int children = 3;
// --connections-max is the limit less this: room for the server's own
// descriptors (standard streams, listener, ring, eventfds, metrics
// listener), a scrape's connection and the last fresh connection.
constexpr std::size_t server_headroom = 48;
// Connections a child opens before it waits for their answers: the
// children together never have more than a few hundred in the listen
// queue (4,096 long), so no SYN is dropped and retried.
constexpr std::size_t batch = 128;
// A hang guard for a child's round (every step in it is an event: a
// connect, an answer read), never a measure of speed: 20,000 connections
// under ASan on a busy two-core machine are far from it.
constexpr auto child_guard = 300s;
// Waits on the server's gauges after a round's opening or closing: as
// generous, for the same reason.
constexpr auto gauge_guard = 60s;

// Per child, how many connections of each kind.
struct Share {
  std::size_t idle = 0;
  std::size_t partial_header = 0;
  std::size_t partial_body = 0;
  std::size_t paused = 0;

  std::size_t total() const { return idle + partial_header + partial_body + paused; }
  static Share of(std::size_t n) {
    Share s;
    s.partial_header = std::min<std::size_t>(150, n / 8);
    s.partial_body = std::min<std::size_t>(150, n / 8);
    s.paused = std::min<std::size_t>(200, n / 8);
    s.idle = n - s.partial_header - s.partial_body - s.paused;
    return s;
  }
};

// What the connections send.
const std::string plaintext = get("/plaintext");
const std::string partial_header = plaintext.substr(0, plaintext.find("localhost") + 3);  // mid Host value
const std::string echo_body = R"({"name":"Ada","n":21})";
const std::string partial_body = [] {
  const std::string echo = request(
      "POST", "/echo", "Content-Type: application/json\r\nContent-Length: " + std::to_string(echo_body.size()) + "\r\n",
      echo_body);
  return echo.substr(0, echo.size() - 8);  // mid body
}();
// A response far larger than the kernel buffers for a reader with a 4 KiB
// window, then more requests than the response queue takes (32 responses):
// the stream's send stalls, the parser pauses with the queue full, and the
// rest of the pipeline is held. One segment (see paused_options), so it
// arrives as one chunk and each such connection holds exactly one.
const std::string paused_pipeline = [] {
  std::string p = get(stream_path(4ull << 20));
  for (int i = 0; i < 36; ++i) p += plaintext;
  return p;
}();
constexpr int paused_segment_bytes = 2048;

ConnectOptions options_from(const std::string& source) {
  ConnectOptions o;
  o.timeout = 60s;  // hang guard for each read
  o.source_address = source;
  return o;
}

// The paused connections' reader: a 4 KiB receive window, and a segment
// size that keeps the server's send buffer for them small (the kernel sizes
// it from the segment size: about 128 KiB each instead of 4 MiB at
// loopback's 64 KiB segments, 600 of them).
ConnectOptions paused_options(const std::string& source) {
  ConnectOptions o = options_from(source);
  o.receive_buffer_bytes = 4096;
  o.max_segment_bytes = paused_segment_bytes;
  return o;
}

// ---- the child side: no gtest here; failures go back on the report pipe ----

struct ChildConnections {
  std::vector<Connection> idle;
  std::vector<Connection> in_progress;
  std::vector<Connection> paused;
};

// Opens `count` connections, each with one request answered, in batches.
void open_answered(std::vector<Connection>& into, std::size_t count, std::uint16_t port, const ConnectOptions& o) {
  for (std::size_t start = 0; start < count; start += batch) {
    const std::size_t end = std::min(count, start + batch);
    const std::size_t first = into.size();
    for (std::size_t i = start; i < end; ++i) into.emplace_back(port, o);
    for (std::size_t i = first; i < into.size(); ++i) into[i].send_all(plaintext);
    for (std::size_t i = first; i < into.size(); ++i) {
      const testing::AssertionResult ok = is_plaintext_ok(into[i].read_response());
      if (!ok) throw std::runtime_error(std::string("connection ") + std::to_string(i) + ": " + ok.message());
    }
  }
}

void open_share(ChildConnections& c, const Share& share, std::uint16_t port, const std::string& source) {
  open_answered(c.idle, share.idle, port, options_from(source));
  open_answered(c.in_progress, share.partial_header + share.partial_body, port, options_from(source));
  for (std::size_t i = 0; i < c.in_progress.size(); ++i) {
    c.in_progress[i].send_all(i < share.partial_header ? partial_header : partial_body);
  }
  // No answer is read on these, so nothing shows they were accepted: the
  // parent waits for that on /metrics. A few hundred connects at most are
  // queued at once.
  for (std::size_t i = 0; i < share.paused; ++i) {
    c.paused.emplace_back(port, paused_options(source));
    c.paused.back().send_all(paused_pipeline);
  }
}

// Half the idle connections end with a FIN, half with a reset; the others
// with a FIN while the server waits for the rest of a request, and the
// paused ones with a reset (their unread response).
void close_share(ChildConnections& c) {
  for (std::size_t i = 0; i < c.idle.size(); ++i) {
    if (i % 2 == 0) {
      c.idle[i].close();
    } else {
      c.idle[i].reset();
    }
  }
  c = ChildConnections{};
}

bool write_line(int fd, const std::string& line) {
  std::string out = line;
  std::replace(out.begin(), out.end(), '\n', ' ');
  out += '\n';
  std::string_view rest = out;
  while (!rest.empty()) {
    const ssize_t n = ::write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// One line from a pipe, without its newline; nothing on EOF (or, with a
// deadline, when it passes first).
std::optional<std::string> read_line(int fd, std::optional<std::chrono::steady_clock::time_point> deadline = {}) {
  std::string line;
  while (true) {
    if (deadline) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(0, left.count())));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return std::nullopt;
    }
    char ch;
    const ssize_t n = ::read(fd, &ch, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    if (ch == '\n') return line;
    line += ch;
  }
}

// Commands, one a line: "open PORT ROUND" and "close"; EOF ends the child.
// Each command is answered with "ok" or "error WHAT".
[[noreturn]] void child_main(int index, int commands, int reports, const Share& share) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
  ChildConnections connections;
  while (const std::optional<std::string> command = read_line(commands)) {
    std::istringstream words(*command);
    std::string verb;
    words >> verb;
    try {
      if (verb == "open") {
        unsigned port = 0, round = 0;
        words >> port >> round;
        // Its own source address each child and round: a round's ports in
        // TIME_WAIT do not take the next one's.
        const std::string source = "127.0." + std::to_string(round + 1) + "." + std::to_string(index + 2);
        open_share(connections, share, static_cast<std::uint16_t>(port), source);
      } else if (verb == "close") {
        close_share(connections);
      } else {
        throw std::runtime_error("unknown command \"" + *command + "\"");
      }
      if (!write_line(reports, "ok")) ::_exit(3);
    } catch (const std::exception& e) {
      if (!write_line(reports, "error " + verb + ": " + e.what())) ::_exit(3);
    }
  }
  close_share(connections);
  ::_exit(0);  // no gtest teardown, no leak check of a forked copy
}

// ---- the parent side ----

// The children, forked before the server starts (before its process and
// the thread that drains its output). The destructor makes sure none
// outlives the test.
class Fleet {
 public:
  explicit Fleet(const std::vector<Share>& shares) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &old_sigpipe_);  // a child gone: write() fails instead
    for (std::size_t i = 0; i < shares.size(); ++i) {
      int commands[2], reports[2];
      if (::pipe2(commands, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
      if (::pipe2(reports, O_CLOEXEC) != 0) throw std::runtime_error("pipe2");
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        for (const Child& other : children_) {
          ::close(other.commands);
          ::close(other.reports);
        }
        ::close(commands[1]);
        ::close(reports[0]);
        child_main(static_cast<int>(i), commands[0], reports[1], shares[i]);
      }
      ::close(commands[0]);
      ::close(reports[1]);
      children_.push_back({pid, commands[1], reports[0]});
    }
  }

  ~Fleet() {
    for (Child& c : children_) {
      if (c.commands >= 0) ::close(c.commands);
      if (c.reports >= 0) ::close(c.reports);
      if (c.pid > 0) {
        ::kill(c.pid, SIGKILL);
        ::waitpid(c.pid, nullptr, 0);
      }
    }
    ::sigaction(SIGPIPE, &old_sigpipe_, nullptr);
  }

  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  // Sends the command to every child, then waits for every child's answer.
  testing::AssertionResult run(const std::string& command) {
    for (std::size_t i = 0; i < children_.size(); ++i) {
      if (!write_line(children_[i].commands, command)) {
        return testing::AssertionFailure() << "child " << i << " is gone (" << command << ")";
      }
    }
    const auto deadline = std::chrono::steady_clock::now() + child_guard;
    testing::AssertionResult result = testing::AssertionSuccess();
    for (std::size_t i = 0; i < children_.size(); ++i) {
      const std::optional<std::string> answer = read_line(children_[i].reports, deadline);
      if (!answer) {
        result = testing::AssertionFailure() << "child " << i << " did not answer \"" << command << "\"";
      } else if (*answer != "ok") {
        result = testing::AssertionFailure() << "child " << i << ": " << *answer;
      }
    }
    return result;
  }

  // Ends the children (EOF on their commands) and reaps them; success when
  // each exited 0.
  testing::AssertionResult finish() {
    for (Child& c : children_) {
      ::close(c.commands);
      c.commands = -1;
    }
    testing::AssertionResult result = testing::AssertionSuccess();
    for (std::size_t i = 0; i < children_.size(); ++i) {
      Child& c = children_[i];
      int status = 0;
      const bool reaped = eventually([&] { return ::waitpid(c.pid, &status, WNOHANG) == c.pid; }, 60s);
      if (!reaped) {
        result = testing::AssertionFailure() << "child " << i << " did not exit";
        continue;  // the destructor kills it
      }
      c.pid = -1;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        result = testing::AssertionFailure() << "child " << i << " ended with status " << status;
      }
    }
    return result;
  }

 private:
  struct Child {
    pid_t pid;
    int commands;  // write end
    int reports;   // read end
  };
  std::vector<Child> children_;
  struct sigaction old_sigpipe_ {};
};

std::string describe(const Metrics& m) {
  std::ostringstream out;
  for (const std::string& name :
       {metric::active, blocks_lent, held_rings, buffers_held, spill_used, block_waits, input_overflow,
        metric::accept_errors("fd_limit"), metric::accept_errors("table_full"), metric::timeouts("send")}) {
    out << "\n  " << name << " = " << m.value(name);
  }
  return out.str();
}

// `total` connections split evenly over the children; `all` is their sum.
std::vector<Share> split(std::size_t total, Share& all) {
  std::vector<Share> shares;
  for (int i = 0; i < children; ++i) {
    const Share s = Share::of(total / children + (static_cast<std::size_t>(i) < total % children ? 1 : 0));
    shares.push_back(s);
    all.idle += s.idle;
    all.partial_header += s.partial_header;
    all.partial_body += s.partial_body;
    all.paused += s.paused;
  }
  return shares;
}

// What the server must show with the fleet's connections open, and after
// they close.
struct Expectation {
  const ServerProcess& server;
  std::uint16_t metrics;
  Share all;
  std::size_t total;
  std::size_t baseline;  // descriptors open with no connection
  // With a provided-buffer ring each held chunk is a receive buffer or,
  // past the paused connections' share (half the shard's 1,024), a spill
  // block; without one the kernel copies into the slot's own buffer.
  bool provided_buffers;
  bool direct_descriptors;
  // With incremental buffers a segment may land across the end of one
  // buffer and the start of the next: held as two pieces, each counted.
  std::size_t pieces_per_segment_max;

  explicit Expectation(const ServerProcess& s, const Share& shares, std::size_t connections)
      : server(s),
        metrics(*s.metrics_port()),
        all(shares),
        total(connections),
        baseline(open_descriptors(s.pid())),
        provided_buffers(s.startup_line().find("bufring") != std::string::npos),
        direct_descriptors(s.startup_line().find("fixed-files") != std::string::npos),
        pieces_per_segment_max(s.startup_line().find("incremental-buffers") != std::string::npos ? 2 : 1) {}

  // All open: each kind holds what it should, the idle ones nothing.
  testing::AssertionResult all_open(Metrics& last) const {
    const std::size_t lent = all.partial_header + all.partial_body + all.paused;
    const auto held_pieces_fit = [&](double held) {
      return held >= double(all.paused) && held <= double(all.paused * pieces_per_segment_max);
    };
    const bool loaded = eventually(
        [&] {
          last = scrape_metrics(metrics);
          return last.value(metric::active) == total && last.value(blocks_lent) == lent &&
                 last.value(held_rings) == all.paused &&
                 (!provided_buffers || held_pieces_fit(last.value(buffers_held) + last.value(spill_used)));
        },
        gauge_guard);
    if (!loaded) {
      return testing::AssertionFailure() << "expected " << total << " active, " << lent << " blocks lent, "
                                         << all.paused << " held rings and as many buffers and spill blocks held (up to "
                                         << pieces_per_segment_max << " per connection); last scrape:"
                                         << describe(last);
    }
    if (provided_buffers && last.value(buffers_held) == 0) {
      return testing::AssertionFailure() << "no receive buffer held" << describe(last);
    }
    if (provided_buffers && all.paused > 512 && last.value(spill_used) == 0) {
      return testing::AssertionFailure() << "no spill block used past the paused connections' share" << describe(last);
    }
    // With fixed-files the connections are direct descriptors in the
    // ring's table, and the process's own table holds none of them.
    const std::size_t per_connection = direct_descriptors ? 0 : total;
    const std::size_t open = open_descriptors(server.pid());
    if (open < baseline + per_connection || open > baseline + per_connection + 1) {
      return testing::AssertionFailure() << open << " descriptors open with every connection, expected "
                                         << baseline + per_connection << " (one more at most: a scrape's own)";
    }
    return testing::AssertionSuccess();
  }

  testing::AssertionResult all_closed(Metrics& last) const {
    std::size_t descriptors = 0;
    const bool drained = eventually(
        [&] {
          last = scrape_metrics(metrics);
          descriptors = open_descriptors(server.pid());
          return last.value(metric::active) == 0 && last.value(blocks_lent) == 0 && last.value(held_rings) == 0 &&
                 last.value(buffers_held) == 0 && last.value(spill_used) == 0 && descriptors == baseline;
        },
        gauge_guard);
    if (drained) return testing::AssertionSuccess();
    return testing::AssertionFailure() << "after closing every connection: " << descriptors << " descriptors open, "
                                       << baseline << " before; last scrape:" << describe(last);
  }
};

TEST(DescriptorLimit, connections_up_to_the_limit_open_and_close_twice_with_nothing_lost) {
  rlimit own{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &own), 0);
  const rlim_t limit = std::min(own.rlim_max, descriptors_max);
  ASSERT_GT(limit, 1024u) << "a hard RLIMIT_NOFILE of " << own.rlim_max << " is too small for this test";
  const std::size_t connections_max = limit - server_headroom;

  // Every connection is one of the table's: total at most connections_max.
  const std::size_t total = connections_max - 8;
  Share all;
  const std::vector<Share> shares = split(total, all);
  ASSERT_EQ(all.total(), total);
  ASSERT_LT(paused_pipeline.size() + 64, static_cast<std::size_t>(paused_segment_bytes)) << "one segment";
  Fleet fleet(shares);

  // No deadline of the server's closes any of them while the test runs.
  const std::string long_ms = "3600000";
  ServerProcess server(
      ServerOptions{{"--shards", "1", "--connections-max", std::to_string(connections_max), "--metrics-address",
                     "127.0.0.1:0", "--header-timeout-ms", long_ms, "--idle-timeout-ms", long_ms, "--body-timeout-ms",
                     long_ms, "--send-timeout-ms", long_ms},
                    limit});
  // What the server has open with no connection; a warm-up request and a
  // scrape open nothing for good.
  const Expectation expect(server, all, total);
  ASSERT_GT(expect.baseline, 0u);
  ASSERT_LT(expect.baseline + total + 4, limit) << "too little room under the limit";
  ASSERT_TRUE(fresh_connection_is_served(server.port()));
  Metrics last;
  ASSERT_TRUE(eventually([&] {
    last = scrape_metrics(expect.metrics);
    return last.value(metric::active) == 0 && open_descriptors(server.pid()) == expect.baseline;
  })) << "after a warm-up: "
      << open_descriptors(server.pid()) << " descriptors, " << expect.baseline << " at start" << describe(last);

  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round + 1) + " of " + std::to_string(total) + " connections");
    ASSERT_TRUE(fleet.run("open " + std::to_string(server.port()) + " " + std::to_string(round)));
    ASSERT_TRUE(expect.all_open(last));
    ASSERT_TRUE(fleet.run("close"));
    ASSERT_TRUE(expect.all_closed(last));
  }
  EXPECT_TRUE(fleet.finish());

  EXPECT_TRUE(fresh_connection_is_served(server.port())) << "a fresh connection after both rounds";
  last = scrape_metrics(expect.metrics);
  EXPECT_EQ(last.value(block_waits), 0) << "the pool has as many blocks as the table has slots";
  EXPECT_EQ(last.value(input_overflow), 0);
  EXPECT_EQ(last.value(metric::stale_completions), 0);
  for (const char* kind : {"fd_limit", "memory", "table_full", "other"}) {
    EXPECT_EQ(last.value(metric::accept_errors(kind)), 0) << kind;
  }
  for (const char* kind : {"header", "idle", "body", "send"}) {
    EXPECT_EQ(last.value(metric::timeouts(kind)), 0) << kind;
  }
  EXPECT_EQ(last.value(metric::accepted), 2 * total + 2);
}

}  // namespace
}  // namespace socket_test
