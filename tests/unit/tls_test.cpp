// TLS as a pure transform: a client Session and a server Session talk
// through memory, with a throwaway CA and certificates (test_pki.hpp). No
// socket: the test lends each call its Wire and moves the ciphertext, as
// the engine's users do. Then core/tls/stream.hpp, how both programs
// drive a session.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/tls/context.hpp"
#include "core/tls/session.hpp"
#include "core/tls/stream.hpp"
#include "tests/unit/test_pki.hpp"

namespace ringhttp::tls {
namespace {

using Status = Session::Status;
using testing_support::pki;

// One end of a connection as its caller keeps it: the session, the room it
// lends for ciphertext to send (two records, as the client's output area),
// and what was sent to this end that it has not received yet (the network).
struct End {
  Session session;
  std::vector<char> area = std::vector<char>(2 * wire_out_record_bytes);
  Wire wire;
  std::string network;

  End() {
    wire.out = area.data();
    wire.out_cap = area.size();
  }
  End(const End&) = delete;
  End& operator=(const End&) = delete;

  // Nothing of an earlier connection is left on the wire.
  void restart() {
    wire.out_len = 0;
    network.clear();
  }
};

// Sends at most `limit` bytes of what `from` wrote to `to`'s network, as a
// completed send would, and takes them out of `from`'s area. Returns how
// many.
std::size_t send(End& from, End& to, std::size_t limit = SIZE_MAX) {
  const std::size_t n = std::min(limit, from.wire.out_len);
  to.network.append(from.wire.out, n);
  std::memmove(from.wire.out, from.wire.out + n, from.wire.out_len - n);
  from.wire.out_len -= n;
  return n;
}

// Lends all that `end`'s network holds to `call` as one receive's
// `wire.in`. What the session did not read stays in the network, as if
// not received yet. Returns what `call` returns.
template <typename Call>
auto receive(End& end, Call call) {
  end.wire.in = end.network.data();
  end.wire.in_len = end.network.size();
  const std::size_t lent = end.wire.in_len;
  const auto result = call();
  end.network.erase(0, lent - end.wire.in_len);
  end.wire.in = nullptr;
  end.wire.in_len = 0;
  return result;
}

Status handshake_step(End& end) {
  return receive(end, [&end] { return end.session.handshake(end.wire); });
}

struct Outcome {
  Status client = Status::want_io;
  Status server = Status::want_io;
};

// Drives both handshakes, sending at most `limit` bytes each way between
// calls, until nothing moves any more.
Outcome handshake(End& client, End& server, std::size_t limit = SIZE_MAX) {
  Outcome out;
  for (;;) {
    if (out.client == Status::want_io) out.client = handshake_step(client);
    if (out.server == Status::want_io) out.server = handshake_step(server);
    if (send(client, server, limit) + send(server, client, limit) == 0) break;
  }
  return out;
}

// Reads what `end` received until read() stops returning done; `last` gets
// the status it ended with.
std::string read_all(End& end, Status* last = nullptr) {
  std::string text;
  char buffer[4096];
  const Status status = receive(end, [&] {
    Status s;
    std::size_t n = 0;
    while ((s = end.session.read(end.wire, buffer, sizeof buffer, n)) == Status::done) text.append(buffer, n);
    return s;
  });
  if (last != nullptr) *last = status;
  return text;
}

// Writes all of `text` from `from`, delivering and reading as it goes.
// Returns what `to` read; `partial_writes` counts writes that took less
// than what was left.
std::string send_all(End& from, End& to, std::string_view text, int* partial_writes = nullptr) {
  std::string received;
  std::size_t offset = 0;
  while (offset < text.size()) {
    const std::size_t taken = from.session.write(from.wire, text.data() + offset, text.size() - offset);
    if (taken < text.size() - offset && partial_writes != nullptr) ++*partial_writes;
    offset += taken;
    const std::size_t moved = send(from, to);
    received += read_all(to);
    if (taken == 0 && moved == 0) break;  // stuck: the test fails below
  }
  send(from, to);
  received += read_all(to);
  return received;
}

// Bytes that differ from one offset to the next, so that a record out of
// order or cut short cannot read back the same.
std::string pattern(std::size_t size) {
  std::string text(size, '\0');
  for (std::size_t i = 0; i < size; ++i) text[i] = char(i * 7 + i / 4096);
  return text;
}

std::unique_ptr<ClientContext> client_context(ClientConfig config) {
  std::string error;
  auto ctx = ClientContext::make(config, error);
  EXPECT_NE(ctx, nullptr) << error;
  return ctx;
}

ClientConfig trusting(const std::string& ca_file) {
  ClientConfig config;
  config.ca_file = ca_file;
  return config;
}

class TlsSession : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pki().ok);
    std::string error;
    server_ctx_ = ServerContext::make({pki().certificate_file, pki().key_file}, error);
    ASSERT_NE(server_ctx_, nullptr) << error;
  }

  // Starts both sides of a connection to `host`.
  void start(ClientContext& ctx, std::string_view host) {
    std::string error;
    client_.restart();
    server_.restart();
    EXPECT_TRUE(ctx.start(client_.session, host, error)) << error;
    EXPECT_TRUE(server_ctx_->start(server_.session, error)) << error;
  }

  // Starts both sides of a connection to `host` and runs the handshake.
  Outcome connect(ClientContext& ctx, std::string_view host, std::size_t limit = SIZE_MAX) {
    start(ctx, host);
    return handshake(client_, server_, limit);
  }

  std::unique_ptr<ServerContext> server_ctx_;
  End client_;
  End server_;
};

