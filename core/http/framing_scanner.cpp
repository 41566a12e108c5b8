#include "core/http/framing_scanner.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/text/ascii.hpp"

namespace ringhttp::http {
namespace {

using text::is_space_or_tab;

// The first CR or LF in [p, end), or end: 16 bytes at a time where SSE2 is
// there (every x86-64), never reading outside the range.
const char* find_line_end(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i cr = _mm_set1_epi8('\r');
  const __m128i lf = _mm_set1_epi8('\n');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)));
    if (hits != 0) return p + __builtin_ctz(unsigned(hits));
    p += 16;
  }
#endif
  while (p < end && *p != '\r' && *p != '\n') ++p;
  return p;
}

// Whether no two adjacent bytes of [p, end) break a framing rule, taking
// every byte as framing: a CR followed by anything but LF, an LF not
// preceded by a CR, an LF followed by whitespace or a colon. `first_after_cr`
// and `first_after_lf` say what the byte before p was (the end of the previous feed);
// neither, and an LF first counts as bare. Body bytes can make it say no;
// then the scanner checks byte by byte. One pass, 16 bytes at a time.
bool no_adjacent_fault(const char* p, const char* end, bool first_after_cr, bool first_after_lf) {
#if defined(__SSE2__)
  std::uint64_t carry_cr = first_after_cr ? 1u : 0u;
  std::uint64_t carry_lf = first_after_lf ? 1u : 0u;
  // Up to 64 bytes at once (`len`, at least 16, loaded 16 at a time, the
  // last load overlapping the one before): bit i of each mask is byte i.
  // `valid` marks the bytes not judged before. Each CR's successor must be
  // an LF; the few bytes after an LF are looked at one by one.
  const auto chunk_ok = [&](const char* base, unsigned len, std::uint64_t valid) {
    std::uint64_t cr = 0;
    std::uint64_t lf = 0;
    const auto add = [&](unsigned at) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + at));
      cr |= std::uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r'))))) << at;
      lf |= std::uint64_t(unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))))) << at;
    };
    unsigned at = 0;
    for (; len - at >= 16; at += 16) add(at);
    if (at < len) add(len - 16);
    const std::uint64_t after_cr = (cr << 1) | carry_cr;
    if (((after_cr ^ lf) & valid) != 0) return false;  // a CR without its LF, or an LF without its CR
    for (std::uint64_t after_lf = ((lf << 1) | carry_lf) & valid; after_lf != 0; after_lf &= after_lf - 1) {
      const char c = base[__builtin_ctzll(after_lf)];
      if (is_space_or_tab(c) || c == ':') return false;
    }
    carry_cr = (cr >> (len - 1)) & 1u;
    carry_lf = (lf >> (len - 1)) & 1u;
    return true;
  };
  const char* const begin = p;
  for (; end - p >= 64; p += 64) {
    if (!chunk_ok(p, 64, ~std::uint64_t(0))) return false;
  }
  if (p == end) return true;
  const auto n = unsigned(end - p);
  if (end - begin >= 64) {
    // The last 64 bytes of the feed, the n new ones at their end: the byte
    // before the first of them is in the same chunk, so no carry is needed.
    return chunk_ok(end - 64, 64, ~std::uint64_t(0) << (64 - n));
  }
  if (n >= 16) return chunk_ok(p, n, (std::uint64_t(1) << n) - 1);
  alignas(16) char tail[16] = {};
  std::memcpy(tail, p, n);
  return chunk_ok(tail, 16, (std::uint64_t(1) << n) - 1);
#else
  (void)p;
  (void)end;
  (void)first_after_cr;
  (void)first_after_lf;
  return false;  // the byte-by-byte scan decides
#endif
}

}  // namespace

void FramingScanner::begin_feed(const char* data, const char* end) {
  from_ = data;
  feed_clean_ = no_adjacent_fault(data, end, (seam_ & seam_cr) != 0, (seam_ & seam_line) != 0);
}

inline bool FramingScanner::scan_byte(char c) {
  if ((seam_ & seam_crlf) != 0) {
    // Chunk data is followed by exactly CRLF (llhttp 8.1 skips two bytes).
    if (c != '\r') return false;
    seam_ = seam_cr;
    return true;
  }
  if ((seam_ & seam_cr) != 0) {
    if (c != '\n') return false;
    seam_ = seam_line;
    return true;
  }
  if (c == '\r') {
    seam_ = seam_cr;
    return true;
  }
  // A line that starts with whitespace is obsolete line folding (RFC 9112
  // section 5.2), which a server must refuse or unfold: refused. One that
  // starts with a colon has an empty field name, which llhttp 8.1 takes as
  // more of the previous line's value ("Host: a" then ": x" reads Host
  // "ax"): refused too.
  if ((seam_ & seam_line) != 0 && (is_space_or_tab(c) || c == ':')) return false;
  // Every line ends in CRLF: an LF the CR branch above did not take is a
  // bare LF, refused wherever it is (RFC 9112 section 2.2 lets a recipient
  // take one as a line end; taking it in some places and not in others is
  // what lets two parsers disagree on where a message ends).
  if (c == '\n') return false;
  seam_ = 0;
  return true;
}

ParseError FramingScanner::scan_to(const char* to, std::size_t limit) {
  const char* const from = from_;
  assert(from <= to);
  if (from == to) return ParseError::none;  // at a feed's end, usually
  // Every framing byte counts against the limit (spaces llhttp skips
  // without a callback included); the byte that crosses it is the fault.
  const std::size_t allowed = limit - std::min(run_bytes_, limit);
  const char* const stop = std::size_t(to - from) > allowed ? from + allowed : to;
  const char* p = from;
  if (feed_clean_) {
    // No two adjacent bytes of this feed break a rule, nor its first byte
    // after the previous feed's last (begin_feed() looked), so only what
    // body data leaves can: the first byte after it (begin_feed() took a
    // body's last CR as the pair of an LF after it) and the CRLF after
    // chunk data.
    while (p < stop && (seam_ & (seam_crlf | seam_body)) != 0) {
      if (!scan_byte(*p)) return ParseError::bad_framing;
      ++p;
    }
    if (p < stop) seam_ = seam_after(stop[-1]);
    p = stop;
  }
  while (p < stop) {
    // Between line ends nothing can break a rule: skip to the next CR or
    // LF unless the byte before asked for something.
    if (seam_ == 0) {
      p = find_line_end(p, stop);
      if (p == stop) break;
    }
    if (!scan_byte(*p)) return ParseError::bad_framing;
    ++p;
  }
  run_bytes_ += std::size_t(stop - from);
  if (stop != to) return past_headers_ ? ParseError::framing_too_large : ParseError::header_too_large;
  from_ = to;
  return ParseError::none;
}

}  // namespace ringhttp::http
