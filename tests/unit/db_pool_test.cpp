// The database pool (server/db/pool.hpp) on the engine's foreign sockets
// (server/db/engine_driver.hpp), over the fake backend: the tests make
// the completions a kernel would. libpq does its own I/O while it
// connects, so it talks to real loopback sockets: a port where nothing
// listens, and a listener the test answers as a Postgres server would
// (trust authentication, then the pool's two prepares). Once ready, the
// pool's own protocol goes through the fake backend alone.

#include "server/db/pool.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/batch_loop.hpp"
#include "server/db/engine_driver.hpp"
#include "tests/unit/fake_backend.hpp"
#include "tests/unit/pg_messages.hpp"

namespace ringhttp::server::db {
namespace {

using testing_support::FakeIo;
using io::Op;

// The test's own reads and accepts give up after a while: a step of
// libpq's that did not come fails the test instead of hanging it.
void bound_reads(int fd) {
  const timeval limit{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

// A loopback socket bound to an ephemeral port: listening, or not (a
// connect to it is refused, and while it stays open nothing else can
// take the port).
int listen_loopback(std::uint16_t& port, bool listen) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  if (!listen) return fd;
  EXPECT_EQ(::listen(fd, 4), 0);
  bound_reads(fd);
  return fd;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    ASSERT_GT(n, 0);
    bytes.remove_prefix(std::size_t(n));
  }
}

std::string read_exactly(int fd, std::size_t n) {
  std::string out(n, '\0');
  std::size_t at = 0;
  while (at < n) {
    const ssize_t r = ::read(fd, out.data() + at, n - at);
    if (r <= 0) return out.substr(0, at);
    at += std::size_t(r);
  }
  return out;
}

using testing_support::pg::be32;
using testing_support::pg::get32;
using testing_support::pg::message;

// Reads frontend messages until `syncs` Syncs have come.
void read_until_syncs(int fd, int syncs) {
  while (syncs > 0) {
    const std::string head = read_exactly(fd, 5);
    ASSERT_EQ(head.size(), 5u);
    read_exactly(fd, get32(head.substr(1)) - 4);
    if (head[0] == 'S') --syncs;
  }
}

struct Results final : Sink {
  void on_result(const Waiter& waiter, const Result& result) override {
    got.push_back({waiter.tag, result.outcome, std::string(result.id), std::string(result.name)});
  }
  struct Got {
    std::uint64_t tag;
    Outcome outcome;
    std::string id, name;
  };
  std::vector<Got> got;
};

class DbPoolTest : public testing::Test {
 protected:
  using Driver = EngineDriver<FakeIo>;

  void SetUp() override {
    ASSERT_EQ(io_.init({}), "");
    ASSERT_EQ(driver_.init(1), "");
    refusing_ = listen_loopback(refused_port_, false);
    listener_ = listen_loopback(server_port_, true);
    config_.conninfo = "host=127.0.0.1,127.0.0.1 port=" + std::to_string(refused_port_) + "," +
                       std::to_string(server_port_) + " dbname=test user=test sslmode=disable";
    config_.links = 1;
    config_.queue_max = 8;
    config_.timeout_ms = 1'000;
    pool_ = std::make_unique<Pool>(config_, driver_, results_, counters_, now_);
    driver_.attach(*pool_);
  }
  void TearDown() override {
    pool_.reset();
    if (peer_ >= 0) ::close(peer_);
    ::close(listener_);
    ::close(refusing_);
  }