TEST_F(TlsSession, handshake_verifies_and_data_flows_both_ways) {
  auto ctx = client_context(trusting(pki().ca_file));
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.session.error_reason();
  EXPECT_TRUE(client_.session.handshake_done());
  EXPECT_TRUE(server_.session.handshake_done());
  EXPECT_STREQ(client_.session.protocol(), "TLSv1.3");
  EXPECT_STREQ(server_.session.protocol(), "TLSv1.3");
  EXPECT_STRNE(client_.session.cipher(), "(NONE)");
  EXPECT_FALSE(client_.session.resumed());

  const std::string request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
  const std::string response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
  EXPECT_EQ(send_all(server_, client_, response), response);
  EXPECT_FALSE(client_.session.failed());
  EXPECT_FALSE(server_.session.failed());
}

TEST_F(TlsSession, read_drives_the_handshake_and_goes_on_to_the_data) {
  auto ctx = client_context(trusting(pki().ca_file));
  start(*ctx, "localhost");
  // Only read() on both sides, from the ClientHello on.
  char buffer[record_plaintext_bytes_max];
  std::size_t n = 0;
  ASSERT_EQ(client_.session.read(client_.wire, buffer, sizeof buffer, n), Status::want_io);
  ASSERT_GT(send(client_, server_), 0u);
  ASSERT_EQ(receive(server_, [&] { return server_.session.read(server_.wire, buffer, sizeof buffer, n); }),
            Status::want_io);
  ASSERT_GT(send(server_, client_), 0u);
  ASSERT_EQ(receive(client_, [&] { return client_.session.read(client_.wire, buffer, sizeof buffer, n); }),
            Status::want_io);
  EXPECT_TRUE(client_.session.handshake_done());
  // The client's Finished and its request reach the server in one receive:
  // the read that completes the handshake returns the request.
  const std::string request = "GET /read HTTP/1.1\r\n\r\n";
  ASSERT_EQ(client_.session.write(client_.wire, request.data(), request.size()), request.size());
  send(client_, server_);
  EXPECT_FALSE(server_.session.handshake_done());
  ASSERT_EQ(receive(server_, [&] { return server_.session.read(server_.wire, buffer, sizeof buffer, n); }),
            Status::done)
      << server_.session.error_reason();
  EXPECT_TRUE(server_.session.handshake_done());
  EXPECT_EQ(std::string(buffer, n), request);
}

TEST_F(TlsSession, a_large_write_goes_out_in_many_partial_writes) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  const std::string body = pattern(1 << 20);
  int partial_writes = 0;
  const std::string received = send_all(client_, server_, body, &partial_writes);
  EXPECT_EQ(received.size(), body.size());
  EXPECT_TRUE(received == body);
  // The output area holds two records, so a mebibyte takes dozens of writes.
  EXPECT_GE(partial_writes, int(body.size() / client_.area.size()));
}

TEST_F(TlsSession, ciphertext_delivered_a_byte_at_a_time) {
  auto ctx = client_context(trusting(pki().ca_file));
  const Outcome out = connect(*ctx, "localhost", 1);
  ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.session.error_reason();

  const std::string request(3000, 'q');
  ASSERT_EQ(client_.session.write(client_.wire, request.data(), request.size()), request.size());
  std::string received;
  while (send(client_, server_, 1) == 1) received += read_all(server_);
  EXPECT_EQ(received, request);
  EXPECT_FALSE(server_.session.failed());
}

