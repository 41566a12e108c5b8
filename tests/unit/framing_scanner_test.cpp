// The framing scanner alone: what it accepts and refuses, with the same
// verdict for the input fed whole, cut once at every position, and byte by
// byte. (request_parser_test.cpp checks the same rules through llhttp.)

#include "core/http/framing_scanner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace ringhttp::http {
namespace {

// What RequestParser tells the scanner at a position of the input besides
// "scan up to here": body data [at, end) (as llhttp reports it, skipped),
// chunk data (the same, then CRLF is due), or the end of a header section
// or of a request.
struct Mark {
  enum Kind { body, chunk, headers_end, request_end };
  Kind kind;
  std::size_t at;
  std::size_t end = 0;  // body and chunk only
};

struct Verdict {
  ParseError error = ParseError::none;
  // After the last byte, when nothing was refused.
  std::size_t run_bytes = 0;
  bool line_end_due = false;

  bool operator==(const Verdict&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Verdict& v) {
  return out << metric_name(v.error) << " run " << v.run_bytes << (v.line_end_due ? " line end due" : "");
}

// Feeds `input` in pieces ending at each of `cuts` (ascending) and at its
// end, each piece a buffer of its own, so that a read past a feed's end is
// ASan's to catch. Body data spanning a cut is reported in two parts, as
// llhttp does.
Verdict scan(const std::string& input, const std::vector<Mark>& marks, std::vector<std::size_t> cuts,
             std::size_t limit) {
  cuts.push_back(input.size());
  FramingScanner scanner;
  scanner.reset();
  std::size_t start = 0;
  for (const std::size_t stop : cuts) {
    const std::vector<char> piece(input.begin() + std::ptrdiff_t(start), input.begin() + std::ptrdiff_t(stop));
    const auto at = [&](std::size_t pos) { return piece.data() + (pos - start); };
    scanner.begin_feed(at(start), at(stop));
    for (const Mark& m : marks) {
      const std::size_t from = std::max(m.at, start);
      const bool data = m.kind == Mark::body || m.kind == Mark::chunk;
      const std::size_t to = data ? std::min(m.end, stop) : m.at;
      // Body data outside this piece, or an event not in it (an event at a
      // cut happens in the piece after it; at the end, in the last piece).
      if (data ? from >= to : (m.at < start || (m.at == stop && stop != input.size()) || m.at > stop)) continue;
      if (const ParseError e = scanner.scan_to(at(from), limit); e != ParseError::none) return {e};
      switch (m.kind) {
        case Mark::body: scanner.skip_body(at(to)); break;
        case Mark::chunk:
          scanner.skip_body(at(to));
          if (to == m.end) scanner.chunk_data_ended();
          break;
        case Mark::headers_end: scanner.header_section_ended(); break;
        case Mark::request_end: scanner.request_ended(); break;
      }
    }
    if (const ParseError e = scanner.scan_to(at(stop), limit); e != ParseError::none) return {e};
    start = stop;
  }
  return {ParseError::none, scanner.run_bytes(), scanner.line_end_due()};
}

// The verdict on `input` fed whole, which every single cut and a feed per
// byte must give too.
Verdict verdict_at_every_split(const std::string& input, const std::vector<Mark>& marks = {},
                               std::size_t limit = 1024) {
  const Verdict whole = scan(input, marks, {}, limit);
  std::vector<std::size_t> bytes;
  for (std::size_t cut = 1; cut < input.size(); ++cut) {
    EXPECT_EQ(scan(input, marks, {cut}, limit), whole) << "cut at " << cut << " of " << testing::PrintToString(input);
    bytes.push_back(cut);
  }
  EXPECT_EQ(scan(input, marks, bytes, limit), whole) << "byte by byte: " << testing::PrintToString(input);
  return whole;
}

const std::string request = "GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\n";
// Longer than the 64 bytes the scanner looks at in one step.
const std::string long_request =
    "GET /a HTTP/1.1\r\nHost: example.com\r\nUser-Agent: " + std::string(100, 'u') + "\r\nAccept: */*\r\n\r\n";

TEST(FramingScanner, accepts_crlf_lines_at_every_split) {
  EXPECT_EQ(verdict_at_every_split(request), (Verdict{ParseError::none, request.size(), false}));
  EXPECT_EQ(verdict_at_every_split(long_request).error, ParseError::none);
  // Spaces and colons inside a line are the field value's.
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r\nX: a : b\t c\r\n\r\n").error, ParseError::none);
  // One empty line before a request line (RFC 9112 section 2.2).
  EXPECT_EQ(verdict_at_every_split("\r\n" + request).error, ParseError::none);
}

TEST(FramingScanner, a_cr_at_the_end_asks_for_its_lf) {
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r"), (Verdict{ParseError::none, 15, true}));
}

TEST(FramingScanner, refuses_a_cr_without_its_lf) {
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\rHost: a\r\n\r\n").error, ParseError::bad_framing);
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r\nHost: a\r\r\n\r\n").error, ParseError::bad_framing);
  EXPECT_EQ(verdict_at_every_split(long_request + "GET / HTTP/1.1\r\nHost: a\r\n\rX").error, ParseError::bad_framing);
}

TEST(FramingScanner, refuses_a_bare_lf_wherever_it_is) {
  for (const std::string& bad : {
           std::string("\nGET / HTTP/1.1\r\n\r\n"),               // before the request line
           std::string("GET / HTTP/1.1\nHost: a\r\n\r\n"),        // after the request line
           std::string("GET / HTTP/1.1\r\nHost: a\n\r\n"),        // after a header line
           std::string("GET / HTTP/1.1\r\nHost: a\r\n\n"),        // as the blank line
           long_request + "GET /" + std::string(70, 'a') + "\n",  // past the first 64 bytes
       }) {
    EXPECT_EQ(verdict_at_every_split(bad).error, ParseError::bad_framing) << testing::PrintToString(bad);
  }
}

TEST(FramingScanner, refuses_a_line_starting_with_whitespace_or_a_colon) {
  // Obsolete line folding (RFC 9112 section 5.2), with a space or a tab.
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n").error, ParseError::bad_framing);
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r\nHost: a\r\n\tb\r\n\r\n").error, ParseError::bad_framing);
  // An empty field name, which llhttp 8.1 takes as more of the value before.
  EXPECT_EQ(verdict_at_every_split("GET / HTTP/1.1\r\nHost: a\r\n: x\r\n\r\n").error, ParseError::bad_framing);
}

TEST(FramingScanner, every_framing_byte_counts_against_the_limit) {
  const std::size_t limit = request.size();
  EXPECT_EQ(verdict_at_every_split(request, {}, limit).error, ParseError::none);
  EXPECT_EQ(verdict_at_every_split(request + "G", {}, limit).error, ParseError::header_too_large);
  // A rule broken before the limit is the earlier fault.
  EXPECT_EQ(verdict_at_every_split("G\nET / HTTP/1.1\r\n", {}, 4).error, ParseError::bad_framing);
  // The end of a request starts a new count.
  EXPECT_EQ(verdict_at_every_split(request + request, {{Mark::request_end, request.size()}}, limit).error,
            ParseError::none);
}

const std::string chunked_head = "POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";

// The chunked body "5\r\nhello" + `after` + "0\r\n\r\n" after chunked_head,
// with its marks: the header section's end and the chunk data.
Verdict chunked_verdict(const std::string& after, std::size_t limit = 1024) {
  const std::size_t data = chunked_head.size() + 3;
  return verdict_at_every_split(chunked_head + "5\r\nhello" + after + "0\r\n\r\n",
                                {{Mark::headers_end, chunked_head.size()}, {Mark::chunk, data, data + 5}}, limit);
}

TEST(FramingScanner, chunk_data_must_end_in_exactly_crlf) {
  EXPECT_EQ(chunked_verdict("\r\n").error, ParseError::none);
  EXPECT_EQ(chunked_verdict("XX").error, ParseError::bad_framing);
  EXPECT_EQ(chunked_verdict("\rX").error, ParseError::bad_framing);
  EXPECT_EQ(chunked_verdict("\n").error, ParseError::bad_framing);
}

TEST(FramingScanner, framing_after_the_header_section_has_its_own_limit_kind) {
  // "0;" and a chunk extension longer than the limit.
  const std::string body = "0;" + std::string(100, 'x') + "\r\n\r\n";
  const std::vector<Mark> marks = {{Mark::headers_end, chunked_head.size()}};
  EXPECT_EQ(verdict_at_every_split(chunked_head + body, marks, chunked_head.size()).error,
            ParseError::framing_too_large);
  EXPECT_EQ(verdict_at_every_split(chunked_head + body, marks, body.size()).error, ParseError::none);
}

TEST(FramingScanner, body_data_is_skipped_whatever_its_bytes) {
  // Every byte the rules refuse, inside a body; then the next request.
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 9\r\n\r\n";
  const std::string body = "\n \r:\r\r\n\t\n";
  const std::vector<Mark> marks = {{Mark::headers_end, head.size()},
                                   {Mark::body, head.size(), head.size() + body.size()},
                                   {Mark::request_end, head.size() + body.size()}};
  EXPECT_EQ(verdict_at_every_split(head + body + request, marks).error, ParseError::none);
  EXPECT_EQ(verdict_at_every_split(head + body + long_request, marks).error, ParseError::none);
}

TEST(FramingScanner, the_byte_after_body_data_is_read_alone) {
  // The body's last byte is a CR: the LF after it is still bare.
  const std::string head = "POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\n\r\n";
  const std::vector<Mark> marks = {{Mark::headers_end, head.size()},
                                   {Mark::body, head.size(), head.size() + 1},
                                   {Mark::request_end, head.size() + 1}};
  EXPECT_EQ(verdict_at_every_split(head + "\r\n" + request, marks).error, ParseError::bad_framing);
  EXPECT_EQ(verdict_at_every_split(head + "x" + request, marks).error, ParseError::none);
}

}  // namespace
}  // namespace ringhttp::http