  // The link's socket in use (not closing), or nullptr.
  Socket* current() {
    auto& table = driver_.engine().table();
    for (std::uint32_t i = 0; i < table.constructed(); ++i) {
      if (table[i].in_use && !table[i].closing) return &table[i];
    }
    return nullptr;
  }
  std::uint32_t slots_in_use() {
    auto& table = driver_.engine().table();
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < table.constructed(); ++i) n += table[i].in_use ? 1 : 0;
    return n;
  }
  // The armed poll of the current socket completes with `mask`.
  void poll_completes(bool write, std::int32_t mask) {
    Socket* s = current();
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(io::poll_armed(*s, write)) << (write ? "a write poll" : "a read poll") << " is armed";
    ASSERT_TRUE(driver_.on_completion({io::tag(write ? Op::db_write : Op::db_read, *s), mask, 0}));
  }
  const FakeIo::Asked& last(Op op) {
    for (auto it = io_.asked.rbegin(); it != io_.asked.rend(); ++it) {
      if (it->op == op) return *it;
    }
    static const FakeIo::Asked none;
    ADD_FAILURE() << "nothing of op " << int(op) << " was asked";
    return none;
  }

  // libpq's first host refuses; it moves to the second, which the test
  // answers until the pool is ready and speaks its own protocol.
  void connect_through_the_second_host() {
    pool_->start();
    poll_completes(true, POLLOUT | POLLERR);  // the refused connect
    poll_completes(true, POLLOUT);            // the second host's: connected
    poll_completes(true, POLLOUT);            // writable: libpq sends its startup packet
    peer_ = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    ASSERT_GE(peer_, 0) << "libpq connected to the second host";
    bound_reads(peer_);
    const std::string length = read_exactly(peer_, 4);
    ASSERT_EQ(length.size(), 4u);
    read_exactly(peer_, get32(length) - 4);  // the startup packet
    write_all(peer_, message('R', be32(0)) + message('Z', "I"));  // AuthenticationOk, ReadyForQuery
    poll_completes(false, POLLIN);
    read_until_syncs(peer_, int(statement_count));  // the prepares, each with its Sync
    std::string answers;
    for (std::size_t i = 0; i < statement_count; ++i) answers += message('1', "") + message('Z', "I");
    write_all(peer_, answers);
    poll_completes(false, POLLIN);
    ASSERT_EQ(counters_.links_up.read(), 1u);
    ASSERT_EQ(last(Op::db_recv).op, Op::db_recv) << "the own protocol's receive is armed";
  }