TEST_F(TlsSession, one_receive_of_many_records_is_read_a_record_per_call) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  // Far more ciphertext than one output area holds, in one receive.
  const std::string body = pattern(200 * 1024);
  for (std::size_t offset = 0; offset < body.size(); send(server_, client_)) {
    offset += server_.session.write(server_.wire, body.data() + offset, body.size() - offset);
  }
  std::string received;
  std::size_t reads = 0;
  const Status last = receive(client_, [&] {
    char buffer[record_plaintext_bytes_max];
    std::size_t n = 0;
    std::size_t left = client_.wire.in_len;
    Status s;
    while ((s = client_.session.read(client_.wire, buffer, sizeof buffer, n)) == Status::done) {
      ++reads;
      received.append(buffer, n);
      // A read takes a record (the tickets before the first) and leaves
      // the rest of the receive for the next call.
      EXPECT_LT(client_.wire.in_len, left);
      if (received.size() < body.size()) {
        EXPECT_GT(client_.wire.in_len, 0u);
      }
      left = client_.wire.in_len;
    }
    return s;
  });
  EXPECT_EQ(last, Status::want_io);
  EXPECT_TRUE(client_.network.empty());
  EXPECT_TRUE(received == body);
  EXPECT_GE(reads, body.size() / record_plaintext_bytes_max);
}

TEST_F(TlsSession, a_record_split_across_two_reads_is_read_whole_on_the_second) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);  // the tickets
  // A record of the largest size, split in its header, after it, in its
  // body and before its last byte.
  const std::string message = pattern(record_plaintext_bytes_max);
  for (const int where : {0, 1, 2, 3}) {
    SCOPED_TRACE(where);
    ASSERT_EQ(server_.session.write(server_.wire, message.data(), message.size()), message.size());
    const std::string record(server_.wire.out, server_.wire.out_len);
    server_.wire.out_len = 0;
    const std::size_t split = std::array<std::size_t, 4>{3, 5, record.size() / 2, record.size() - 1}[where];
    // Each part arrives in a receive buffer of its own, which goes back
    // (and is written over) as soon as the call returns.
    std::string first = record.substr(0, split);
    std::string second = record.substr(split);
    char buffer[record_plaintext_bytes_max];
    std::size_t n = 1;
    client_.wire.in = first.data();
    client_.wire.in_len = first.size();
    EXPECT_EQ(client_.session.read(client_.wire, buffer, sizeof buffer, n), Status::want_io);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(client_.wire.in_len, 0u);  // all taken: the caller keeps none of it
    std::fill(first.begin(), first.end(), '\xff');
    client_.wire.in = second.data();
    client_.wire.in_len = second.size();
    ASSERT_EQ(client_.session.read(client_.wire, buffer, sizeof buffer, n), Status::done)
        << client_.session.error_reason();
    EXPECT_EQ(client_.wire.in_len, 0u);
    EXPECT_TRUE(std::string_view(buffer, n) == message);
    EXPECT_EQ(client_.session.read(client_.wire, buffer, sizeof buffer, n), Status::want_io);
    client_.wire.in = nullptr;
  }
  EXPECT_FALSE(client_.session.failed());
}

TEST_F(TlsSession, a_write_with_too_little_room_takes_nothing_then_succeeds_once_room_is_given) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  const std::string request = "GET /room HTTP/1.1\r\n\r\n";
  // Room for what write() keeps in reserve, and nothing besides.
  char small[write_reserve_bytes];
  Wire tight;
  tight.out = small;
  tight.out_cap = sizeof small;
  EXPECT_EQ(client_.session.write(tight, request.data(), request.size()), 0u);
  EXPECT_EQ(tight.out_len, 0u);
  // The same in the area, behind ciphertext waiting to be sent.
  client_.wire.out_len = client_.wire.out_cap - write_reserve_bytes;
  EXPECT_EQ(client_.session.write(client_.wire, request.data(), request.size()), 0u);
  EXPECT_EQ(client_.wire.out_len, client_.wire.out_cap - write_reserve_bytes);
  client_.wire.out_len = 0;  // sent, as far as this test goes
  EXPECT_FALSE(client_.session.failed());
  // With room, all of it goes, and the server reads it whole: nothing was
  // left half-written inside OpenSSL.
  EXPECT_EQ(client_.session.write(client_.wire, request.data(), request.size()), request.size());
  send(client_, server_);
  Status last;
  EXPECT_EQ(read_all(server_, &last), request);
  EXPECT_EQ(last, Status::want_io);
}

