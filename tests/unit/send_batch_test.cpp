// build_send_batch alone: which iovecs one send carries for a queue of
// responses, and what its completion retires. The socket tests prove the
// same behaviour end to end through Session::flush.

#include "server/send_batch.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

#include "core/io/send_cursor.hpp"
#include "server/heads.hpp"
#include "server/stream_pattern.hpp"

namespace ringhttp::server {
namespace {

constexpr std::string_view date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n";
constexpr std::string_view tail = "Content-Length: 13\r\n\r\n";
constexpr std::string_view hello = "Hello, World!";

using Queue = OutputQueue<Connection::responses_max>;

PendingResponse& push_plaintext(Queue& out) {
  PendingResponse& r = out.push();
  r.reset();
  r.status = 200;
  r.head = heads::ok_text;
  r.tail = tail;
  r.body = hello;
  r.source = BodySource::fixed;
  return r;
}

PendingResponse& push_stream(Queue& out, std::uint64_t offset, std::uint64_t remaining) {
  PendingResponse& r = out.push();
  r.reset();
  r.status = 200;
  r.head = heads::ok_octets;
  r.tail = tail;  // the length is irrelevant here
  r.source = BodySource::stream;
  r.stream_offset = offset;
  r.stream_remaining = remaining;
  return r;
}

std::string gather(std::span<const iovec> iov) {
  std::string bytes;
  for (const iovec& v : iov) bytes.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return bytes;
}

struct Batch {
  std::array<iovec, Connection::iovecs_max> iov{};
  SendBatch result;
  std::string bytes() const { return gather(std::span(iov).first(result.iovecs)); }
};

Batch build(const Queue& out, std::size_t first = 0) {
  Batch b;
  b.result = build_send_batch(out, first, date, b.iov);
  return b;
}

// With a staging area, as the shard builds every send but a zero-copy one.
struct StagedBatch : Batch {
  std::array<char, 16 * 1024> staging{};
};
StagedBatch build_staged(const Queue& out, std::size_t staging_bytes = 16 * 1024) {
  StagedBatch b;
  b.result = build_send_batch(out, 0, date, b.iov, std::span<char>(b.staging).first(staging_bytes));
  return b;
}

// Zero-copy sends keep written responses queued until their notification:
// the next batch starts after them and sends none of their bytes again.
TEST(SendBatch, written_responses_at_the_front_are_not_sent_again) {
  Queue out;
  push_plaintext(out).body = "written";
  push_plaintext(out).body = "also written";
  push_plaintext(out);
  const Batch b = build(out, 2);
  EXPECT_EQ(b.result.iovecs, 4u);
  EXPECT_EQ(b.bytes(), std::string(heads::ok_text) + std::string(date) + std::string(tail) + std::string(hello));
  EXPECT_EQ(b.result.retires, 1u);
  EXPECT_EQ(build(out, 3).result.iovecs, 0u);
}

TEST(SendBatch, one_response_is_head_date_tail_body) {
  Queue out;
  push_plaintext(out);
  const Batch b = build(out);
  EXPECT_EQ(b.result.iovecs, 4u);
  EXPECT_EQ(b.bytes(), std::string(heads::ok_text) + std::string(date) + std::string(tail) + std::string(hello));
  EXPECT_EQ(b.result.bytes, b.bytes().size());
  EXPECT_EQ(b.result.retires, 1u);
  EXPECT_EQ(b.result.stream_bytes, 0u);
}

TEST(SendBatch, pipelined_responses_leave_together_in_order) {
  Queue out;
  for (int i = 0; i < 16; ++i) push_plaintext(out);
  const Batch b = build(out);
  EXPECT_EQ(b.result.iovecs, 16u * 4);
  EXPECT_EQ(b.result.retires, 16u);
  EXPECT_EQ(b.result.bytes, 16 * (heads::ok_text.size() + date.size() + tail.size() + hello.size()));
}

// A response waiting for its database result holds back itself and
// everything after it, however ready those are: answers leave in order.
TEST(SendBatch, a_deferred_response_ends_the_batch_before_itself) {
  Queue out;
  push_plaintext(out);
  PendingResponse& deferred = out.push();
  deferred.reset();
  deferred.source = BodySource::deferred;
  push_plaintext(out);
  const Batch b = build(out);
  EXPECT_EQ(b.result.retires, 1u);
  EXPECT_EQ(b.bytes(), std::string(heads::ok_text) + std::string(date) + std::string(tail) + std::string(hello));
  const Batch none = build(out, 1);
  EXPECT_EQ(none.result.iovecs, 0u);
  EXPECT_EQ(none.result.bytes, 0u);
  EXPECT_EQ(none.result.retires, 0u);
}

TEST(SendBatch, empty_parts_take_no_iovec_and_interim_has_no_date) {
  Queue out;
  PendingResponse& r = out.push();
  r.reset();
  r.head = heads::continue_100;
  r.interim = true;
  PendingResponse& head_only = push_plaintext(out);
  head_only.body = {};
  head_only.source = BodySource::none;
  const Batch b = build(out);
  EXPECT_EQ(b.result.iovecs, 1u + 3);
  EXPECT_EQ(b.bytes(),
            std::string(heads::continue_100) + std::string(heads::ok_text) + std::string(date) + std::string(tail));
  EXPECT_EQ(b.result.retires, 2u);
}

TEST(SendBatch, unfinished_stream_ends_the_batch_with_one_chunk) {
  Queue out;
  push_plaintext(out);
  push_stream(out, 0, std::uint64_t(1) << 30);
  push_plaintext(out);  // must wait for the stream's last byte
  const Batch b = build(out);
  constexpr std::uint64_t chunk = Connection::stream_iovecs_max * stream_block_bytes;
  EXPECT_EQ(b.result.iovecs, 4u + 3 + Connection::stream_iovecs_max);
  EXPECT_EQ(b.result.retires, 1u);
  EXPECT_EQ(b.result.stream_bytes, chunk);
  const std::string bytes = b.bytes();
  const std::string body = bytes.substr(bytes.size() - chunk);
  for (std::size_t i = 0; i < body.size(); ++i) ASSERT_EQ(static_cast<unsigned char>(body[i]), i % 251) << i;
}

TEST(SendBatch, stream_in_progress_resumes_at_its_offset_without_headers) {
  Queue out;
  PendingResponse& r = push_stream(out, 1000, 500);
  r.head_sent = true;
  push_plaintext(out);
  const Batch b = build(out);
  EXPECT_EQ(b.result.iovecs, 1u + 4);
  EXPECT_EQ(b.result.retires, 2u);
  EXPECT_EQ(b.result.stream_bytes, 0u);
  const std::string bytes = b.bytes();
  for (std::size_t i = 0; i < 500; ++i) ASSERT_EQ(static_cast<unsigned char>(bytes[i]), (1000 + i) % 251) << i;
}

}  // namespace
}  // namespace ringhttp::server

