// libFuzzer target for the framing scanner alone: any framing bytes, with
// body data and the ends of header sections and requests where the input
// puts them, must give the same verdict fed whole, in two pieces cut at a
// position the input chooses, and one byte at a time; and that verdict must
// be a plain byte-by-byte reading of the rules (the scanner skips what its
// 16-byte passes judge clean, so this checks those passes too). Each piece
// is a buffer of its own: a read past a feed's end is ASan's to catch.
//
// Built and run by tools/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "core/http/framing_scanner.hpp"

namespace {

using ringhttp::http::FramingScanner;
using ringhttp::http::ParseError;

// The input after its two leading bytes, decoded: these byte values mark
// what RequestParser would tell the scanner there (and are not input).
constexpr std::uint8_t mark_body = 0xff;         // then a length L: L bytes of body data
constexpr std::uint8_t mark_chunk = 0xfe;        // then a length L: L bytes of chunk data, CRLF due
constexpr std::uint8_t mark_headers_end = 0xfd;  // a header section ends here
constexpr std::uint8_t mark_request_end = 0xfc;  // a request ends here

struct Mark {
  std::uint8_t kind;
  std::size_t at;
  std::size_t end;  // body and chunk data: [at, end)
};

struct Script {
  std::vector<char> bytes;
  std::vector<Mark> marks;
};

Script decode(const std::uint8_t* data, std::size_t size) {
  Script s;
  for (std::size_t i = 0; i < size; ++i) {
    const std::uint8_t b = data[i];
    if (b == mark_headers_end || b == mark_request_end) {
      s.marks.push_back({b, s.bytes.size(), s.bytes.size()});
    } else if (b == mark_body || b == mark_chunk) {
      if (i + 1 >= size) break;
      ++i;  // the length byte
      const std::size_t len = std::min<std::size_t>(data[i], size - i - 1);
      if (len == 0) continue;  // llhttp reports no empty body data
      s.marks.push_back({b, s.bytes.size(), s.bytes.size() + len});
      s.bytes.insert(s.bytes.end(), data + i + 1, data + i + 1 + len);
      i += len;
    } else {
      s.bytes.push_back(char(b));
    }
  }
  return s;
}

struct Verdict {
  ParseError error = ParseError::none;
  std::size_t run_bytes = 0;  // after the last byte, when nothing was refused
  bool line_end_due = false;

  bool operator==(const Verdict&) const = default;
};

// Feeds the script in pieces ending at each of `cuts` (ascending) and at
// its end. Body data spanning a cut is reported in two parts, as llhttp
// does; an event at a cut happens in the piece after it (at the end, in
// the last piece).
Verdict scan(const Script& s, std::vector<std::size_t> cuts, std::size_t limit) {
  cuts.push_back(s.bytes.size());
  FramingScanner scanner;
  scanner.reset();
  std::size_t start = 0;
  std::size_t first = 0;  // the first mark not wholly before this piece (marks are in order)
  for (const std::size_t stop : cuts) {
    const std::vector<char> piece(s.bytes.begin() + std::ptrdiff_t(start), s.bytes.begin() + std::ptrdiff_t(stop));
    const auto at = [&](std::size_t pos) { return piece.data() + (pos - start); };
    scanner.begin_feed(at(start), at(stop));
    while (first < s.marks.size() && std::max(s.marks[first].at + 1, s.marks[first].end) <= start) ++first;
    for (std::size_t k = first; k < s.marks.size() && s.marks[k].at <= stop; ++k) {
      const Mark& m = s.marks[k];
      const bool data = m.kind == mark_body || m.kind == mark_chunk;
      const std::size_t from = std::max(m.at, start);
      const std::size_t to = data ? std::min(m.end, stop) : m.at;
      if (data ? from >= to : (m.at < start || (m.at == stop && stop != s.bytes.size()))) continue;
      if (const ParseError e = scanner.scan_to(at(from), limit); e != ParseError::none) return {e};
      if (data) scanner.skip_body(at(to));
      if (m.kind == mark_chunk && to == m.end) scanner.chunk_data_ended();
      if (m.kind == mark_headers_end) scanner.header_section_ended();
      if (m.kind == mark_request_end) scanner.request_ended();
    }
    if (const ParseError e = scanner.scan_to(at(stop), limit); e != ParseError::none) return {e};
    start = stop;
  }
  return {ParseError::none, scanner.run_bytes(), scanner.line_end_due()};
}

// What the byte before asks of the next, in the reference below.
enum class Due { nothing, lf, crlf, line_start, after_body };

// Whether framing byte `c` keeps the rules after what `due` asked.
bool allowed(Due due, char c) {
  switch (due) {
    case Due::crlf: return c == '\r';
    case Due::lf: return c == '\n';
    case Due::line_start: return c != '\n' && c != ' ' && c != '\t' && c != ':';
    case Due::nothing:
    case Due::after_body: return c != '\n';
  }
  return false;
}

// The rules read one byte at a time, as RFC 9112 states them: the oracle
// for the scanner's skipping.
Verdict reference(const Script& s, std::size_t limit) {
  Due due = Due::nothing;
  std::size_t run = 0;
  bool past_headers = false;
  std::size_t next_mark = 0;
  std::size_t i = 0;
  while (true) {
    // The marks at i, in order; body data is skipped, and what follows it
    // is a byte later.
    bool skipped = false;
    while (!skipped && next_mark < s.marks.size() && s.marks[next_mark].at == i) {
      const Mark& m = s.marks[next_mark++];
      run = 0;
      past_headers = m.kind != mark_request_end;
      if (m.kind == mark_body || m.kind == mark_chunk) {
        due = m.kind == mark_chunk ? Due::crlf : Due::after_body;
        i = m.end;
        skipped = true;
      }
    }
    if (skipped) continue;
    if (i == s.bytes.size()) break;
    if (run == limit) return {past_headers ? ParseError::framing_too_large : ParseError::header_too_large};
    ++run;
    const char c = s.bytes[i];
    if (!allowed(due, c)) return {ParseError::bad_framing};
    due = due == Due::crlf || c == '\r' ? Due::lf : c == '\n' ? Due::line_start : Due::nothing;
    ++i;
  }
  return {ParseError::none, run, due == Due::lf || due == Due::crlf};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first byte chooses the limit (small ones are crossed often), the
  // second where to cut.
  const std::size_t limit = data[0] < 0x80 ? std::size_t(data[0]) + 1 : 32768;
  const Script s = decode(data + 2, size - 2);
  const std::size_t cut = s.bytes.empty() ? 0 : data[1] % (s.bytes.size() + 1);

  const Verdict whole = scan(s, {}, limit);
  const Verdict two = scan(s, {cut}, limit);
  std::vector<std::size_t> bytes;
  for (std::size_t i = 1; i < s.bytes.size(); ++i) bytes.push_back(i);
  const Verdict single = scan(s, bytes, limit);
  if (!(whole == two) || !(whole == single)) std::abort();  // the split changed the verdict
  if (!(whole == reference(s, limit))) std::abort();        // the scanner's skipping missed a fault
  return 0;
}