TEST_F(TlsSession, a_read_without_room_for_what_it_writes_keeps_the_rest_of_wire_in) {
  auto ctx = client_context(trusting(pki().ca_file));
  start(*ctx, "localhost");
  ASSERT_EQ(handshake_step(client_), Status::want_io);
  send(client_, server_);
  ASSERT_EQ(handshake_step(server_), Status::want_io);
  send(server_, client_);
  ASSERT_EQ(handshake_step(client_), Status::done);
  // The client's Finished and its request, in one receive of the server's.
  const std::string request = "GET /tight HTTP/1.1\r\n\r\n";
  ASSERT_EQ(client_.session.write(client_.wire, request.data(), request.size()), request.size());
  send(client_, server_);
  // Reading the Finished ends the server's handshake, whose session
  // tickets then need room: there is none.
  Wire& wire = server_.wire;
  const std::size_t cap = wire.out_cap;
  wire.out_cap = 0;
  wire.in = server_.network.data();
  wire.in_len = server_.network.size();
  char buffer[record_plaintext_bytes_max];
  std::size_t n = 1;
  EXPECT_EQ(server_.session.read(wire, buffer, sizeof buffer, n), Status::want_io);
  EXPECT_EQ(n, 0u);
  EXPECT_GT(wire.in_len, 0u);  // the request's record, for the call with room
  EXPECT_FALSE(server_.session.failed());
  // With room the tickets go out, and the same call reads the request.
  wire.out_cap = cap;
  ASSERT_EQ(server_.session.read(wire, buffer, sizeof buffer, n), Status::done) << server_.session.error_reason();
  EXPECT_EQ(std::string(buffer, n), request);
  EXPECT_EQ(wire.in_len, 0u);
  EXPECT_TRUE(server_.session.handshake_done());
  wire.in = nullptr;
  server_.network.clear();
  // The tickets reach the client whole.
  ASSERT_GT(send(server_, client_), 0u);
  Status last;
  EXPECT_EQ(read_all(client_, &last), "");
  EXPECT_EQ(last, Status::want_io);
  EXPECT_TRUE(ctx->has_resumable_session());
}

TEST_F(TlsSession, a_flight_larger_than_the_room_goes_on_when_called_again_with_room) {
  auto ctx = client_context(trusting(pki().ca_file));
  start(*ctx, "localhost");
  ASSERT_EQ(handshake_step(client_), Status::want_io);
  send(client_, server_);
  // The server's flight (its certificate and all) through room for 100
  // bytes at a time. The call that read the ClientHello took all of it, so
  // nothing is left in `wire.in`: only the room is waited for.
  constexpr std::size_t room_bytes = 100;
  server_.wire.out_cap = room_bytes;
  Status status = handshake_step(server_);
  EXPECT_TRUE(server_.network.empty());
  int calls = 0;
  while (status == Status::want_io && server_.wire.out_room() == 0 && calls < 1000) {
    send(server_, client_);
    status = server_.session.handshake(server_.wire);
    ++calls;
  }
  EXPECT_EQ(status, Status::want_io);
  EXPECT_GT(calls, 5);
  send(server_, client_);
  server_.wire.out_cap = server_.area.size();
  ASSERT_EQ(handshake_step(client_), Status::done) << client_.session.error_reason();
  send(client_, server_);
  ASSERT_EQ(handshake_step(server_), Status::done) << server_.session.error_reason();
}

TEST_F(TlsSession, sni_carries_the_host_name_to_the_server) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").server, Status::done);
  EXPECT_EQ(server_.session.server_name(), "localhost");
}

TEST_F(TlsSession, an_ip_literal_is_verified_and_sends_no_sni) {
  auto ctx = client_context(trusting(pki().ca_file));
  Outcome out = connect(*ctx, "127.0.0.1");
  ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
  EXPECT_EQ(server_.session.server_name(), "");
  // A bracketed IPv6 literal, as in a URL.
  out = connect(*ctx, "[::1]");
  ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
  EXPECT_EQ(server_.session.server_name(), "");
}

TEST_F(TlsSession, a_second_connection_resumes_with_the_ticket_read_after_the_first_handshake) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_FALSE(client_.session.resumed());
  // TLS 1.3: the tickets follow the handshake and are taken by a read.
  EXPECT_FALSE(ctx->has_resumable_session());
  Status last;
  EXPECT_EQ(read_all(client_, &last), "");
  EXPECT_EQ(last, Status::want_io);
  EXPECT_TRUE(ctx->has_resumable_session());

  // The same Session objects, started again, as a connection slot's are.
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
  ASSERT_EQ(out.server, Status::done) << server_.session.error_reason();
  EXPECT_TRUE(client_.session.resumed());
  EXPECT_TRUE(server_.session.resumed());
  const std::string request = "GET /again HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
}

TEST_F(TlsSession, a_session_is_not_offered_to_another_host) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  ASSERT_TRUE(ctx->has_resumable_session());
  ASSERT_EQ(connect(*ctx, "127.0.0.1").client, Status::done);
  EXPECT_FALSE(client_.session.resumed());
}

TEST_F(TlsSession, resume_off_keeps_no_session) {
  ClientConfig config = trusting(pki().ca_file);
  config.resume = false;
  auto ctx = client_context(config);
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  EXPECT_FALSE(ctx->has_resumable_session());
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_FALSE(client_.session.resumed());
}