  std::uint64_t now_ = 1'000;
  FakeIo io_;
  Driver driver_{io_};
  Results results_;
  Counters counters_;
  PoolConfig config_;
  std::unique_ptr<Pool> pool_;
  std::uint16_t refused_port_ = 0;
  std::uint16_t server_port_ = 0;
  int listener_ = -1;
  int refusing_ = -1;
  int peer_ = -1;
};

TEST_F(DbPoolTest, a_socket_libpq_changes_while_connecting_takes_a_new_slot) {
  pool_->start();
  Socket* first = current();
  ASSERT_NE(first, nullptr);
  const std::uint32_t first_slot = first->slot;
  const std::uint32_t first_generation = first->generation;
  const std::uint64_t first_tag = io::tag(Op::db_write, *first);
  poll_completes(true, POLLOUT | POLLERR);  // refused: libpq moves to the second host by itself

  Socket* second = current();
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(second->slot != first_slot || second->generation != first_generation)
      << "the new socket is a new slot, or the same slot with a new generation";
  EXPECT_TRUE(io::poll_armed(*second, true));
  EXPECT_EQ(slots_in_use(), 1u) << "the first socket had nothing in flight: its slot was released at once";
  EXPECT_FALSE(driver_.on_completion({first_tag, POLLOUT, 0})) << "the first socket's tag reaches nothing now";
  EXPECT_EQ(counters_.errors_connect.read(), 0u);
}

TEST_F(DbPoolTest, the_engine_resumes_a_short_write_of_the_queries) {
  connect_through_the_second_host();
  ASSERT_EQ(pool_->read_user("7", Waiter{42, nullptr}), Submit::accepted);
  ASSERT_EQ(pool_->read_user("8", Waiter{43, nullptr}), Submit::accepted);
  pool_->send_queued();
  const FakeIo::Asked whole = last(Op::db_send);
  ASSERT_GT(whole.bytes.size(), 8u);
  const std::size_t half = whole.bytes.size() / 2;
  const std::size_t sends = io_.asked.size();
  ASSERT_TRUE(driver_.on_completion({whole.tag, std::int32_t(half), 0}));
  ASSERT_EQ(io_.asked.size(), sends + 1) << "the rest was sent again by the engine";
  EXPECT_EQ(io_.asked.back().bytes, whole.bytes.substr(half)) << "from exactly the next unsent byte";
  ASSERT_TRUE(driver_.on_completion({whole.tag, std::int32_t(whole.bytes.size() - half), 0}));

  // Both results, in one receive.
  const FakeIo::Asked recv = last(Op::db_recv);
  std::string rows;
  for (const char* id : {"7", "8"}) {
    const std::string name = std::string("name") + id;
    const std::string row = std::string("\0\2", 2) + be32(1) + id + be32(std::uint32_t(name.size())) + name;
    rows += message('2', "") + message('D', row) + message('C', std::string("SELECT 1\0", 9)) + message('Z', "I");
  }
  ASSERT_LE(rows.size(), recv.len);
  std::memcpy(recv.into, rows.data(), rows.size());
  ASSERT_TRUE(driver_.on_completion({recv.tag, std::int32_t(rows.size()), 0}));
  ASSERT_EQ(results_.got.size(), 2u);
  EXPECT_EQ(results_.got[0].tag, 42u);
  EXPECT_EQ(results_.got[0].outcome, Outcome::row);
  EXPECT_EQ(results_.got[0].name, "name7");
  EXPECT_EQ(results_.got[1].tag, 43u);
  EXPECT_EQ(results_.got[1].id, "8");
  EXPECT_EQ(last(Op::db_recv).tag, recv.tag) << "the next receive is armed on the same slot";
  EXPECT_NE(last(Op::db_recv).into, nullptr);
}

TEST_F(DbPoolTest, a_connection_closed_with_a_receive_in_flight_reconnects_once_its_slot_is_released) {
  connect_through_the_second_host();
  ASSERT_EQ(pool_->read_user("7", Waiter{42, nullptr}), Submit::accepted);
  pool_->send_queued();
  const FakeIo::Asked send = last(Op::db_send);
  ASSERT_TRUE(driver_.on_completion({send.tag, std::int32_t(send.bytes.size()), 0}));
  const FakeIo::Asked recv = last(Op::db_recv);

  now_ += config_.timeout_ms;  // the query's deadline
  pool_->on_tick();
  ASSERT_EQ(results_.got.size(), 1u);
  EXPECT_EQ(results_.got[0].outcome, Outcome::unavailable);
  EXPECT_EQ(counters_.errors_timeout.read(), 1u);
  const FakeIo::Asked cancel = io_.asked.back();
  EXPECT_EQ(cancel.op, Op::cancel);
  EXPECT_EQ(cancel.target, recv.tag) << "the receive in flight (into the link's buffer) is cancelled";
  EXPECT_EQ(slots_in_use(), 1u) << "its slot is closing, not released";

  now_ += Pool::reconnect_backoff_max_ms;
  const std::size_t asked = io_.asked.size();
  pool_->on_tick();
  EXPECT_EQ(io_.asked.size(), asked) << "no reconnect while the receive may still write into the buffer";
  EXPECT_EQ(current(), nullptr);

  // The receive ends (-ECANCELED), then its cancel: the slot is released.
  ASSERT_TRUE(driver_.on_completion({recv.tag, -ECANCELED, 0}));
  EXPECT_EQ(slots_in_use(), 1u);
  ASSERT_TRUE(driver_.on_completion({cancel.tag, 0, 0}));
  EXPECT_EQ(slots_in_use(), 0u);
  EXPECT_EQ(results_.got.size(), 1u) << "the pool heard nothing of the closed socket's completions";

  pool_->on_tick();
  Socket* again = current();
  ASSERT_NE(again, nullptr) << "reconnecting";
  EXPECT_TRUE(io::poll_armed(*again, true));
  EXPECT_NE(io::tag(Op::db_write, *again), recv.tag);
}

}  // namespace
}  // namespace ringhttp::server::db
