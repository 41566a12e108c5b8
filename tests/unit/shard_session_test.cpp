// The server's HTTP session over a fake backend: the shard as it runs,
// handed the completions a kernel would make, one batch at a time, with no
// socket and no ring. What it asks of the backend (receives, sends with
// their bytes, cancels, shutdowns, closes) is recorded and checked. So
// pause, held input, spill, backpressure and drain are tested
// deterministically, in orders a socket test can only hope to provoke.

#include <gtest/gtest.h>
#include <liburing.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "server/shard.ipp"
#include "server/shard_db.ipp"
#include "core/tls/context.hpp"
#include "core/tls/stream.hpp"
#include "tests/unit/fake_backend.hpp"
#include "tests/unit/test_pki.hpp"
#include "tests/unit/tls_peer.hpp"

namespace ringhttp::server {

using testing_support::FakeIo;
using io::Op;

// The shard's private hooks, for the tests.
struct ShardTestAccess {
  using S = Shard<FakeIo>;
  static bool setup(S& s) {
    s.wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    cpu_set_t before;
    sched_getaffinity(0, sizeof before, &before);
    const bool ok = s.setup();  // pins this thread: put back after
    sched_setaffinity(0, sizeof before, &before);
    return ok;
  }
  static void batch(S& s, std::span<const io::Completion> completions) {
    s.on_wake();
    for (const io::Completion& c : completions) s.dispatch(c);
    s.after_batch();
  }
  static FakeIo& io(S& s) { return s.io(); }
  static Connection& conn(S& s, std::uint32_t slot) { return s.engine_.table()[slot]; }
};

namespace {

constexpr int client_fd = 1000;  // never a real descriptor: the fake does no I/O

class ShardSession : public testing::Test {
 protected:
  void SetUp() override {
    options_.cpus = {sched_getcpu()};
    options_.shards = 1;
    options_.output_bytes_max = 8192;
    all_[0] = &counters_;
    cors_ = std::make_unique<Cors>(app_config_.cors);
    shard_ = std::make_unique<Shard<FakeIo>>(options_, app_config_, *cors_, 0, -1, uring::Features{}, SendPath{},
                                             tls_, counters_, std::span<const ShardCounters* const>(all_));
    ASSERT_TRUE(ShardTestAccess::setup(*shard_));
    // A connection accepted.
    batch({{io::encode({Op::accept, Shard<FakeIo>::shard_slot, 0}), client_fd, io::completion_flags::more}});
    ASSERT_EQ(counters_.connections_accepted.read(), 1u);
    ASSERT_EQ(last().op, Op::recv);
    recv_tag_ = last().tag;
  }