TEST_F(TlsSession, a_certificate_from_another_ca_fails_verification) {
  auto ctx = client_context(trusting(pki().other_ca_file));
  const Outcome out = connect(*ctx, "localhost");
  ASSERT_EQ(out.client, Status::error);
  EXPECT_TRUE(client_.session.failed());
  const std::string reason = client_.session.error_reason();
  EXPECT_NE(reason.find("certificate verify failed: unable to get local issuer certificate"), std::string::npos)
      << reason;
  // The client's alert tells the server why.
  EXPECT_EQ(out.server, Status::error);
  EXPECT_NE(server_.session.error_reason().find("unknown CA"), std::string::npos) << server_.session.error_reason();
}

TEST_F(TlsSession, a_certificate_for_another_name_fails_verification) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "example.com").client, Status::error);
  std::string reason = client_.session.error_reason();
  EXPECT_NE(reason.find("hostname mismatch"), std::string::npos) << reason;
  EXPECT_NE(reason.find("example.com"), std::string::npos) << reason;

  ASSERT_EQ(connect(*ctx, "127.0.0.2").client, Status::error);
  reason = client_.session.error_reason();
  EXPECT_NE(reason.find("IP address mismatch"), std::string::npos) << reason;
  EXPECT_NE(reason.find("127.0.0.2"), std::string::npos) << reason;
}

TEST_F(TlsSession, verify_off_accepts_an_unknown_ca_and_another_name) {
  ClientConfig config = trusting(pki().other_ca_file);
  config.verify = false;
  auto ctx = client_context(config);
  Outcome out = connect(*ctx, "localhost");
  EXPECT_EQ(out.client, Status::done) << client_.session.error_reason();
  out = connect(*ctx, "example.com");
  EXPECT_EQ(out.client, Status::done) << client_.session.error_reason();
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(client_, server_, request), request);
}

TEST_F(TlsSession, alpn_selects_http11) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_EQ(client_.session.alpn(), "http/1.1");
  EXPECT_EQ(server_.session.alpn(), "http/1.1");

  ClientConfig both = trusting(pki().ca_file);
  both.alpn = "h2,http/1.1";
  auto ctx_both = client_context(both);
  ASSERT_EQ(connect(*ctx_both, "localhost").client, Status::done);
  EXPECT_EQ(client_.session.alpn(), "http/1.1");
}

TEST_F(TlsSession, no_alpn_offered_means_none_selected) {
  ClientConfig config = trusting(pki().ca_file);
  config.alpn.clear();
  auto ctx = client_context(config);
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  EXPECT_EQ(client_.session.alpn(), "");
  EXPECT_EQ(server_.session.alpn(), "");
}

TEST_F(TlsSession, a_client_offering_only_h2_is_refused_with_no_application_protocol) {
  ClientConfig config = trusting(pki().ca_file);
  config.alpn = "h2";
  auto ctx = client_context(config);
  const Outcome out = connect(*ctx, "localhost");
  EXPECT_EQ(out.server, Status::error);
  ASSERT_EQ(out.client, Status::error);
  const std::string reason = client_.session.error_reason();
  EXPECT_NE(reason.find("no application protocol"), std::string::npos) << reason;
  EXPECT_NE(reason.find("alert"), std::string::npos) << reason;
}

TEST_F(TlsSession, garbage_instead_of_a_server_hello_is_an_error_with_a_reason) {
  auto ctx = client_context(trusting(pki().ca_file));
  std::string error;
  ASSERT_TRUE(ctx->start(client_.session, "localhost", error)) << error;
  ASSERT_EQ(client_.session.handshake(client_.wire), Status::want_io);
  ASSERT_GT(client_.wire.out_len, 0u);  // the ClientHello
  client_.wire.out_len = 0;
  client_.network = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(handshake_step(client_), Status::error);
  EXPECT_EQ(handshake_step(client_), Status::error);  // and stays failed
  char buffer[64];
  std::size_t n = 1;
  EXPECT_EQ(client_.session.read(client_.wire, buffer, sizeof buffer, n), Status::error);
  EXPECT_EQ(n, 0u);
  const std::string reason = client_.session.error_reason();
  EXPECT_FALSE(reason.empty());
  EXPECT_EQ(reason.find("without a reason"), std::string::npos) << reason;
  EXPECT_EQ(client_.session.write(client_.wire, "x", 1), 0u);
}

TEST_F(TlsSession, plain_http_to_the_server_is_an_error_with_a_reason) {
  std::string error;
  ASSERT_TRUE(server_ctx_->start(server_.session, error)) << error;
  server_.network = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(handshake_step(server_), Status::error);
  EXPECT_NE(server_.session.error_reason().find("http request"), std::string::npos) << server_.session.error_reason();
}

