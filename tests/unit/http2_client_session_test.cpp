// The HTTP/2 client session against an HTTP/2 server session of
// libnghttp2's own, over memory: each test decides how the server answers
// (a response, an interim 1xx, RST_STREAM, GOAWAY, no streams allowed, a
// broken header block) and checks what every stream's result says.

#include "core/http2/client_session.hpp"

#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ringhttp::http2 {
namespace {

nghttp2_nv field(const char* name, const char* value) {
  return {reinterpret_cast<std::uint8_t*>(const_cast<char*>(name)),
          reinterpret_cast<std::uint8_t*>(const_cast<char*>(value)), std::strlen(name), std::strlen(value),
          NGHTTP2_NV_FLAG_NO_COPY_NAME | NGHTTP2_NV_FLAG_NO_COPY_VALUE};
}

const nghttp2_nv get_fields[] = {field(":method", "GET"), field(":scheme", "http"), field(":authority", "test"),
                                 field(":path", "/")};
const nghttp2_nv post_fields[] = {field(":method", "POST"), field(":scheme", "http"), field(":authority", "test"),
                                  field(":path", "/echo")};

// The server: an nghttp2 server session; `answer` is called once per
// request, when it has arrived whole, with the stream and its body.
class Server {
 public:
  std::function<void(Server&, std::int32_t stream, const std::string& body)> answer;
  std::map<std::int32_t, std::string> bodies;  // the requests' bodies, by stream
  std::vector<nghttp2_settings_entry> settings;

  Server() {
    nghttp2_session_callbacks* cb = nullptr;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
    nghttp2_session_server_new(&session, cb, this);
    nghttp2_session_callbacks_del(cb);
  }
  ~Server() { nghttp2_session_del(session); }

  void send_settings() { nghttp2_submit_settings(session, NGHTTP2_FLAG_NONE, settings.data(), settings.size()); }

  // A response: `status`, then `body` (kept by the server until sent).
  void respond(std::int32_t stream, const char* status, std::string body, bool end = true) {
    std::string& kept = kept_bodies[stream] = std::move(body);
    const nghttp2_nv head[] = {field(":status", status)};
    nghttp2_data_provider provider{};
    provider.source.ptr = &kept;
    provider.read_callback = read_body;
    if (end) {
      nghttp2_submit_response(session, stream, head, 1, &provider);
    } else {
      nghttp2_submit_headers(session, NGHTTP2_FLAG_NONE, stream, nullptr, head, 1, nullptr);
    }
  }

  nghttp2_session* session = nullptr;

 private:
  std::map<std::int32_t, std::string> kept_bodies;

  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    Server& self = *static_cast<Server*>(user);
    const bool request_end = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
                             (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
    if (request_end && self.answer) self.answer(self, frame->hd.stream_id, self.bodies[frame->hd.stream_id]);
    return 0;
  }
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t stream, const std::uint8_t* data, std::size_t len,
                     void* user) {
    static_cast<Server*>(user)->bodies[stream].append(reinterpret_cast<const char*>(data), len);
    return 0;
  }
  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length, std::uint32_t* flags,
                           nghttp2_data_source* source, void*) {
    auto* body = static_cast<std::string*>(source->ptr);
    const std::size_t n = std::min(length, body->size());
    std::memcpy(buf, body->data(), n);
    body->erase(0, n);
    if (body->empty()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return ssize_t(n);
  }
};

struct Results final : ClientEvents {
  std::map<void*, StreamResult> done;
  std::vector<std::pair<std::int32_t, std::uint32_t>> goaways;
  void on_stream_done(void* user, const StreamResult& result) override { done[user] = result; }
  void on_goaway(std::int32_t last, std::uint32_t code) override { goaways.emplace_back(last, code); }
};