  FakeIo& io() { return ShardTestAccess::io(*shard_); }
  Connection& conn() { return ShardTestAccess::conn(*shard_, 0); }
  const FakeIo::Asked& last() { return io().asked.back(); }
  void batch(std::vector<io::Completion> completions) { ShardTestAccess::batch(*shard_, completions); }
  io::Completion deliver(std::string_view bytes, bool more = true) { return io().deliver(recv_tag_, bytes, more); }
  std::uint64_t tag(Op op) { return io::tag(op, conn()); }
  // The sends asked since index `from`.
  std::vector<std::string> sends_since(std::size_t from) {
    std::vector<std::string> out;
    for (std::size_t i = from; i < io().asked.size(); ++i) {
      if (io().asked[i].op == Op::send) out.push_back(io().asked[i].bytes);
    }
    return out;
  }
  static std::size_t count(const std::string& text, std::string_view what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  // Completes the send in flight in full; returns what it carried.
  std::string complete_send() {
    EXPECT_TRUE(conn().send_inflight);
    std::string bytes;
    for (auto it = io().asked.rbegin(); it != io().asked.rend(); ++it) {
      if (it->op == Op::send) {
        bytes = it->bytes;
        break;
      }
    }
    batch({{tag(Op::send), std::int32_t(bytes.size()), 0}});
    return bytes;
  }

  Options options_;
  AppConfig app_config_;
  std::unique_ptr<Cors> cors_;
  ShardCounters counters_;
  std::array<const ShardCounters*, 1> all_{};
  std::unique_ptr<Shard<FakeIo>> shard_;
  std::uint64_t recv_tag_ = 0;
  tls::ServerContext* tls_ = nullptr;  // HTTPS, when a fixture sets it before SetUp
};

const std::string get = "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n";

TEST_F(ShardSession, a_batch_of_requests_leaves_in_one_send) {
  batch({deliver(get + get), deliver(get)});
  const auto sends = sends_since(0);
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(count(sends[0], "HTTP/1.1 200 OK\r\n"), 3u);
  EXPECT_EQ(count(sends[0], "Hello, World!"), 3u);
  complete_send();
  EXPECT_EQ(io().buffers_free(), FakeIo::buffers);  // every buffer back
  EXPECT_EQ(conn().output, nullptr);                // the idle connection lends its block back
}

TEST_F(ShardSession, a_short_write_resumes_and_reading_waits_for_the_backlog) {
  // /stream answers with more than --output-bytes-max (8 KiB here): a send
  // that writes little keeps the rest in flight, and a connection with
  // that much unsent stops taking requests.
  batch({deliver("GET /stream?bytes=65536 HTTP/1.1\r\nHost: a\r\n\r\n")});
  ASSERT_TRUE(conn().send_inflight);
  const std::size_t first = last().bytes.size();
  batch({{tag(Op::send), 100, 0}});
  EXPECT_EQ(counters_.sends_short.read(), 1u);
  EXPECT_EQ(last().bytes.size(), first - 100);  // the rest, from the next unsent byte
  // Of the requests pipelined behind it, the first is parsed and input
  // pauses after it; the next is held.
  batch({deliver(get + get)});
  EXPECT_TRUE(conn().input_paused);
  EXPECT_EQ(counters_.requests.read(), 2u);
  // Written out, the held request is answered.
  std::size_t rounds = 0;
  while (conn().send_inflight && counters_.requests.read() < 3 && ++rounds < 100) complete_send();
  EXPECT_EQ(counters_.requests.read(), 3u);
  EXPECT_FALSE(conn().input_paused);
}

TEST_F(ShardSession, a_full_queue_pauses_input_and_cancels_the_multishot_receive) {
  std::string burst;
  for (std::size_t i = 0; i < Connection::responses_max + 8; ++i) burst += get;
  const std::size_t asked_before = io().asked.size();
  batch({deliver(burst)});
  EXPECT_TRUE(conn().input_paused);
  EXPECT_TRUE(conn().single_shot);
  bool cancelled = false;
  for (std::size_t i = asked_before; i < io().asked.size(); ++i) {
    cancelled |= io().asked[i].op == Op::cancel && io().asked[i].target == recv_tag_;
  }
  EXPECT_TRUE(cancelled);
  // The receive ends for its cancel; more arrived before it did, held.
  batch({deliver(get), {recv_tag_, -ECANCELED, 0}, {tag(Op::cancel), 0, 0}});
  EXPECT_FALSE(conn().recv_armed);  // not re-armed while paused
  // Room made: everything held is parsed, and a single-shot receive armed.
  std::size_t rounds = 0;
  while (conn().send_inflight && ++rounds < 10) complete_send();
  EXPECT_EQ(counters_.requests.read(), Connection::responses_max + 9);
  EXPECT_TRUE(conn().recv_armed);
  EXPECT_FALSE(conn().recv_multishot);
  EXPECT_EQ(counters_.input_overflow.read(), 0u);
}

TEST_F(ShardSession, a_trickle_while_paused_is_held_by_bytes_not_pieces) {
  // Paused with the multishot receive still armed: the kernel may deliver
  // any number of small pieces before the cancel lands.
  std::string burst;
  for (std::size_t i = 0; i < Connection::responses_max + 8; ++i) burst += get;
  batch({deliver(burst)});
  ASSERT_TRUE(conn().input_paused);
  std::vector<io::Completion> pieces;
  const std::string trickled = get + get + get + get + get + get;
  for (const char c : trickled) pieces.push_back(deliver(std::string_view(&c, 1)));
  ASSERT_GT(pieces.size(), Connection::held_chunks_max);
  batch(pieces);
  EXPECT_EQ(counters_.input_overflow.read(), 0u);
  EXPECT_EQ(conn().state, ConnState::open);
  batch({{recv_tag_, -ECANCELED, 0}, {tag(Op::cancel), 0, 0}});
  std::size_t rounds = 0;
  while (conn().send_inflight && ++rounds < 20) complete_send();
  EXPECT_EQ(counters_.requests.read(), Connection::responses_max + 8 + 6);
  EXPECT_EQ(counters_.spill_blocks_used.read(), 0u);
}

TEST_F(ShardSession, input_past_its_share_of_buffers_is_spilled_and_the_buffers_go_back) {
  std::string burst;
  for (std::size_t i = 0; i < Connection::responses_max + 8; ++i) burst += get;
  batch({deliver(burst)});
  ASSERT_TRUE(conn().input_paused);
  // The burst's unparsed rest is held in its buffer (the first of the
  // share); each request delivered after it is held in a buffer of its own
  // until the share is used, then copied into a spill block.
  const std::uint32_t extra = Connection::held_buffers_max + 2;
  std::vector<io::Completion> pieces;
  for (std::uint32_t i = 0; i < extra; ++i) pieces.push_back(deliver(get));
  batch(pieces);
  EXPECT_EQ(counters_.input_buffers_held.read(), Connection::held_buffers_max);
  EXPECT_EQ(counters_.spill_blocks_used.read(), extra + 1 - Connection::held_buffers_max);
  EXPECT_EQ(io().buffers_free(), FakeIo::buffers - Connection::held_buffers_max)
      << "a spilled piece's buffer went back to the ring";
  batch({{recv_tag_, -ECANCELED, 0}, {tag(Op::cancel), 0, 0}});
  std::size_t rounds = 0;
  while (conn().send_inflight && ++rounds < 20) complete_send();
  EXPECT_EQ(counters_.requests.read(), Connection::responses_max + 8 + extra) << "every held request answered, in order";
  EXPECT_EQ(counters_.spill_blocks_used.read(), 0u);
  EXPECT_EQ(counters_.input_buffers_held.read(), 0u);
  EXPECT_EQ(counters_.input_overflow.read(), 0u);
  EXPECT_EQ(io().buffers_free(), FakeIo::buffers);
}

TEST_F(ShardSession, the_peers_fin_with_output_pending_drains_then_half_closes) {
  batch({deliver(get, true)});
  ASSERT_TRUE(conn().send_inflight);
  batch({{recv_tag_, 0, 0}});  // FIN while the answer is in flight
  EXPECT_EQ(conn().state, ConnState::draining);
  complete_send();
  // Answered: with the peer's FIN already in, the connection closes.
  EXPECT_EQ(conn().state, ConnState::free);
  EXPECT_EQ(io().closed, std::vector<int>{client_fd});
}

TEST_F(ShardSession, connection_close_is_answered_then_half_closed_and_lingers) {
  batch({deliver("GET /plaintext HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")});
  EXPECT_EQ(conn().state, ConnState::draining);
  complete_send();
  EXPECT_EQ(conn().state, ConnState::lingering);
  EXPECT_TRUE(conn().recv_armed);  // reading (and discarding) until the peer's FIN
  bool shut = false;
  for (const auto& a : io().asked) shut |= a.op == Op::shutdown;
  EXPECT_TRUE(shut);
  batch({{tag(Op::shutdown), 0, 0}, deliver("late bytes", true), {recv_tag_, 0, 0}});
  EXPECT_EQ(conn().state, ConnState::free);
  EXPECT_EQ(io().buffers_free(), FakeIo::buffers);
}

TEST_F(ShardSession, a_reset_with_a_send_in_flight_frees_the_slot_only_at_zero) {
  batch({deliver(get)});
  ASSERT_TRUE(conn().send_inflight);
  batch({{recv_tag_, -ECONNRESET, 0}});
  EXPECT_EQ(conn().state, ConnState::closing);
  EXPECT_EQ(counters_.cancellations.read(), 1u);  // the send (the receive ended with the reset)
  EXPECT_TRUE(io().closed.empty());
  batch({{tag(Op::cancel), 0, 0}});
  EXPECT_TRUE(io().closed.empty());  // the send has not reported yet
  batch({{tag(Op::send), -ECANCELED, 0}});
  EXPECT_EQ(conn().state, ConnState::free);
  EXPECT_EQ(io().closed, std::vector<int>{client_fd});
  EXPECT_EQ(counters_.connections_closed.read(), 1u);
}

// ---- HTTPS: the same session behind the TLS adapter (core/tls/stream.hpp)

// A client's TLS session in memory, against the shard over the fake: what
// the client writes is delivered as the shard's receives, and what the
// shard sends is read back by the client.
class ShardSessionTls : public ShardSession {
 protected:
  void SetUp() override {
    using testing_support::pki;
    ASSERT_TRUE(pki().ok);
    std::string error;
    server_ctx_ = tls::ServerContext::make({pki().certificate_file, pki().key_file}, error);
    ASSERT_NE(server_ctx_, nullptr) << error;
    options_.tls_cert_file = pki().certificate_file;
    options_.tls_key_file = pki().key_file;
    tls_ = server_ctx_.get();
    ShardSession::SetUp();
    tls::ClientConfig config;
    config.ca_file = pki().ca_file;
    client_ctx_ = tls::ClientContext::make(config, error);
    ASSERT_NE(client_ctx_, nullptr) << error;
    ASSERT_TRUE(client_ctx_->start(client_.session, "localhost", error)) << error;
    // ClientHello; the server's flight; Finished; the tickets.
    ASSERT_EQ(tls::handshake(client_.session, client_.out), tls::Session::Status::want_io);
    to_server(take_output());
    ASSERT_TRUE(conn().send_inflight);
    EXPECT_EQ(from_server(), "");
    ASSERT_TRUE(client_.session.handshake_done());
    to_server(take_output());
    EXPECT_EQ(from_server(), "");
    ASSERT_TRUE(conn().tls.handshake_done());
    ASSERT_EQ(counters_.tls_handshakes_full.read(), 1u);
  }