TEST_F(TlsSession, close_notify_reads_as_closed) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  ASSERT_TRUE(client_.session.close(client_.wire));
  const std::size_t queued = client_.wire.out_len;
  EXPECT_GT(queued, 0u);
  ASSERT_TRUE(client_.session.close(client_.wire));  // once only
  EXPECT_EQ(client_.wire.out_len, queued);
  ASSERT_EQ(send(client_, server_), queued);
  Status last;
  EXPECT_EQ(read_all(server_, &last), "");
  EXPECT_EQ(last, Status::closed);
  EXPECT_EQ(read_all(server_, &last), "");
  EXPECT_EQ(last, Status::closed);
  EXPECT_FALSE(server_.session.failed());

  // The server answers with its own, and the client sees it the same way.
  ASSERT_TRUE(server_.session.close(server_.wire));
  ASSERT_GT(send(server_, client_), 0u);
  EXPECT_EQ(read_all(client_, &last), "");
  EXPECT_EQ(last, Status::closed);
}

TEST_F(TlsSession, close_without_room_queues_nothing_until_room_is_given) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  read_all(client_);
  Wire none;
  EXPECT_FALSE(client_.session.close(none));
  EXPECT_EQ(none.out_len, 0u);
  ASSERT_TRUE(client_.session.close(client_.wire));
  ASSERT_GT(send(client_, server_), 0u);
  Status last;
  EXPECT_EQ(read_all(server_, &last), "");
  EXPECT_EQ(last, Status::closed);
}

TEST_F(TlsSession, close_before_the_handshake_queues_nothing) {
  auto ctx = client_context(trusting(pki().ca_file));
  std::string error;
  ASSERT_TRUE(ctx->start(client_.session, "localhost", error)) << error;
  EXPECT_TRUE(client_.session.close(client_.wire));
  EXPECT_EQ(client_.wire.out_len, 0u);
  EXPECT_FALSE(client_.session.failed());
}

TEST_F(TlsSession, a_moved_session_carries_on) {
  auto ctx = client_context(trusting(pki().ca_file));
  ASSERT_EQ(connect(*ctx, "localhost").client, Status::done);
  End moved;
  moved.session = std::move(client_.session);
  EXPECT_FALSE(client_.session.started());
  const std::string request = "GET / HTTP/1.1\r\n\r\n";
  EXPECT_EQ(send_all(moved, server_, request), request);
}

TEST(TlsSessionLayout, a_session_is_a_few_pointers) {
  // The per-connection state lives in OpenSSL's objects; the connection
  // table holds only this.
  EXPECT_LE(sizeof(Session), 4 * sizeof(void*));
}

TEST(TlsContext, a_missing_ca_file_is_an_error_naming_it) {
  ClientConfig config;
  config.ca_file = "/nonexistent/ringhttp-ca.pem";
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find("/nonexistent/ringhttp-ca.pem"), std::string::npos) << error;
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
}

TEST(TlsContext, a_file_without_certificates_is_not_a_ca_file) {
  ASSERT_TRUE(pki().ok);
  ClientConfig config;
  config.ca_file = pki().key_file;
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find(pki().key_file), std::string::npos) << error;
}

TEST(TlsContext, an_empty_alpn_name_is_refused) {
  ClientConfig config;
  config.alpn = "http/1.1,,h2";
  std::string error;
  EXPECT_EQ(ClientContext::make(config, error), nullptr);
  EXPECT_NE(error.find("ALPN"), std::string::npos) << error;
}

TEST(TlsContext, hosts_openssl_cannot_use_are_refused_at_start) {
  ASSERT_TRUE(pki().ok);
  auto ctx = client_context(trusting(pki().ca_file));
  Session session;
  std::string error;
  EXPECT_FALSE(ctx->start(session, std::string(256, 'a'), error));
  EXPECT_FALSE(session.started());
  EXPECT_FALSE(ctx->start(session, std::string("local\0host", 10), error));
  EXPECT_FALSE(ctx->start(session, "", error));
  EXPECT_NE(error.find("no host name"), std::string::npos) << error;
}

TEST(TlsContext, a_key_that_does_not_match_the_certificate_is_refused) {
  ASSERT_TRUE(pki().ok);
  std::string error;
  EXPECT_EQ(ServerContext::make({pki().certificate_file, pki().other_key_file}, error), nullptr);
  EXPECT_NE(error.find(pki().other_key_file), std::string::npos) << error;
  EXPECT_NE(error.find("does not match"), std::string::npos) << error;
  EXPECT_EQ(ServerContext::make({"/nonexistent/cert.pem", pki().key_file}, error), nullptr);
  EXPECT_NE(error.find("/nonexistent/cert.pem"), std::string::npos) << error;
}

// ---- core/tls/stream.hpp: how a connection drives its session ------------

// An outbox over an area of its own, `bytes` long.
struct Box {
  std::vector<char> area;
  Outbox out;
  explicit Box(std::size_t bytes = 4 * wire_out_record_bytes) : area(bytes) {
    out.lend(area.data(), std::uint32_t(bytes));
  }
  // What a completed send of the whole outbox carried.
  std::string send_all() {
    const std::span<const char> bytes = out.begin_send();
    std::string sent(bytes.data(), bytes.size());
    out.sent();
    return sent;
  }
};

