// The parser layer alone: bytes in, events out, every split of the input.

#include "core/http/request_parser.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>

#include <string>
#include <vector>

namespace ringhttp::http {
namespace {

struct Seen {
  std::string method;
  std::string target;
  bool keep_alive;
  bool expect_continue;
  std::string kept[kept_header_kinds];  // "<absent>", "<unusable>" or the value
  std::string body;
  bool body_truncated;
};

std::string describe(const HeaderValue& v) {
  if (!v.present) return "<absent>";
  if (!v.usable) return "<unusable>";
  return std::string(v.value);
}

class Recorder final : public RequestEvents {
 public:
  void on_request_headers(const RequestHead& head) override {
    if (head.expect_continue) ++continues;
  }
  bool on_request(const RequestHead& head) override {
    Seen s{std::string(head.method_name()), std::string(head.target), head.keep_alive, head.expect_continue, {},
           std::string(head.body), head.body_truncated};
    for (std::size_t i = 0; i < kept_header_kinds; ++i) s.kept[i] = describe(head.header(KeptHeader(i)));
    seen.push_back(std::move(s));
    return pause_after_each;
  }
  std::vector<Seen> seen;
  int continues = 0;
  bool pause_after_each = false;
};

struct Parsed {
  Recorder events;
  RequestParser::Buffers buffers;
  RequestParser parser;
  RequestParser::Result last{RequestParser::Status::done, 0};

  explicit Parsed(RequestParser::Limits limits = {}) {
    parser.reset(limits, &events);
    parser.lend_buffers(&buffers);
  }

