// The response parser alone: bytes in, events out, every split of the input.

#include "core/http/response_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ringhttp::http {
namespace {

class Recorder final : public ResponseEvents {
 public:
  void on_response(const ResponseHead& head) override { seen.push_back(head); }
  std::vector<ResponseHead> seen;
};

struct Parsed {
  Recorder events;
  ResponseParser parser;

  explicit Parsed(std::string_view expected_body = {}, bool check_body = false, bool head_request = false) {
    parser.reset({&events, expected_body, check_body, head_request});
  }

  // Feeds `input` in pieces of `step` bytes; then, when `eof`, the end of the stream.
  ResponseParser::Status feed_all(const std::string& input, std::size_t step, bool eof = false) {
    for (std::size_t pos = 0; pos < input.size(); pos += step) {
      const std::size_t len = std::min(step, input.size() - pos);
      if (parser.feed(input.data() + pos, len) != ResponseParser::Status::ok) return ResponseParser::Status::error;
    }
    return eof ? parser.finish() : ResponseParser::Status::ok;
  }
};

const std::string two_plaintext =
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!"
    "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";

TEST(ResponseParser, content_length_responses_are_reported_at_every_split) {
  for (std::size_t step = 1; step <= two_plaintext.size(); ++step) {
    SCOPED_TRACE("step=" + std::to_string(step));
    Parsed p("Hello, World!", true);
    ASSERT_EQ(p.feed_all(two_plaintext, step), ResponseParser::Status::ok);
    ASSERT_EQ(p.events.seen.size(), 2u);
    for (const ResponseHead& h : p.events.seen) {
      EXPECT_EQ(h.status, 200);
      EXPECT_TRUE(h.keep_alive);
      EXPECT_TRUE(h.body_matches);
      EXPECT_EQ(h.body_bytes, 13u);
    }
    EXPECT_FALSE(p.parser.in_message());
  }
}

TEST(ResponseParser, chunked_body_is_reassembled_for_the_check_at_every_split) {
  const std::string input =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8\r\n, World!\r\n0\r\n\r\n";
  for (std::size_t step = 1; step <= input.size(); ++step) {
    SCOPED_TRACE("step=" + std::to_string(step));
    Parsed p("Hello, World!", true);
    ASSERT_EQ(p.feed_all(input, step), ResponseParser::Status::ok);
    ASSERT_EQ(p.events.seen.size(), 1u);
    EXPECT_TRUE(p.events.seen[0].body_matches);
    EXPECT_EQ(p.events.seen[0].body_bytes, 13u);
  }
}

TEST(ResponseParser, close_delimited_body_ends_at_the_end_of_the_stream) {
  const std::string input = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nHello, World!";
  for (std::size_t step = 1; step <= input.size(); ++step) {
    Parsed p("Hello, World!", true);
    ASSERT_EQ(p.feed_all(input, step), ResponseParser::Status::ok);
    EXPECT_TRUE(p.events.seen.empty()) << "not complete before the end of the stream";
    ASSERT_EQ(p.parser.finish(), ResponseParser::Status::ok);
    ASSERT_EQ(p.events.seen.size(), 1u);
    EXPECT_FALSE(p.events.seen[0].keep_alive);
    EXPECT_TRUE(p.events.seen[0].body_matches);
  }
}

TEST(ResponseParser, interim_100_continue_is_skipped) {
  Parsed p;
  ASSERT_EQ(p.feed_all("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", 7),
            ResponseParser::Status::ok);
  ASSERT_EQ(p.events.seen.size(), 1u);
  EXPECT_EQ(p.events.seen[0].status, 201);
}

TEST(ResponseParser, body_mismatch_shorter_longer_and_different_are_all_reported) {
  for (const std::string body : {"Hello, World", "Hello, World!!", "Hello, world!"}) {
    SCOPED_TRACE(body);
    Parsed p("Hello, World!", true);
    const std::string input = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    ASSERT_EQ(p.feed_all(input, 3), ResponseParser::Status::ok);
    ASSERT_EQ(p.events.seen.size(), 1u);
    EXPECT_FALSE(p.events.seen[0].body_matches);
  }
}

TEST(ResponseParser, without_an_expected_body_every_body_matches) {
  Parsed p;
  ASSERT_EQ(p.feed_all("HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found", 4), ResponseParser::Status::ok);
  ASSERT_EQ(p.events.seen.size(), 1u);
  EXPECT_EQ(p.events.seen[0].status, 404);
  EXPECT_TRUE(p.events.seen[0].body_matches);
}

TEST(ResponseParser, head_responses_have_no_body_despite_content_length) {
  Parsed p({}, false, true);
  ASSERT_EQ(p.feed_all("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n", 5),
            ResponseParser::Status::ok);
  ASSERT_EQ(p.events.seen.size(), 2u);
  EXPECT_EQ(p.events.seen[1].body_bytes, 0u);
}

TEST(ResponseParser, a_response_cut_short_is_truncated) {
  Parsed p;
  ASSERT_EQ(p.feed_all("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello", 4), ResponseParser::Status::ok);
  EXPECT_TRUE(p.parser.in_message());
  EXPECT_EQ(p.parser.finish(), ResponseParser::Status::error);
  EXPECT_EQ(p.parser.error(), ResponseError::truncated);
  EXPECT_TRUE(p.events.seen.empty());
}

TEST(ResponseParser, end_of_stream_between_responses_is_clean) {
  Parsed p;
  ASSERT_EQ(p.feed_all(two_plaintext, 11, true), ResponseParser::Status::ok);
  EXPECT_EQ(p.events.seen.size(), 2u);
}

TEST(ResponseParser, garbage_is_malformed) {
  Parsed p;
  EXPECT_EQ(p.feed_all("SMTP ready\r\n\r\n", 100), ResponseParser::Status::error);
  EXPECT_EQ(p.parser.error(), ResponseError::malformed);
}

TEST(ResponseParser, http10_without_keep_alive_is_not_kept_alive) {
  Parsed p;
  ASSERT_EQ(p.feed_all("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", 100), ResponseParser::Status::ok);
  ASSERT_EQ(p.events.seen.size(), 1u);
  EXPECT_FALSE(p.events.seen[0].keep_alive);
}

TEST(ResponseParser, reset_starts_a_fresh_stream) {
  Parsed p;
  ASSERT_EQ(p.feed_all("HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHel", 100), ResponseParser::Status::ok);
  p.parser.reset({&p.events, {}, false, false});
  ASSERT_EQ(p.feed_all(two_plaintext, 100), ResponseParser::Status::ok);
  EXPECT_EQ(p.events.seen.size(), 2u);
}

}  // namespace
}  // namespace ringhttp::http