// What read_records gave, and how it ended.
struct Read {
  ReadEnd end = ReadEnd::drained;
  std::string plaintext;
  int handshakes = 0;
  int records = 0;
};

Read read_records_of(Session& session, Outbox& out, const char*& in, std::size_t& in_len, int stop_after = -1) {
  Read r;
  std::vector<char> plain(record_plaintext_bytes_max);
  r.end = read_records(
      session, out, in, in_len, plain,
      [&] {
        ++r.handshakes;
        return true;
      },
      [&](const char* data, std::size_t n) {
        r.plaintext.append(data, n);
        return ++r.records != stop_after;
      });
  return r;
}

Read read_string(Session& session, Outbox& out, const std::string& bytes) {
  const char* in = bytes.data();
  std::size_t in_len = bytes.size();
  Read r = read_records_of(session, out, in, in_len);
  EXPECT_EQ(in_len, 0u);
  return r;
}

class TlsStream : public TlsSession {
 protected:
  void SetUp() override {
    TlsSession::SetUp();
    ctx_ = client_context(trusting(pki().ca_file));
    const Outcome out = connect(*ctx_, "localhost");
    ASSERT_EQ(out.client, Status::done) << client_.session.error_reason();
    ASSERT_EQ(out.server, Status::done) << server_.session.error_reason();
    read_all(client_);  // the session tickets
    ASSERT_TRUE(client_.network.empty());
  }

  std::unique_ptr<ClientContext> ctx_;
  Box client_box_;
  Box server_box_;
};

// The server's answer, encrypted from a message's iovecs as the server does
// (a record per iovec: here the head, then the body), then cut in two at
// every byte: each record is read whole once its last byte is in, never
// before, and never twice.
TEST_F(TlsStream, a_record_cut_at_every_byte_is_read_whole_once_it_is_complete) {
  std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n";
  std::string body = "Hello, World!";
  const std::string answer = head + body;
  std::size_t record_bytes = 0;
  for (std::size_t cut = 0;; ++cut) {
    iovec iov[2] = {{head.data(), head.size()}, {body.data(), body.size()}};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = 2;
    ASSERT_EQ(encrypt(server_.session, server_box_.out, msg, answer.size()), answer.size());
    const std::string wire = server_box_.send_all();
    if (record_bytes == 0) record_bytes = wire.size();
    ASSERT_EQ(wire.size(), record_bytes);
    if (cut > record_bytes) break;
    const Read first = read_string(client_.session, client_box_.out, wire.substr(0, cut));
    EXPECT_EQ(first.end, ReadEnd::drained) << "cut at " << cut;
    const Read second = read_string(client_.session, client_box_.out, wire.substr(cut));
    EXPECT_EQ(second.end, ReadEnd::drained) << "cut at " << cut;
    EXPECT_EQ(first.plaintext + second.plaintext, answer) << "cut at " << cut;
    EXPECT_EQ(first.records + second.records, 2) << "cut at " << cut;
    EXPECT_TRUE(first.plaintext.empty() || first.plaintext == head || first.plaintext == answer) << "cut at " << cut;
    if (cut == record_bytes) {
      EXPECT_EQ(first.plaintext, answer);
    }
    EXPECT_TRUE(client_box_.out.empty());
  }
  EXPECT_GT(record_bytes, answer.size());
}

// A large batch takes what the outbox has room for; the rest is taken once
// its send is done, and the client reads it all in order.
TEST_F(TlsStream, encrypt_takes_what_the_outbox_has_room_for_and_the_rest_after_its_send) {
  Box small(wire_out_record_bytes);
  const std::string text = pattern(5 * record_plaintext_bytes_max + 100);
  std::size_t offset = 0;
  std::string received;
  int sends = 0;
  while (offset < text.size()) {
    const std::size_t taken = encrypt(server_.session, small.out, text.data() + offset, text.size() - offset);
    ASSERT_GT(taken, 0u);
    EXPECT_LE(taken, record_plaintext_bytes_max);
    offset += taken;
    received += read_string(client_.session, client_box_.out, small.send_all()).plaintext;
    ++sends;
  }
  EXPECT_EQ(received, text);
  EXPECT_EQ(sends, 6);
}