  std::string take_output() { return client_.take_output(); }
  // Delivered as one receive each buffer's worth, in one batch.
  void to_server(std::string_view bytes) {
    std::vector<io::Completion> receives;
    for (std::size_t at = 0; at < bytes.size(); at += FakeIo::buffer_bytes) {
      receives.push_back(deliver(bytes.substr(at, FakeIo::buffer_bytes)));
    }
    if (!receives.empty()) batch(receives);
  }
  // The send in flight, completed and read by the client: its plaintext.
  std::string from_server() {
    std::string plaintext;
    while (conn().send_inflight) plaintext += client_.read(complete_send());
    return plaintext;
  }

  std::unique_ptr<tls::ServerContext> server_ctx_;
  std::unique_ptr<tls::ClientContext> client_ctx_;
  testing_support::TlsPeer client_{2 * tls::wire_out_record_bytes};
};

// A request's record cut in two receives at every byte: nothing is
// answered before its last byte, then one response, and no receive
// buffer is kept (a record cut short waits inside OpenSSL).
TEST_F(ShardSessionTls, a_request_record_cut_at_every_byte_is_answered_once_complete) {
  std::size_t record_bytes = 0;
  for (std::size_t cut = 0;; ++cut) {
    ASSERT_EQ(tls::encrypt(client_.session, client_.out, get.data(), get.size()), get.size());
    const std::string record = take_output();
    if (record_bytes == 0) record_bytes = record.size();
    ASSERT_EQ(record.size(), record_bytes);
    if (cut >= record_bytes) break;
    if (cut > 0) {
      to_server(record.substr(0, cut));
      EXPECT_FALSE(conn().send_inflight) << "answered at " << cut << " of " << record_bytes;
    }
    to_server(record.substr(cut));
    const std::string answer = from_server();
    EXPECT_EQ(count(answer, "HTTP/1.1 200 OK"), 1u) << "cut at " << cut;
    EXPECT_TRUE(answer.ends_with("Hello, World!")) << "cut at " << cut;
    EXPECT_EQ(io().buffers_free(), FakeIo::buffers) << "cut at " << cut;
  }
  EXPECT_GT(record_bytes, get.size());
  EXPECT_EQ(counters_.responses[status_index(200)].read(), record_bytes);
}

// Two requests in one record, then a record carrying the client's
// close_notify: both are answered in one send, then the connection closes
// as for a FIN.
TEST_F(ShardSessionTls, a_close_notify_after_requests_answers_them_then_closes) {
  const std::string two = get + get;
  ASSERT_EQ(tls::encrypt(client_.session, client_.out, two.data(), two.size()), two.size());
  ASSERT_TRUE(tls::queue_close(client_.session, client_.out));
  to_server(take_output());
  const std::string answer = from_server();
  EXPECT_EQ(count(answer, "HTTP/1.1 200 OK"), 2u);
  EXPECT_NE(conn().state, ConnState::open);
}

}  // namespace
}  // namespace ringhttp::server