  // Feeds `input` in pieces of `step` bytes, resuming after pauses.
  RequestParser::Status feed_all(const std::string& input, std::size_t step) {
    std::size_t pos = 0;
    while (pos < input.size()) {
      const std::size_t len = std::min(step, input.size() - pos);
      std::size_t off = 0;
      while (off < len) {
        last = parser.feed(input.data() + pos + off, len - off);
        if (last.status == RequestParser::Status::error) return last.status;
        off += last.consumed;
        if (last.status == RequestParser::Status::done) break;
      }
      pos += len;
    }
    return last.status;
  }
};

const std::string two_requests =
    "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n"
    "POST /json?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 35\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";

TEST(RequestParser, parses_pipelined_requests_at_every_split) {
  for (std::size_t step = 1; step <= two_requests.size(); ++step) {
    Parsed p;
    ASSERT_NE(p.feed_all(two_requests, step), RequestParser::Status::error) << "step " << step;
    ASSERT_EQ(p.events.seen.size(), 2u) << "step " << step;
    EXPECT_EQ(p.events.seen[0].method, "GET");
    EXPECT_EQ(p.events.seen[0].target, "/plaintext");
    EXPECT_EQ(p.events.seen[1].method, "POST");
    EXPECT_EQ(p.events.seen[1].target, "/json?x=1");  // the body is never parsed as a request
  }
}

TEST(RequestParser, pause_reports_exactly_the_bytes_of_the_first_request) {
  Parsed p;
  p.events.pause_after_each = true;
  const auto r = p.parser.feed(two_requests.data(), two_requests.size());
  ASSERT_EQ(r.status, RequestParser::Status::paused);
  EXPECT_EQ(r.consumed, std::string("GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n").size());
  const auto rest = p.parser.feed(two_requests.data() + r.consumed, two_requests.size() - r.consumed);
  EXPECT_EQ(rest.status, RequestParser::Status::paused);
  EXPECT_EQ(r.consumed + rest.consumed, two_requests.size());
  EXPECT_EQ(p.events.seen.size(), 2u);
}

TEST(RequestParser, keep_alive_follows_version_and_connection_header) {
  const struct {
    const char* input;
    bool keep_alive;
  } cases[] = {
      {"GET / HTTP/1.0\r\n\r\n", false},
      {"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nHost: a\r\n\r\n", true},
      {"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", false},
  };
  for (const auto& c : cases) {
    Parsed p;
    p.feed_all(c.input, 1000);
    ASSERT_EQ(p.events.seen.size(), 1u) << c.input;
    EXPECT_EQ(p.events.seen[0].keep_alive, c.keep_alive) << c.input;
  }
}

TEST(RequestParser, chunked_body_is_consumed) {
  Parsed p;
  const std::string in =
      "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\n\r\n";
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed q;
    ASSERT_NE(q.feed_all(in, step), RequestParser::Status::error);
    ASSERT_EQ(q.events.seen.size(), 2u);
    EXPECT_EQ(q.events.seen[1].target, "/b");
  }
}

TEST(RequestParser, expect_continue_is_reported_with_a_body_only) {
  Parsed p;
  p.feed_all(
      "POST /a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok"
      "GET /b HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n",
      7);
  EXPECT_EQ(p.events.continues, 1);
  EXPECT_EQ(p.events.seen.size(), 2u);
}

struct BadCase {
  const char* name;
  std::string input;
  ParseError error;
};

TEST(RequestParser, each_bad_input_maps_to_its_error_and_status) {
  const std::string big_header = "GET / HTTP/1.1\r\nHost: a\r\nX: " + std::string(40000, 'a') + "\r\n\r\n";
  const std::vector<BadCase> cases = {
      {"malformed", "GARBAGE\r\n\r\n", ParseError::malformed},
      {"bad version", "GET / HTTP/x\r\n\r\n", ParseError::malformed},
      {"cl and te", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
       ParseError::ambiguous_length},
      {"te and cl", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
       ParseError::ambiguous_length},
      {"two lengths", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
       ParseError::ambiguous_length},
      {"gzip", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", ParseError::ambiguous_length},
      {"chunked twice", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
       ParseError::ambiguous_length},
      {"unknown method", "FOO / HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::unsupported_method},
      {"known prefix, unknown method", "GETX / HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::unsupported_method},
      {"empty method", " / HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::malformed},
      {"method not a token", "GE(T / HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::malformed},
      {"connect", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", ParseError::unsupported_method},
      {"http/2.0", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", ParseError::unsupported_version},
      {"bare lf", "GET / HTTP/1.1\r\nHost: a\n\r\n", ParseError::bad_framing},
      {"space in a name", "GET / HTTP/1.1\r\nHost: a\r\nFoo Bar: b\r\n\r\n", ParseError::malformed},
      {"empty host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", ParseError::bad_host},
      {"gzip, chunked", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
       ParseError::unsupported_transfer_coding},
      {"header too large", big_header, ParseError::header_too_large},
      {"body too large", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2000000\r\n\r\n", ParseError::body_too_large},
      {"target too long", "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::target_too_long},
  };
  for (const BadCase& c : cases) {
    for (std::size_t step : {std::size_t(1), std::size_t(3), c.input.size()}) {
      Parsed p;
      EXPECT_EQ(p.feed_all(c.input, step), RequestParser::Status::error) << c.name << " step " << step;
      EXPECT_EQ(p.parser.error(), c.error) << c.name << " step " << step;
    }
  }
  EXPECT_EQ(status_for(ParseError::malformed), 400);
  EXPECT_EQ(status_for(ParseError::ambiguous_length), 400);
  EXPECT_EQ(status_for(ParseError::header_too_large), 431);
  EXPECT_EQ(status_for(ParseError::body_too_large), 413);
  EXPECT_EQ(status_for(ParseError::unsupported_transfer_coding), 501);
}

TEST(RequestParser, only_the_exact_header_names_are_inspected) {
  const std::string in =
      "POST /a HTTP/1.1\r\nHost: a\r\nExpectation: 100-continue\r\nX-Transfer-Encoding: gzip\r\n"
      "transfer-encodinG: chunked\r\nT: x\r\nE:\r\n\r\n0\r\n\r\n";
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed p;
    ASSERT_NE(p.feed_all(in, step), RequestParser::Status::error) << "step " << step;
    ASSERT_EQ(p.events.seen.size(), 1u) << "step " << step;
    EXPECT_FALSE(p.events.seen[0].expect_continue);
  }
}

TEST(RequestParser, chunked_body_over_limit_is_refused) {
  RequestParser::Limits limits;
  limits.body_bytes_max = 4;
  Parsed p(limits);
  EXPECT_EQ(p.feed_all("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 3),
            RequestParser::Status::error);
  EXPECT_EQ(p.parser.error(), ParseError::body_too_large);
}

TEST(RequestParser, header_section_state_is_tracked) {
  Parsed p;
  p.feed_all("GET / HTTP/1.1\r\nHost:", 100);
  EXPECT_TRUE(p.parser.in_header_section());
  p.feed_all(" x\r\n\r\n", 100);
  EXPECT_FALSE(p.parser.in_header_section());
  EXPECT_FALSE(p.parser.in_message());
}

}  // namespace
}  // namespace ringhttp::http

namespace ringhttp::http {
namespace {

const std::string& kept(const Seen& s, KeptHeader h) { return s.kept[std::size_t(h)]; }

TEST(RequestParser, keeps_the_application_headers_and_body_at_every_split) {
  const std::string in =
      "POST /echo HTTP/1.1\r\nHost: a\r\nCONTENT-type:  application/json; charset=utf-8 \r\n"
      "Authorization: Bearer aB.cD.eF\r\nOrigin: https://App.example\r\nContent-Length: 12\r\n"
      "Access-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: x-a, x-b\r\n"
      "Accept: */*\r\nOriginal: no\r\n\r\n{\"name\":\"a\"}"
      "GET /next HTTP/1.1\r\nHost: a\r\n\r\n";
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed p;
    ASSERT_NE(p.feed_all(in, step), RequestParser::Status::error) << "step " << step;
    ASSERT_EQ(p.events.seen.size(), 2u) << "step " << step;
    const Seen& a = p.events.seen[0];
    EXPECT_EQ(kept(a, KeptHeader::content_type), "application/json; charset=utf-8") << step;
    EXPECT_EQ(kept(a, KeptHeader::authorization), "Bearer aB.cD.eF") << step;
    EXPECT_EQ(kept(a, KeptHeader::origin), "https://App.example") << step;
    EXPECT_EQ(kept(a, KeptHeader::access_control_request_method), "PUT") << step;
    EXPECT_EQ(kept(a, KeptHeader::access_control_request_headers), "x-a, x-b") << step;
    EXPECT_EQ(a.body, "{\"name\":\"a\"}") << step;
    EXPECT_FALSE(a.body_truncated);
    // Nothing leaks into the next request.
    const Seen& b = p.events.seen[1];
    for (const std::string& v : b.kept) EXPECT_EQ(v, "<absent>") << step;
    EXPECT_EQ(b.body, "");
  }
}

// The server lends a parser its buffers only while a request is in
// progress: at any split, buffers taken back between requests and another
// set (full of garbage) lent for the next must change nothing it reports.
TEST(RequestParser, its_buffers_may_change_hands_between_requests) {
  const std::string in =
      "POST /echo HTTP/1.1\r\nHost: a\r\nOrigin: https://a\r\nContent-Length: 2\r\n\r\n{}"
      "GET /next?q=1 HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n\r\n"
      "\r\nGET /third HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed p;
    RequestParser::Buffers other;
    std::size_t trades = 0;
    for (std::size_t pos = 0; pos < in.size(); pos += step) {
      const std::size_t len = std::min(step, in.size() - pos);
      ASSERT_NE(p.feed_all(in.substr(pos, len), len), RequestParser::Status::error) << "step " << step;
      if (p.parser.in_message()) continue;
      RequestParser::Buffers* mine = p.parser.take_buffers();
      ASSERT_NE(mine, nullptr);
      ASSERT_FALSE(p.parser.has_buffers());
      RequestParser::Buffers* next = mine == &p.buffers ? &other : &p.buffers;
      std::memset(static_cast<void*>(next), 0x5A, sizeof *next);
      p.parser.lend_buffers(next);
      ++trades;
    }
    if (step == 1) {
      EXPECT_GE(trades, 4u);  // between each request, and on the empty line
    }
    ASSERT_EQ(p.events.seen.size(), 3u) << "step " << step;
    const Seen& a = p.events.seen[0];
    EXPECT_EQ(a.target, "/echo");
    EXPECT_EQ(kept(a, KeptHeader::origin), "https://a") << step;
    EXPECT_EQ(a.body, "{}") << step;
    const Seen& b = p.events.seen[1];
    EXPECT_EQ(b.target, "/next?q=1") << step;
    EXPECT_EQ(kept(b, KeptHeader::origin), "<absent>") << step;
    EXPECT_EQ(kept(b, KeptHeader::content_type), "text/plain") << step;
    EXPECT_EQ(b.body, "") << step;
    const Seen& c = p.events.seen[2];
    EXPECT_EQ(c.target, "/third") << step;
    EXPECT_EQ(kept(c, KeptHeader::content_type), "<absent>") << step;
    EXPECT_EQ(c.body, "abc") << step;
  }
}

TEST(RequestParser, a_repeated_or_oversized_kept_header_is_unusable) {
  Parsed p;
  const std::string token(RequestParser::kept_value_bytes_max + 1, 'x');
  p.feed_all("GET / HTTP/1.1\r\nHost: a\r\nOrigin: https://a\r\norigin: https://b\r\nAuthorization: Bearer " + token +
                 "\r\nContent-Type: text/plain\r\n\r\n",
             100);
  ASSERT_EQ(p.events.seen.size(), 1u);
  const Seen& a = p.events.seen[0];
  EXPECT_EQ(kept(a, KeptHeader::origin), "<unusable>");
  EXPECT_EQ(kept(a, KeptHeader::authorization), "<unusable>");
  // The oversized value gave its room back: the next one is kept.
  EXPECT_EQ(kept(a, KeptHeader::content_type), "text/plain");
}

TEST(RequestParser, a_body_over_the_kept_size_is_read_but_not_kept) {
  Parsed p;
  const std::string big(RequestParser::body_kept_bytes_max + 1, 'b');
  const std::string fits(RequestParser::body_kept_bytes_max, 'f');
  const std::string in = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: " + std::to_string(big.size()) + "\r\n\r\n" + big +
                         "POST /b HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + "1000\r\n" + fits +
                         "\r\n0\r\n\r\n";
  for (std::size_t step : {std::size_t(1000), std::size_t(4096), in.size()}) {
    Parsed q;
    ASSERT_NE(q.feed_all(in, step), RequestParser::Status::error);
    ASSERT_EQ(q.events.seen.size(), 2u);
    EXPECT_TRUE(q.events.seen[0].body_truncated);
    EXPECT_EQ(q.events.seen[0].body, "");
    EXPECT_FALSE(q.events.seen[1].body_truncated);
    EXPECT_EQ(q.events.seen[1].body, fits);
  }
}

}  // namespace
}  // namespace ringhttp::http

// Strict where llhttp 8.1 is lenient, and RFC 9112's MUSTs: each case at
// every split of its input, and no request of the input may be delivered
// once its own framing is bad (that is how a request is smuggled).
namespace ringhttp::http {
namespace {

void expect_refused_at_every_split(const std::string& in, ParseError error, std::size_t requests_before,
                                   RequestParser::Limits limits = {}) {
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed p(limits);
    p.events.pause_after_each = step % 2 == 0;  // both ways: paused after each request, and not
    EXPECT_EQ(p.feed_all(in, step), RequestParser::Status::error) << "step " << step;
    EXPECT_EQ(p.parser.error(), error) << "step " << step << " error " << metric_name(p.parser.error());
    EXPECT_EQ(p.events.seen.size(), requests_before) << "step " << step;
    if (testing::Test::HasFailure()) return;
  }
}

const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";

TEST(StrictFraming, a_cr_ending_the_header_section_must_be_followed_by_lf) {
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\n\rX" + smuggled, ParseError::bad_framing, 0);
}

// llhttp itself refuses the byte after the request line's CR when it is not
// LF (it checks the version there), so this one is malformed either way.
TEST(StrictFraming, a_cr_in_the_request_line_must_be_followed_by_lf) {
  expect_refused_at_every_split("GET /ok HTTP/1.1\r\nHost: a\r\n\r\nGET /a HTTP/1.1\rXHost: a\r\n\r\n",
                                ParseError::bad_framing, 1);
}

// Where llhttp stops on a bad byte can depend on the split (a byte later,
// or the feed's end); the kind reported must not (inputs the fuzzer found).
TEST(StrictFraming, the_kind_does_not_depend_on_where_llhttp_stops) {
  expect_refused_at_every_split(std::string("POST  a\rransfer"), ParseError::bad_framing, 0);
  expect_refused_at_every_split(std::string("POST aTP \r/T./H11\nHost"), ParseError::malformed, 0);
}

// One rule wherever a line ends: CRLF, never a bare LF (RFC 9112 section
// 2.2 lets a recipient take one; taking it in some places only is what
// lets two parsers disagree on where a message ends). Each place, after a
// request that is served, at every split.
TEST(StrictFraming, a_bare_lf_is_refused_wherever_a_line_ends) {
  const std::string ok = "GET /ok HTTP/1.1\r\nHost: a\r\n\r\n";
  const std::string chunked = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const std::string& bad : {
           std::string("\nGET /a HTTP/1.1\r\nHost: a\r\n\r\n"),    // before the request line
           std::string("GET /a HTTP/1.1\nHost: a\r\n\r\n"),          // after the request line
           std::string("GET /a HTTP/1.1\r\nHost: a\nX: y\r\n\r\n"),  // after a header line
           std::string("GET /a HTTP/1.1\r\nHost: a\r\n\n"),          // as the blank line
           chunked + "5\nhello\r\n0\r\n\r\n",                       // after a chunk size
           chunked + "5\r\nhello\n0\r\n\r\n",                       // after chunk data
           chunked + "0\n\r\n",                                     // after the last chunk
           chunked + "0\r\nX: y\n\r\n",                              // after a trailer
           chunked + "0\r\nX: y\r\n\n",                              // as the blank line after trailers
           chunked + "0\r\n\n",                                     // as the blank line, no trailers
       }) {
    expect_refused_at_every_split(ok + bad + smuggled, ParseError::bad_framing, 1);
  }
  // A body's last byte is a CR and the next request starts with an LF: the
  // LF is still bare (the CR was body data).
  expect_refused_at_every_split("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n\r\n" + smuggled,
                                ParseError::bad_framing, 1);
  // One empty line (CRLF) before a request line is still taken (RFC 9112
  // section 2.2).
  Parsed p;
  EXPECT_NE(p.feed_all(ok + "\r\n" + ok, 1), RequestParser::Status::error);
  EXPECT_EQ(p.events.seen.size(), 2u);
}

TEST(StrictFraming, chunk_data_must_end_in_exactly_crlf) {
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_refused_at_every_split(head + "5\r\nhelloXX0\r\n\r\n" + smuggled, ParseError::bad_framing, 0);
  expect_refused_at_every_split(head + "5\r\nhello\rX0\r\n\r\n" + smuggled, ParseError::bad_framing, 0);
  expect_refused_at_every_split(head + "5\r\nhello\n0\r\n\r\n" + smuggled, ParseError::bad_framing, 0);
}

TEST(StrictFraming, a_chunk_size_line_must_end_in_crlf) {
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_refused_at_every_split(head + "5\rXhello\r\n0\r\n\r\n" + smuggled, ParseError::bad_framing, 0);
  expect_refused_at_every_split(head + "5;ext=1\rXhello\r\n0\r\n\r\n" + smuggled, ParseError::bad_framing, 0);
  expect_refused_at_every_split(head + "5\r\nhello\r\n0\rX\r\n" + smuggled, ParseError::bad_framing, 0);
}

TEST(StrictFraming, trailers_must_end_in_crlf) {
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_refused_at_every_split(head + "0\r\nT: 1\r\n\rX" + smuggled, ParseError::bad_framing, 0);
}

TEST(StrictFraming, folded_header_lines_are_refused) {
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\nX-A: b\r\n c\r\n\r\n", ParseError::bad_framing, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\nX-A: b\r\n\tc\r\n\r\n", ParseError::bad_framing, 0);
}

TEST(StrictFraming, whitespace_before_a_colon_is_refused) {
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost : a\r\n\r\n", ParseError::malformed, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\nX-Long-Name  : b\r\n\r\n", ParseError::malformed, 0);
}

// llhttp 8.1 reports ": x" as more of the previous line's value (here,
// Host would read "ax"); a field name is a token, so it is refused.
TEST(StrictFraming, an_empty_header_name_is_refused) {
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n", ParseError::bad_framing, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\n: x\r\nHost: a\r\n\r\n", ParseError::bad_framing, 0);
}

TEST(StrictFraming, a_well_formed_chunked_body_with_extensions_and_trailers_passes) {
  const std::string in =
      "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;name=value\r\nhel\rX\r\n0\r\nT: 1\r\n\r\n" + smuggled;
  for (std::size_t step = 1; step <= in.size(); ++step) {
    Parsed p;
    ASSERT_NE(p.feed_all(in, step), RequestParser::Status::error) << "step " << step;
    ASSERT_EQ(p.events.seen.size(), 2u) << "step " << step;
    EXPECT_EQ(p.events.seen[0].body, "hel\rX");  // a CR inside body data is data
    EXPECT_EQ(p.events.seen[1].target, "/smuggled");
  }
}

TEST(Rfc9112, http11_needs_exactly_one_valid_host) {
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nX: y\r\n\r\n", ParseError::bad_host, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", ParseError::bad_host, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a b\r\n\r\n", ParseError::bad_host, 0);
  expect_refused_at_every_split("GET /a HTTP/1.1\r\nHost: a/b\r\n\r\n", ParseError::bad_host, 0);
  expect_refused_at_every_split("GET /a HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", ParseError::bad_host, 0);
  // Empty (an http URI's host never is), or not uri-host [":" port].
  for (const char* bad : {"", " ", "a:b", "a:80:80", "::1", "[::1", "[::1]x", "a:8 0", "[a]b]", ":80", "a[b]"}) {
    expect_refused_at_every_split(std::string("GET /a HTTP/1.1\r\nHost: ") + bad + "\r\n\r\n", ParseError::bad_host, 0);
  }
  for (const char* ok : {"GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nHost: a:\r\n\r\n",
                         "GET / HTTP/1.1\r\nHost:  [::1]:8080 \r\n\r\n", "GET / HTTP/1.1\r\nHost: a.b-c_d~e:1\r\n\r\n",
                         "GET / HTTP/1.1\r\nHost: [v1.x:y]\r\n\r\n", "GET / HTTP/1.1\r\nHost: 127.0.0.1:65535\r\n\r\n"}) {
    Parsed p;
    EXPECT_NE(p.feed_all(ok, 1), RequestParser::Status::error) << ok;
    EXPECT_EQ(p.events.seen.size(), 1u) << ok;
  }
}

// Every byte value, at the start, middle and end of a Host value long
// enough for the parser's 16-byte path and short enough for its byte path:
// accepted exactly when RFC 3986 lets a reg-name have it (':', '[' and ']'
// separate a port and bracket an IP literal: the test above).
TEST(Rfc9112, every_byte_value_in_a_host_is_judged_by_the_rfc) {
  const std::string allowed_specials = "-._~%!$&'()*+,;=";
  for (int b = 0; b < 256; ++b) {
    const char c = char(b);
    const bool allowed = std::isalnum(b) != 0 || allowed_specials.find(c) != std::string::npos;
    if (c == '\r' || c == '\n' || c == ' ' || c == '\t') continue;  // line ends and whitespace: other tests
    if (c == ':' || c == '[' || c == ']') continue;
    std::vector<std::string> hosts(6);
    hosts[0].push_back(c);
    hosts[1].append("a").push_back(c);
    hosts[1].append("b");
    hosts[2].append(20, 'h').push_back(c);
    hosts[3].append(17, 'h').push_back(c);
    hosts[3].append(5, 'h');
    hosts[4].append(15, 'h').push_back(c);  // the last byte of the first 16
    hosts[5].append(16, 'h').push_back(c);  // the first of the next 16
    hosts[5].append(15, 'h');
    for (const std::string& host : hosts) {
      std::string in = "GET / HTTP/1.1\r\nHost: ";
      in.append(host).append("\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n");
      for (std::size_t step : {std::size_t(1), std::size_t(7), in.size()}) {
        Parsed p;
        const RequestParser::Status st = p.feed_all(in, step);
        if (allowed) {
          EXPECT_NE(st, RequestParser::Status::error) << "byte " << b << " step " << step;
        } else {
          // Refused, by the Host check or by llhttp (control bytes).
          EXPECT_EQ(st, RequestParser::Status::error) << "byte " << b << " step " << step;
          EXPECT_EQ(p.events.seen.size(), 0u) << "byte " << b;
        }
      }
    }
  }
}

TEST(Rfc9112, a_major_version_other_than_1_is_505) {
  expect_refused_at_every_split("GET /a HTTP/2.0\r\nHost: a\r\n\r\n", ParseError::unsupported_version, 0);
  expect_refused_at_every_split("GET /a HTTP/0.9\r\nHost: a\r\n\r\n", ParseError::unsupported_version, 0);
  EXPECT_EQ(status_for(ParseError::unsupported_version), 505);
}

TEST(Rfc9112, the_absolute_form_is_routed_by_its_path) {
  const struct {
    const char* target;
    const char* routed;
  } cases[] = {
      {"http://example.com/plaintext", "/plaintext"},
      {"HTTPS://example.com:8443/users/7?x=1", "/users/7?x=1"},
      {"http://example.com", "/"},
      {"http://example.com?q=1", "/?q=1"},
  };
  for (const auto& c : cases) {
    const std::string in = std::string("GET ") + c.target + " HTTP/1.1\r\nHost: a\r\n\r\n";
    for (std::size_t step = 1; step <= in.size(); ++step) {
      Parsed p;
      ASSERT_NE(p.feed_all(in, step), RequestParser::Status::error) << c.target;
      ASSERT_EQ(p.events.seen.size(), 1u) << c.target;
      EXPECT_EQ(p.events.seen[0].target, c.routed) << c.target << " step " << step;
    }
  }
}

TEST(Rfc9112, a_target_in_no_known_form_is_400) {
  expect_refused_at_every_split("GET plaintext HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::malformed, 0);
  expect_refused_at_every_split("GET * HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::malformed, 0);
  Parsed p;
  EXPECT_NE(p.feed_all("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", 5), RequestParser::Status::error);
  EXPECT_EQ(p.events.seen.size(), 1u);
}

TEST(Rfc9112, http10_with_transfer_encoding_closes_after_its_response) {
  Parsed p;
  p.feed_all("POST /a HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 3);
  ASSERT_EQ(p.events.seen.size(), 1u);
  EXPECT_FALSE(p.events.seen[0].keep_alive);
}

// Every byte of the request line and the header section counts, the
// whitespace llhttp skips without a callback included: a section of exactly
// the limit passes, one byte more is 431.
TEST(HeaderLimit, counts_every_byte_exactly) {
  const std::string in = "GET     /a      HTTP/1.1\r\nHost:" + std::string(300, ' ') + "a\r\nX:     \r\n\r\n";
  RequestParser::Limits limits;
  limits.header_bytes_max = std::uint32_t(in.size());
  for (std::size_t step : {std::size_t(1), std::size_t(7), in.size()}) {
    Parsed p(limits);
    EXPECT_NE(p.feed_all(in, step), RequestParser::Status::error) << step;
    EXPECT_EQ(p.events.seen.size(), 1u);
  }
  limits.header_bytes_max = std::uint32_t(in.size() - 1);
  expect_refused_at_every_split(in, ParseError::header_too_large, 0, limits);
}

TEST(HeaderLimit, a_megabyte_of_spaces_is_431) {
  RequestParser::Limits limits;
  limits.header_bytes_max = 1024;
  for (const std::string& in : {"GET" + std::string(1 << 20, ' ') + "/a HTTP/1.1\r\nHost: a\r\n\r\n",
                                "GET /a HTTP/1.1\r\nHost: a\r\nX:" + std::string(1 << 20, ' ') + "b\r\n\r\n"}) {
    for (std::size_t step : {std::size_t(4096), in.size()}) {
      Parsed p(limits);
      EXPECT_EQ(p.feed_all(in, step), RequestParser::Status::error);
      EXPECT_EQ(p.parser.error(), ParseError::header_too_large);
    }
  }
}

TEST(HeaderLimit, chunk_extensions_and_trailers_are_bounded_too) {
  RequestParser::Limits limits;
  limits.header_bytes_max = 256;
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_refused_at_every_split(head + "5;x=" + std::string(300, 'e') + "\r\nhello\r\n0\r\n\r\n",
                                ParseError::framing_too_large, 0, limits);
  expect_refused_at_every_split(head + "0\r\nT: " + std::string(300, 't') + "\r\n\r\n", ParseError::framing_too_large,
                                0, limits);
}

}  // namespace
}  // namespace ringhttp::http