// What the session writes while a send is in flight stays behind it, and
// moves to the front once that send is done.
TEST_F(TlsStream, what_is_written_during_a_send_goes_in_the_next) {
  ASSERT_EQ(encrypt(server_.session, server_box_.out, "first", 5), 5u);
  const std::span<const char> in_flight = server_box_.out.begin_send();
  const std::string first(in_flight.data(), in_flight.size());
  ASSERT_EQ(encrypt(server_.session, server_box_.out, "second", 6), 6u);
  const std::size_t written = server_box_.out.len;
  ASSERT_GT(written, first.size());
  server_box_.out.sent();
  EXPECT_EQ(server_box_.out.len, written - first.size());
  EXPECT_FALSE(server_box_.out.in_flight());
  EXPECT_EQ(read_string(client_.session, client_box_.out, first).plaintext, "first");
  EXPECT_EQ(read_string(client_.session, client_box_.out, server_box_.send_all()).plaintext, "second");
}

// A callback that stops leaves the input after the record it was given;
// the next call reads on from there.
TEST_F(TlsStream, a_callback_that_stops_leaves_the_rest_of_the_input_for_the_next_call) {
  std::string wire;
  for (const char* text : {"one", "two", "three"}) {
    ASSERT_GT(encrypt(server_.session, server_box_.out, text, std::strlen(text)), 0u);
    wire += server_box_.send_all();
  }
  const char* in = wire.data();
  std::size_t in_len = wire.size();
  const Read first = read_records_of(client_.session, client_box_.out, in, in_len, 1);
  EXPECT_EQ(first.end, ReadEnd::stopped);
  EXPECT_EQ(first.plaintext, "one");
  EXPECT_GT(in_len, 0u);
  const Read rest = read_records_of(client_.session, client_box_.out, in, in_len);
  EXPECT_EQ(rest.end, ReadEnd::drained);
  EXPECT_EQ(rest.plaintext, "twothree");
  EXPECT_EQ(in_len, 0u);
}

TEST_F(TlsStream, a_close_notify_ends_the_read_as_closed) {
  ASSERT_TRUE(queue_close(server_.session, server_box_.out));
  ASSERT_FALSE(server_box_.out.empty());
  EXPECT_EQ(read_string(client_.session, client_box_.out, server_box_.send_all()).end, ReadEnd::closed);
}

TEST_F(TlsStream, bytes_that_are_not_a_record_end_the_read_as_an_error_with_an_alert_to_send) {
  const std::string garbage(64, '\x17');
  const char* in = garbage.data();
  std::size_t in_len = garbage.size();
  const Read r = read_records_of(client_.session, client_box_.out, in, in_len);
  EXPECT_EQ(r.end, ReadEnd::error);
  EXPECT_TRUE(client_.session.failed());
  EXPECT_FALSE(client_box_.out.empty());  // the alert
}

// The server reads the client's Finished and first request in one receive
// while its outbox is full (a send in flight): the session tickets it must
// write have no room, so the read stops with the request still unread, and
// goes on once the send is done. The handshake's end is reported once.
TEST(TlsStreamHandshake, a_read_that_stops_for_room_goes_on_after_the_send) {
  ASSERT_TRUE(pki().ok);
  std::string error;
  auto server_ctx = ServerContext::make({pki().certificate_file, pki().key_file}, error);
  ASSERT_NE(server_ctx, nullptr) << error;
  auto ctx = client_context(trusting(pki().ca_file));
  Session client;
  Session server;
  ASSERT_TRUE(ctx->start(client, "localhost", error)) << error;
  ASSERT_TRUE(server_ctx->start(server, error)) << error;
  Box client_box;
  Box server_box;
  ASSERT_EQ(handshake(client, client_box.out), Status::want_io);  // the ClientHello
  Read r = read_string(server, server_box.out, client_box.send_all());
  ASSERT_EQ(r.end, ReadEnd::drained);
  r = read_string(client, client_box.out, server_box.send_all());
  ASSERT_EQ(r.end, ReadEnd::drained);
  ASSERT_EQ(r.handshakes, 1);
  const std::string request = "GET /tight HTTP/1.1\r\n\r\n";
  ASSERT_EQ(encrypt(client, client_box.out, request.data(), request.size()), request.size());
  const std::string finished_and_request = client_box.send_all();
  // A send in flight holds the whole outbox.
  server_box.out.len = server_box.out.cap;
  server_box.out.sending = server_box.out.cap;
  const char* in = finished_and_request.data();
  std::size_t in_len = finished_and_request.size();
  const Read stopped = read_records_of(server, server_box.out, in, in_len);
  EXPECT_EQ(stopped.end, ReadEnd::no_room);
  EXPECT_EQ(stopped.plaintext, "");
  EXPECT_GT(in_len, 0u);
  server_box.out.sent();
  const Read rest = read_records_of(server, server_box.out, in, in_len);
  EXPECT_EQ(rest.end, ReadEnd::drained);
  EXPECT_EQ(rest.plaintext, request);
  EXPECT_EQ(stopped.handshakes + rest.handshakes, 1);
  EXPECT_FALSE(server_box.out.empty());  // the tickets
}

}  // namespace
}  // namespace ringhttp::tls
