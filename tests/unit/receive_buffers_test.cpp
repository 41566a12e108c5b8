// ReceiveBuffers over a real ring and a socket pair: a bundle's buffers and
// an incremental ring's parts are handed out as pieces, one buffer each,
// and a buffer goes back to the ring only when the kernel is done with it
// and every piece of it was given back.
#include <liburing.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/uring/compat.hpp"
#include "core/uring/features.hpp"
#include "core/uring/receive_buffers.hpp"
#include "tests/socket/support/kernel_features.hpp"  // what the kernel offers, asked of it, not of the product

namespace ringhttp::uring {
namespace {

constexpr std::uint32_t buffer_bytes = 64;

struct Piece {
  std::int32_t id;
  std::uint32_t offset;  // from the buffer's start
  std::string bytes;
};

class Receiver {
 public:
  Receiver(bool bundle, bool incremental, std::uint32_t buffers) {
    EXPECT_EQ(io_uring_queue_init(8, &ring_, 0), 0);
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair_), 0);
    Features features;
    features.bufring = features.multishot_recv = true;
    features.recv_bundle = bundle;
    features.incremental_buffers = incremental;
    EXPECT_EQ(buffers_.init(&ring_, features, buffers, buffer_bytes, 1), "");
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    EXPECT_TRUE(buffers_.prep_recv(sqe, pair_[0], 0, true));
    sqe->user_data = 1;
    io_uring_submit(&ring_);
  }
  ~Receiver() {
    ::close(pair_[1]);
    ::close(pair_[0]);
    io_uring_queue_exit(&ring_);
  }

  void send(const std::string& bytes) {
    ASSERT_EQ(::write(pair_[1], bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }

  // Waits for completions until `total` bytes have come; returns their
  // pieces (not given back) and the completions' count.
  std::vector<Piece> receive(std::size_t total, unsigned* completions = nullptr) {
    std::vector<Piece> out;
    std::size_t got = 0;
    unsigned seen = 0;
    while (got < total) {
      io_uring_cqe* cqe = nullptr;
      __kernel_timespec wait{2, 0};
      if (io_uring_wait_cqe_timeout(&ring_, &cqe, &wait) != 0) {
        ADD_FAILURE() << "no completion";
        break;
      }
      const std::int32_t res = cqe->res;
      const std::uint32_t flags = cqe->flags;
      io_uring_cqe_seen(&ring_, cqe);
      EXPECT_GT(res, 0);
      EXPECT_NE(flags & IORING_CQE_F_MORE, 0u) << "the multishot receive goes on";
      if (res <= 0) break;
      ++seen;
      ReceiveBuffers::Received piece = buffers_.received(0, flags, res);
      do {
        const auto offset = std::uint32_t(piece.data - buffers_.buffer_start(std::uint16_t(piece.buffer_id)));
        out.push_back({piece.buffer_id, offset, std::string(piece.data, piece.len)});
        got += piece.len;
      } while (buffers_.next(piece));
    }
    if (completions != nullptr) *completions = seen;
    return out;
  }

  ReceiveBuffers& buffers() { return buffers_; }

 private:
  io_uring ring_{};
  int pair_[2] = {-1, -1};
  ReceiveBuffers buffers_;
};

std::string pattern(std::size_t len, char first) {
  std::string out(len, ' ');
  for (std::size_t i = 0; i < len; ++i) out[i] = char(first + i % 26);
  return out;
}

std::string joined(const std::vector<Piece>& pieces) {
  std::string out;
  for (const Piece& p : pieces) out += p.bytes;
  return out;
}

TEST(ReceiveBuffers, a_bundle_is_handed_out_as_one_piece_per_buffer_in_ring_order) {
  if (!socket_test::kernel_has_recv_bundle()) GTEST_SKIP() << "no IORING_RECVSEND_BUNDLE (6.10)";
  Receiver r(true, false, 4);
  const std::string first = pattern(150, 'a');
  r.send(first);
  unsigned completions = 0;
  std::vector<Piece> pieces = r.receive(first.size(), &completions);
  EXPECT_EQ(joined(pieces), first);
  EXPECT_LT(completions, 3u) << "a completion took more than one buffer";
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].id, 0);
  EXPECT_EQ(pieces[1].id, 1);
  EXPECT_EQ(pieces[2].id, 2);
  EXPECT_EQ(pieces[2].bytes.size(), 150u - 2 * buffer_bytes) << "each buffer filled wholly but the last";
  for (const Piece& p : pieces) {
    EXPECT_EQ(p.offset, 0u);
    EXPECT_FALSE(r.buffers().kernel_holds(std::uint16_t(p.id)));
    EXPECT_EQ(r.buffers().pieces_out(std::uint16_t(p.id)), 1u);
  }
  // Given back out of order: the ring then holds 3, 2, 0, 1 from its head,
  // and the next bundle's buffers are named from that order.
  r.buffers().give_back(2);
  r.buffers().give_back(0);
  r.buffers().give_back(1);
  for (std::uint16_t id = 0; id < 3; ++id) EXPECT_TRUE(r.buffers().kernel_holds(id));
  const std::string second = pattern(200, 'A');
  r.send(second);
  pieces = r.receive(second.size(), &completions);
  EXPECT_EQ(joined(pieces), second);
  EXPECT_LT(completions, 4u) << "a completion took more than one buffer";
  std::vector<std::int32_t> ids;
  for (const Piece& p : pieces) ids.push_back(p.id);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{3, 2, 0, 1}));
  for (const Piece& p : pieces) r.buffers().give_back(p.id);
}