namespace ringhttp::server {
namespace {

TEST(SendBatch, middleware_headers_go_between_date_and_framing_in_the_same_batch) {
  Queue out;
  PendingResponse& r = push_plaintext(out);
  r.header_blocks[0] = "X-A: 1\r\n";
  r.header_blocks[2] = "X-C: 3\r\n";  // an empty block between takes no iovec
  std::memcpy(r.header_bytes, "X-D: 4\r\n", 8);
  r.header_text = std::string_view(r.header_bytes, 8);
  push_plaintext(out);
  const Batch b = build(out);
  EXPECT_EQ(b.result.iovecs, 4u + 3 + 4);
  const std::string first = std::string(heads::ok_text) + std::string(date) + "X-A: 1\r\nX-C: 3\r\nX-D: 4\r\n" +
                            std::string(tail) + std::string(hello);
  const std::string second = std::string(heads::ok_text) + std::string(date) + std::string(tail) + std::string(hello);
  EXPECT_EQ(b.bytes(), first + second);
}

// advance_iovecs: a short write resumes at exactly the next unsent byte,
// whatever iovec boundary it fell on or inside.
std::string unsent(const msghdr& msg) {
  std::string out;
  for (std::size_t i = 0; i < msg.msg_iovlen; ++i) {
    out.append(static_cast<const char*>(msg.msg_iov[i].iov_base), msg.msg_iov[i].iov_len);
  }
  return out;
}

TEST(AdvanceIovecs, every_short_write_leaves_exactly_the_rest) {
  const std::string parts[] = {"HTTP/1.1 200 OK\r\n", "", "Date: x\r\n", "Content-Length: 13\r\n\r\n", "Hello, World!"};
  std::string whole;
  for (const auto& p : parts) whole += p;
  for (std::size_t written = 0; written < whole.size(); ++written) {
    std::array<iovec, 5> iov{};
    for (std::size_t i = 0; i < iov.size(); ++i) iov[i] = {const_cast<char*>(parts[i].data()), parts[i].size()};
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = iov.size();
    io::advance_iovecs(msg, written);
    EXPECT_EQ(unsent(msg), whole.substr(written)) << "after " << written << " bytes";
  }
}

TEST(AdvanceIovecs, successive_short_writes_add_up) {
  const std::string a = "abcdef";
  const std::string b = "ghij";
  std::array<iovec, 2> iov{{{const_cast<char*>(a.data()), a.size()}, {const_cast<char*>(b.data()), b.size()}}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  io::advance_iovecs(msg, 2);
  EXPECT_EQ(unsent(msg), "cdefghij");
  io::advance_iovecs(msg, 4);  // ends exactly at the boundary
  EXPECT_EQ(unsent(msg), "ghij");
  EXPECT_EQ(msg.msg_iovlen, 1u);
  io::advance_iovecs(msg, 3);
  EXPECT_EQ(unsent(msg), "j");
}

// Small pieces are copied one after another into the staging area: the
// same bytes in one iovec instead of four per response.
TEST(SendBatch, small_pieces_are_staged_into_one_iovec) {
  Queue out;
  for (int i = 0; i < 16; ++i) push_plaintext(out);
  const Batch plain = build(out);
  const StagedBatch staged = build_staged(out);
  EXPECT_EQ(plain.result.iovecs, 16u * 4);
  EXPECT_EQ(staged.result.iovecs, 1u);
  EXPECT_EQ(staged.bytes(), plain.bytes());
  EXPECT_EQ(staged.result.bytes, plain.result.bytes);
  EXPECT_EQ(staged.result.retires, 16u);
}

// A large piece (a stream's chunk) is sent from where it lives; the small
// pieces around it are staged.
TEST(SendBatch, a_large_piece_keeps_its_own_iovec_between_staged_ones) {
  Queue out;
  push_plaintext(out);
  push_stream(out, 0, 100'000);
  const Batch plain = build(out);
  const StagedBatch staged = build_staged(out);
  EXPECT_EQ(staged.bytes(), plain.bytes());
  // The plaintext response and the stream's head and tail in one staged
  // iovec, then the stream's chunks as they are.
  ASSERT_GE(staged.result.iovecs, 2u);
  EXPECT_GE(static_cast<const char*>(staged.iov[0].iov_base), staged.staging.data());
  EXPECT_LT(static_cast<const char*>(staged.iov[0].iov_base), staged.staging.data() + staged.staging.size());
  EXPECT_EQ(staged.iov[1].iov_base, plain.iov[plain.result.iovecs - staged.result.iovecs + 1].iov_base);
}

// When the staging area is full, the rest is sent from where it lives.
TEST(SendBatch, a_full_staging_area_leaves_the_rest_in_place) {
  Queue out;
  for (int i = 0; i < 8; ++i) push_plaintext(out);
  const Batch plain = build(out);
  const StagedBatch staged = build_staged(out, 200);  // one response and a bit
  EXPECT_EQ(staged.bytes(), plain.bytes());
  EXPECT_GT(staged.result.iovecs, 1u);
  EXPECT_LT(staged.result.iovecs, plain.result.iovecs);
}

}  // namespace
}  // namespace ringhttp::server