// Moves bytes both ways until neither side has any; false when the
// client's session refused what it read.
bool pump(ClientSession& client, Server& server) {
  bool ok = true;
  for (int round = 0; round < 100; ++round) {
    char buf[4096];
    bool moved = false;
    while (const std::size_t n = client.take_output(buf, sizeof buf)) {
      EXPECT_EQ(nghttp2_session_mem_recv(server.session, reinterpret_cast<std::uint8_t*>(buf), n), ssize_t(n));
      moved = true;
    }
    const std::uint8_t* out = nullptr;
    while (true) {
      const ssize_t n = nghttp2_session_mem_send(server.session, &out);
      if (n <= 0) break;
      if (ok) ok = client.receive(reinterpret_cast<const char*>(out), std::size_t(n)) == ClientSession::Status::ok;
      moved = true;
    }
    if (!moved) break;
  }
  return ok;
}

int tag[16];  // the streams' user pointers

class Http2Client : public ::testing::Test {
 protected:
  void SetUp() override { server.send_settings(); }
  void start(std::uint32_t max_streams) {
    ClientSettings settings;
    settings.max_streams = max_streams;
    ASSERT_TRUE(client.start(&results, settings));
  }
  ClientRequest get(std::string_view expected = {}) {
    ClientRequest r;
    r.headers = get_fields;
    r.expected_body = expected;
    r.check_body = !expected.empty();
    return r;
  }

  Server server;
  Results results;
  ClientSession client;
};

TEST_F(Http2Client, a_response_is_read_whole_and_its_body_compared) {
  server.answer = [](Server& s, std::int32_t stream, const std::string&) { s.respond(stream, "200", "hello"); };
  start(1);
  ASSERT_TRUE(client.submit(get("hello"), &tag[0]));
  EXPECT_FALSE(client.can_submit());
  ASSERT_TRUE(pump(client, server));
  ASSERT_EQ(results.done.count(&tag[0]), 1u);
  const StreamResult& r = results.done[&tag[0]];
  EXPECT_EQ(r.end, StreamEnd::complete);
  EXPECT_EQ(r.head.status, 200);
  EXPECT_EQ(r.head.body_bytes, 5u);
  EXPECT_TRUE(r.head.body_matches);
  EXPECT_EQ(client.open_streams(), 0u);
  EXPECT_TRUE(client.can_submit());
}

TEST_F(Http2Client, a_body_that_differs_or_stops_short_does_not_match) {
  server.answer = [](Server& s, std::int32_t stream, const std::string&) {
    s.respond(stream, "200", stream == 1 ? "hellO" : "hell");
  };
  start(2);
  ASSERT_TRUE(client.submit(get("hello"), &tag[0]));
  ASSERT_TRUE(client.submit(get("hello"), &tag[1]));
  ASSERT_TRUE(pump(client, server));
  EXPECT_FALSE(results.done[&tag[0]].head.body_matches);
  EXPECT_FALSE(results.done[&tag[1]].head.body_matches);
  EXPECT_EQ(results.done[&tag[1]].end, StreamEnd::complete);
}