TEST(ReceiveBuffers, an_incremental_buffer_fills_in_parts_and_returns_when_done_and_given_back) {
  if (!socket_test::kernel_has_incremental_buffers()) GTEST_SKIP() << "no IOU_PBUF_RING_INC (6.12)";
  Receiver r(false, true, 2);
  r.send("0123456789");
  std::vector<Piece> a = r.receive(10);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].id, 0);
  EXPECT_EQ(a[0].offset, 0u);
  EXPECT_TRUE(r.buffers().kernel_holds(0)) << "IORING_CQE_F_BUF_MORE: the kernel keeps it";
  r.buffers().give_back(0);  // the piece only: the buffer stays the kernel's
  EXPECT_EQ(r.buffers().pieces_out(0), 0u);
  EXPECT_TRUE(r.buffers().kernel_holds(0));

  const std::string rest = pattern(buffer_bytes - 10, 'a');
  r.send(rest.substr(0, 20));
  std::vector<Piece> b = r.receive(20);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, 0);
  EXPECT_EQ(b[0].offset, 10u) << "right after the last piece";
  r.send(rest.substr(20));
  std::vector<Piece> c = r.receive(rest.size() - 20);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, 0);
  EXPECT_EQ(c[0].offset, 30u);
  EXPECT_FALSE(r.buffers().kernel_holds(0)) << "filled: the kernel is done with it";
  EXPECT_EQ(r.buffers().pieces_out(0), 2u);

  // Buffer 1 next; buffer 0 is back in the ring once both its pieces are.
  r.send(pattern(buffer_bytes, 'A'));
  std::vector<Piece> d = r.receive(buffer_bytes);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
  r.buffers().give_back(0);
  EXPECT_FALSE(r.buffers().kernel_holds(0)) << "a piece of it is still out";
  r.buffers().give_back(0);
  EXPECT_TRUE(r.buffers().kernel_holds(0));
  r.send("xyz");
  std::vector<Piece> e = r.receive(3);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].id, 0);
  EXPECT_EQ(e[0].offset, 0u) << "a buffer back in the ring is filled from its start";
  EXPECT_EQ(e[0].bytes, "xyz");
  r.buffers().give_back(1);
  r.buffers().give_back(0);
}

TEST(ReceiveBuffers, a_bundle_from_an_incremental_ring_starts_in_the_part_filled_buffer) {
  if (!socket_test::kernel_has_recv_bundle() || !socket_test::kernel_has_incremental_buffers()) {
    GTEST_SKIP() << "needs 6.12";
  }
  Receiver r(true, true, 4);
  r.send("0123456789");
  std::vector<Piece> a = r.receive(10);
  ASSERT_EQ(a.size(), 1u);
  const std::string more = pattern(100, 'a');
  r.send(more);
  std::vector<Piece> b = r.receive(more.size());
  EXPECT_EQ(joined(b), more);
  ASSERT_GE(b.size(), 2u);
  EXPECT_EQ(b[0].id, 0);
  EXPECT_EQ(b[0].offset, 10u);
  EXPECT_EQ(b[0].bytes.size(), buffer_bytes - 10);
  EXPECT_EQ(b[1].id, 1);
  EXPECT_EQ(b[1].offset, 0u);
  EXPECT_FALSE(r.buffers().kernel_holds(0));
  EXPECT_TRUE(r.buffers().kernel_holds(1)) << "part-filled: the kernel keeps it";
  EXPECT_EQ(r.buffers().pieces_out(0), 2u);
  r.buffers().give_back(0);
  for (const Piece& p : b) r.buffers().give_back(p.id);
  EXPECT_TRUE(r.buffers().kernel_holds(0));
}

}  // namespace
}  // namespace ringhttp::uring
