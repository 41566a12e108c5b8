// The client's load session (client/load/session.hpp) over the connection
// engine and a backend that only records (fake_backend.hpp): no socket,
// no thread. The test does what the worker does with each completion, so
// it checks the session's decisions one completion at a time: connect,
// send, a response counted and the next request sent, a failure that
// cancels what is in flight, and a socket closed only once nothing of it
// is left. Then the same over https, against a server's TLS session in
// memory: a response record cut at every byte, a close_notify, garbage.

#include <gtest/gtest.h>

#include <cerrno>
#include <string>
#include <vector>

#include "client/load/engine_link.hpp"
#include "client/load/session.hpp"
#include "client/options.hpp"
#include "core/io/engine.hpp"
#include "core/tls/context.hpp"
#include "core/tls/stream.hpp"
#include "tests/unit/fake_backend.hpp"
#include "tests/unit/test_pki.hpp"
#include "tests/unit/tls_peer.hpp"

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

// ---- https: the same session behind the TLS adapter (core/tls/stream.hpp)

// A server's TLS session in memory: what the client sends is read by it,
// and what it writes is delivered as the client's receives.
class LoadSessionTls : public LoadSessionTest {
 protected:
  void SetUp() override {
    using testing_support::pki;
    ASSERT_TRUE(pki().ok);
    std::string error;
    server_ctx_ = tls::ServerContext::make({pki().certificate_file, pki().key_file}, error);
    ASSERT_NE(server_ctx_, nullptr) << error;
    ASSERT_TRUE(server_ctx_->start(server_.session, error)) << error;
  }

  // The client's sends, each completed in full as it is made: their bytes.
  std::string take_sends() {
    std::string bytes;
    while (conn().send_inflight) {
      const std::string b = last(Op::send).bytes;
      bytes += b;
      sent(std::int32_t(b.size()));
    }
    return bytes;
  }
  std::string server_reads(const std::string& wire) { return server_.read(wire); }
  std::string server_output() { return server_.take_output(); }
  // Delivered to the client, a receive per buffer's worth.
  void to_client(std::string_view bytes) {
    for (std::size_t at = 0; at < bytes.size(); at += FakeIo::buffer_bytes) {
      received(bytes.substr(at, FakeIo::buffer_bytes));
    }
  }
  // Connects and shakes hands: the first request, as the server read it.
  std::string open(const std::string& requests) {
    start({"-c", "1", "-n", requests, "--cacert", testing_support::pki().ca_file, "https://127.0.0.1:9/"});
    connected();
    EXPECT_EQ(conn().state, ConnState::handshake);
    EXPECT_EQ(server_reads(take_sends()), "");  // the ClientHello
    to_client(server_output());
    EXPECT_EQ(conn().state, ConnState::open);
    const std::string request = server_reads(take_sends());  // Finished, and the request with it
    to_client(server_output());                                // the session tickets
    EXPECT_TRUE(server_.session.handshake_done());
    return request;
  }

  std::unique_ptr<tls::ServerContext> server_ctx_;
  testing_support::TlsPeer server_{4 * tls::wire_out_record_bytes};
};

// Each response's record is cut in two receives at every byte: nothing is
// counted before its last byte, then one response, and the next request
// follows it.
TEST_F(LoadSessionTls, a_response_record_cut_at_every_byte_is_counted_once_complete) {
  const std::string first = open("1000");
  ASSERT_EQ(first.rfind("GET / HTTP/1.1\r\n", 0), 0u) << first;
  std::size_t record_bytes = 0;
  for (std::uint64_t cut = 0;; ++cut) {
    ASSERT_EQ(tls::encrypt(server_.session, server_.out, ok_response.data(), ok_response.size()), ok_response.size());
    const std::string record = server_output();
    if (record_bytes == 0) record_bytes = record.size();
    ASSERT_EQ(record.size(), record_bytes);
    if (cut >= record_bytes) break;
    if (cut > 0) {
      to_client(std::string_view(record).substr(0, cut));
      EXPECT_EQ(results_.stats.responses, cut) << "counted at " << cut << " of " << record_bytes;
    }
    to_client(std::string_view(record).substr(cut));
    EXPECT_EQ(results_.stats.responses, cut + 1) << "cut at " << cut;
    EXPECT_EQ(server_reads(take_sends()), first) << "the next request, after the cut at " << cut;
  }
  EXPECT_GT(record_bytes, ok_response.size());
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::tls)], 0u);
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::parse)], 0u);
}

// The server's close_notify after the last response expected: it is
// counted, and the connection closes without an error.
TEST_F(LoadSessionTls, a_close_notify_after_the_last_response_closes_cleanly) {
  open("1");
  ASSERT_EQ(tls::encrypt(server_.session, server_.out, ok_response.data(), ok_response.size()), ok_response.size());
  ASSERT_TRUE(tls::queue_close(server_.session, server_.out));
  to_client(server_output());
  EXPECT_EQ(results_.stats.responses, 1u);
  EXPECT_EQ(conn().state, ConnState::closing);
  for (std::size_t e = 0; e < results_.stats.errors.size(); ++e) EXPECT_EQ(results_.stats.errors[e], 0u) << e;
}

// Bytes that are no TLS record: a tls error, and the slot closes.
TEST_F(LoadSessionTls, garbage_from_the_server_is_a_tls_error) {
  open("10");
  to_client(std::string(64, '\x17'));
  EXPECT_EQ(results_.stats.errors[std::size_t(ErrorClass::tls)], 1u);
  EXPECT_EQ(results_.stats.responses, 0u);
}

}  // namespace
}  // namespace ringhttp::client