TEST_F(Http2Client, streams_run_at_once_up_to_the_limit_then_again) {
  server.answer = [](Server& s, std::int32_t stream, const std::string&) { s.respond(stream, "204", ""); };
  start(4);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(client.submit(get(), &tag[i]));
  EXPECT_FALSE(client.submit(get(), &tag[4]));
  EXPECT_EQ(client.open_streams(), 4u);
  ASSERT_TRUE(pump(client, server));
  ASSERT_EQ(results.done.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(results.done[&tag[i]].head.status, 204);
  for (int i = 4; i < 8; ++i) ASSERT_TRUE(client.submit(get(), &tag[i]));
  ASSERT_TRUE(pump(client, server));
  EXPECT_EQ(results.done.size(), 8u);
}

TEST_F(Http2Client, an_interim_response_is_replaced_by_the_final_one) {
  server.answer = [](Server& s, std::int32_t stream, const std::string&) {
    s.respond(stream, "103", "", false);
    s.respond(stream, "200", "ok");
  };
  start(1);
  ASSERT_TRUE(client.submit(get("ok"), &tag[0]));
  ASSERT_TRUE(pump(client, server));
  EXPECT_EQ(results.done[&tag[0]].head.status, 200);
  EXPECT_EQ(results.done[&tag[0]].end, StreamEnd::complete);
}

TEST_F(Http2Client, a_request_body_arrives_whole) {
  const std::string body(100'000, 'x');  // beyond one DATA frame and the default window
  std::string got;
  server.answer = [&](Server& s, std::int32_t stream, const std::string& b) {
    got = b;
    s.respond(stream, "200", "");
  };
  start(1);
  ClientRequest r;
  r.headers = post_fields;
  r.body = body;
  ASSERT_TRUE(client.submit(r, &tag[0]));
  ASSERT_TRUE(pump(client, server));
  EXPECT_EQ(got, body);
  EXPECT_EQ(results.done[&tag[0]].end, StreamEnd::complete);
}

TEST_F(Http2Client, a_reset_mid_response_ends_the_stream_with_its_code) {
  server.answer = [](Server& s, std::int32_t stream, const std::string&) {
    s.respond(stream, "200", "", false);
    nghttp2_submit_rst_stream(s.session, NGHTTP2_FLAG_NONE, stream, NGHTTP2_INTERNAL_ERROR);
  };
  start(1);
  ASSERT_TRUE(client.submit(get(), &tag[0]));
  ASSERT_TRUE(pump(client, server));
  EXPECT_EQ(results.done[&tag[0]].end, StreamEnd::reset);
  EXPECT_EQ(results.done[&tag[0]].error_code, std::uint32_t(NGHTTP2_INTERNAL_ERROR));
  EXPECT_TRUE(client.can_submit());
}

TEST_F(Http2Client, a_goaway_answers_the_streams_it_covers_and_refuses_the_rest) {
  int answered = 0;
  server.answer = [&](Server& s, std::int32_t stream, const std::string&) {
    if (++answered < 3) return;  // all three have arrived: stream 1 is answered, 3 and 5 not
    nghttp2_submit_goaway(s.session, NGHTTP2_FLAG_NONE, 1, NGHTTP2_NO_ERROR, nullptr, 0);
    s.respond(1, "200", "a");
    (void)stream;
  };
  start(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client.submit(get(), &tag[i]));
  ASSERT_TRUE(pump(client, server));
  ASSERT_EQ(results.goaways.size(), 1u);
  EXPECT_EQ(results.goaways[0].first, 1);
  EXPECT_EQ(results.done[&tag[0]].end, StreamEnd::complete);
  EXPECT_EQ(results.done[&tag[1]].end, StreamEnd::refused);
  EXPECT_EQ(results.done[&tag[2]].end, StreamEnd::refused);
  EXPECT_FALSE(client.can_submit());
}

TEST_F(Http2Client, a_server_that_allows_no_stream_gets_none) {
  server.settings = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 0}};
  server.send_settings();
  start(4);
  ASSERT_TRUE(pump(client, server));
  EXPECT_EQ(client.server_max_streams(), 0u);
  EXPECT_FALSE(client.can_submit());
  EXPECT_FALSE(client.submit(get(), &tag[0]));
}

TEST_F(Http2Client, a_broken_header_block_breaks_the_connection_and_every_stream) {
  start(2);
  ASSERT_TRUE(client.submit(get(), &tag[0]));
  ASSERT_TRUE(client.submit(get(), &tag[1]));
  ASSERT_TRUE(pump(client, server));  // the requests out, the server's SETTINGS in
  // A HEADERS frame on stream 1 whose block indexes past the tables
  // (0xff 0x7f...: an indexed field, index 16510).
  const unsigned char frame[] = {0, 0, 3, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 0, 0, 0, 1, 0xff, 0xff, 0x7f};
  client.receive(reinterpret_cast<const char*>(frame), sizeof frame);
  char out[256];
  EXPECT_GT(client.take_output(out, sizeof out), 0u);  // the GOAWAY
  EXPECT_TRUE(client.broken());
  EXPECT_EQ(client.broken_code(), std::uint32_t(NGHTTP2_COMPRESSION_ERROR));
  EXPECT_EQ(client.receive(reinterpret_cast<const char*>(frame), 0), ClientSession::Status::error);
  EXPECT_TRUE(client.finished());
  client.close();
  EXPECT_EQ(results.done[&tag[0]].end, StreamEnd::broken);
  EXPECT_EQ(results.done[&tag[1]].end, StreamEnd::broken);
  EXPECT_EQ(client.open_streams(), 0u);
}

}  // namespace
}  // namespace ringhttp::http2
