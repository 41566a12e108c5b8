// The client's load session (client/load/session.hpp) over the connection
// engine and a backend that only records (fake_backend.hpp): no socket,
// no thread. The test does what the worker does with each completion, so
// it checks the session's decisions one completion at a time: connect,
// send, a response counted and the next request sent, a failure that
// cancels what is in flight, and a socket closed only once nothing of it
// is left.

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "client/load/engine_link.hpp"
#include "client/load/session.hpp"
#include "client/options.hpp"
#include "core/io/engine.hpp"
#include "tests/unit/fake_backend.hpp"

namespace ringhttp::client {
namespace {

using testing_support::FakeIo;
using io::Op;

constexpr std::string_view ok_response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

Options parsed(std::vector<std::string> args) {
  args.insert(args.begin(), "client");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Options out;
  EXPECT_EQ(parse_options(int(argv.size()), argv.data(), out), ParseOutcome::run);
  return out;
}

class LoadSessionTest : public testing::Test {
 protected:
  void start(std::vector<std::string> args) {
    options_ = parsed(std::move(args));
    request_ = std::make_unique<RequestBytes>(options_);
    plan_.connections = options_.connections;
    plan_.requests = options_.requests;
    session_ = std::make_unique<LoadSession>(options_, *request_, plan_, results_);
    FakeIo::Config backend;
    backend.recv_buffer_bytes = FakeIo::buffer_bytes;
    io::Engine<FakeIo, Connection>::Config config;
    config.slots = plan_.connections;
    ASSERT_EQ(loop_.engine.init(backend, config), "");
    ASSERT_EQ(session_->start(Timeline{}, loop_.engine.table(), loop_.engine.dirty(), loop_), "");
    after_batch();
  }
  void TearDown() override {
    if (session_) session_->end_connections();
  }

  FakeIo& io() { return loop_.engine.backend(); }
  Connection& conn() { return loop_.engine.table()[0]; }
  std::uint64_t tag(Op op) { return io::tag(op, conn()); }
  std::size_t asked(Op op) const {
    std::size_t n = 0;
    for (const FakeIo::Asked& a : loop_.engine.backend().asked) n += a.op == op ? 1 : 0;
    return n;
  }
  const FakeIo::Asked& last(Op op) const {
    const auto& all = loop_.engine.backend().asked;
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (it->op == op) return *it;
    }
    static const FakeIo::Asked none;
    ADD_FAILURE() << "nothing of that operation was asked";
    return none;
  }

  // What the worker does after a batch's completions.
  void after_batch() {
    session_->before_dirty();
    const auto work = [this](Connection& c) { session_->after_dirty(c); };
    loop_.engine.drain_dirty(work);
    session_->after_batch();
    loop_.engine.drain_dirty(work);
  }
  // Each of these is one completion, then the batch's end.
  void connected(std::int32_t res = 0) {
    session_->on_connected(conn(), loop_.engine.on_connect(conn(), {tag(Op::connect), res, 0}));
    after_batch();
  }
  void sent(std::int32_t res) {
    session_->on_sent(conn(), loop_.engine.on_send(conn(), {tag(Op::send), res, 0}));
    after_batch();
  }
  void received(std::string_view bytes) {
    receive(io().deliver(tag(Op::recv), bytes, true));
  }
  void receive(const io::Completion& c) {
    const io::Received r = loop_.engine.on_receive(conn(), c);
    if (r.kind == io::Received::Kind::data) {
      session_->count_received(r.res);
      session_->on_received_piece(conn(), r.data, r.len);
      loop_.engine.give_back(r.buffer_id);
    }
    session_->after_receive(conn(), r.kind);
    after_batch();
  }
  void cancelled() {
    loop_.engine.on_cancel(conn(), {tag(Op::cancel), 0, 0});
    if (conn().state == ConnState::closing) loop_.engine.mark_dirty(conn());
    after_batch();
  }

  Options options_;
  std::unique_ptr<RequestBytes> request_;
  WorkerPlan plan_;
  WorkerResults results_;
  EngineLink<FakeIo> loop_;  // the worker's link to its engine, over the fake
  std::unique_ptr<LoadSession> session_;
};

TEST_F(LoadSessionTest, connects_then_sends_and_each_response_sends_the_next_request) {
  start({"-c", "1", "-n", "2", "http://127.0.0.1:9/"});
  ASSERT_EQ(asked(Op::connect), 1u);
  EXPECT_EQ(asked(Op::send), 0u) << "nothing is sent before the connect completes";
  connected();
  EXPECT_EQ(conn().state, ConnState::open);
  EXPECT_EQ(asked(Op::recv), 1u);
  ASSERT_EQ(asked(Op::send), 1u);
  const std::string request = last(Op::send).bytes;
  EXPECT_EQ(request.rfind("GET / HTTP/1.1\r\n", 0), 0u) << request;
  sent(std::int32_t(request.size()));
  received(ok_response);
  EXPECT_EQ(results_.stats.responses, 1u);
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::status)], 0u);
  ASSERT_EQ(asked(Op::send), 2u) << "the answer sends the next request";
  sent(std::int32_t(request.size()));
  received(ok_response);
  EXPECT_EQ(results_.stats.responses, 2u);
  EXPECT_EQ(asked(Op::send), 2u) << "-n 2: nothing after the second";
  EXPECT_EQ(conn().state, ConnState::closing) << "every request answered: the session stops";
}

TEST_F(LoadSessionTest, a_reset_cancels_what_is_in_flight_and_closes_only_at_zero) {
  start({"-c", "1", "-n", "4", "http://127.0.0.1:9/"});
  connected();
  ASSERT_EQ(asked(Op::send), 1u);
  // The peer resets while the send and the receive are in flight.
  receive({tag(Op::recv), -ECONNRESET, 0});
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::read)], 1u);
  EXPECT_EQ(conn().state, ConnState::closing);
  EXPECT_EQ(asked(Op::cancel), 1u) << "the send's cancel (the receive ended with the reset)";
  EXPECT_TRUE(io().closed.empty()) << "the send and its cancel are still in flight";
  sent(-ECANCELED);
  EXPECT_TRUE(io().closed.empty()) << "the cancel is still in flight";
  cancelled();
  ASSERT_EQ(io().closed.size(), 1u) << "closed once nothing of it is in flight";
  // The slot reconnects at once (a read error is not a connect failure).
  EXPECT_EQ(asked(Op::connect), 2u);
  EXPECT_EQ(conn().state, ConnState::connecting);
}

TEST_F(LoadSessionTest, a_refused_connect_is_an_error_and_the_slot_backs_off) {
  start({"-c", "1", "-d", "1s", "http://127.0.0.1:9/"});
  connected(-ECONNREFUSED);
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::connect)], 1u);
  EXPECT_EQ(io().closed.size(), 1u) << "nothing was in flight: closed in the same batch";
  EXPECT_EQ(conn().state, ConnState::idle);
  EXPECT_EQ(asked(Op::connect), 1u) << "the next connect waits for the back-off";
}

}  // namespace
}  // namespace ringhttp::client
