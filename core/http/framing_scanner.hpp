#pragma once
// The strict check of a request's framing bytes, beside llhttp.
//
// llhttp 8.1 (Debian's) is lenient about line ends even in its strict
// mode: it takes a bare LF in some places and not others, and skips the two
// bytes after chunk data whatever they are. Two parsers that disagree on
// where a line ends disagree on where a message ends, which is how requests
// are smuggled. So every framing byte (all but body data: the request line,
// the header section, chunk-size lines and trailers) also passes this
// scanner, which holds each to RFC 9112's rules:
// - every line ends in CRLF: a CR must be followed by LF, an LF preceded by
//   CR (section 2.2);
// - chunk data is followed by exactly CRLF (section 7.1);
// - no line starts with whitespace (obsolete folding, section 5.2) or a
//   colon (an empty field name);
// - every framing byte counts against the header limit.
//
// It is a pure state machine over bytes: RequestParser tells it where each
// feed starts, where body data lies (skipped, not scanned) and where a
// header section or a request ends, and asks it to scan up to a point.
// Its state carries over feeds and its verdict is decided byte by byte, so
// it does not depend on how the input was split.

#include <cstddef>
#include <cstdint>

#include "core/http/parse_error.hpp"

namespace ringhttp::http {

class FramingScanner {
 public:
  // Back to the start of a connection: a request line comes first.
  void reset() {
    seam_ = 0;
    past_headers_ = false;
    run_bytes_ = 0;
  }

  // A feed [data, end) starts; the scan stands at `data`. One pass looks at
  // the whole feed, body bytes included, 16 bytes at a time: when no two
  // adjacent bytes break a rule, scan_to() skips what it scans.
  void begin_feed(const char* data, const char* end);

  // Scans the framing bytes from where the scan stands up to `to` (in the
  // current feed) and stands there. The first fault is the verdict:
  // bad_framing, or the byte that crosses `limit` (framing bytes since the
  // request began or the last body byte): header_too_large in a header
  // section, framing_too_large after it.
  ParseError scan_to(const char* to, std::size_t limit);

  // Body data ends at `end` (in the current feed): skipped, not scanned.
  // Framing after it is a new run, and its first byte is read alone.
  void skip_body(const char* end) {
    from_ = end;
    past_headers_ = true;
    run_bytes_ = 0;
    seam_ = seam_body;
  }
  // The body data just skipped ended a chunk: exactly CRLF follows.
  void chunk_data_ended() { seam_ = seam_crlf; }
  // A header section ended: chunked framing or body data follows.
  void header_section_ended() {
    past_headers_ = true;
    run_bytes_ = 0;
  }
  // A request ended: the next one's framing starts.
  void request_ended() {
    past_headers_ = false;
    run_bytes_ = 0;
  }

  // Whether the byte before the next was a CR or ended chunk data, so that
  // the next byte must be an LF or a CR: llhttp refusing it is a framing
  // fault too.
  bool line_end_due() const { return (seam_ & (seam_cr | seam_crlf)) != 0; }
  // Framing bytes scanned since the request began or the last body byte.
  std::size_t run_bytes() const { return run_bytes_; }

 private:
  // What the framing byte before the next one asks of it (at most one bit):
  static constexpr std::uint8_t seam_cr = 1;    // it was a CR: LF must follow
  static constexpr std::uint8_t seam_crlf = 2;  // chunk data just ended: CR must follow (then LF)
  static constexpr std::uint8_t seam_line = 4;  // it was an LF: a line starts
  static constexpr std::uint8_t seam_body = 8;  // body data just ended: the next byte is read alone too

  // What a framing byte asks of the next: a CR its LF, an LF a line start.
  static std::uint8_t seam_after(char c) {
    return std::uint8_t((c == '\r' ? seam_cr : 0) | (c == '\n' ? seam_line : 0));
  }
  // One framing byte against what the byte before asked; false at a fault.
  bool scan_byte(char c);

  const char* from_ = nullptr;  // where the current feed's unscanned framing starts
  std::size_t run_bytes_ = 0;   // framing bytes since the request began or the last body byte
  std::uint8_t seam_ = 0;
  bool feed_clean_ = false;    // no two adjacent bytes of the current feed break a rule
  bool past_headers_ = false;  // past this request's header section
};

}  // namespace ringhttp::http
