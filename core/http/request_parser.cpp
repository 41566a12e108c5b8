#include "core/http/request_parser.hpp"

#include <array>
#include <cassert>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/text/ascii.hpp"

namespace ringhttp::http {
namespace {

RequestParser& self(llhttp_t* p) { return *static_cast<RequestParser*>(p->data); }

using text::ascii_lower;
using text::is_space_or_tab;
using text::is_tchar;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

struct KeptName {
  std::string_view name;  // lower case
  KeptHeader kind;
};
constexpr KeptName kept_names[] = {
    {"content-type", KeptHeader::content_type},
    {"authorization", KeptHeader::authorization},
    {"origin", KeptHeader::origin},
    {"access-control-request-method", KeptHeader::access_control_request_method},
    {"access-control-request-headers", KeptHeader::access_control_request_headers},
};

// Whether a header name starting with `first` (lower case) may be one the
// parser inspects: Expect, Transfer-Encoding or a kept one.
constexpr bool may_be_inspected(char first) {
  return first == 'e' || first == 't' || first == 'c' || first == 'a' || first == 'o' || first == 'h';
}

// RFC 9110 section 7.2: Host is uri-host [":" port], where uri-host is a
// reg-name (unreserved, pct-encoded, sub-delims), an IPv4 address or an IP
// literal in brackets, and port is digits. These are the bytes of a
// reg-name or an IPv4 address; an IP literal also has ':' (host_byte walks
// the parts). Anything else (a space inside, '/', '@', a control byte) is
// an invalid Host value.
constexpr bool is_host_byte(char c) { return text::is_reg_name_byte(c) || c == '%'; }

// Where the query of a target starts (its '?'), or its size; `fragment`
// is set when it has a '#'. Bytes up to `capacity` may be loaded (the
// parser's own buffer): 16 at a time where SSE2 is there, past the target
// masked off.
std::size_t split_target(const char* t, std::size_t len, std::size_t capacity, bool& fragment) {
  assert(len <= capacity);
  std::size_t query = len;
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i < len && capacity - i >= 16; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(t + i));
    const unsigned valid = len - i >= 16 ? 0xffffu : (1u << (len - i)) - 1;
    const unsigned hash = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('#')))) & valid;
    const unsigned mark = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('?')))) & valid;
    if (hash != 0) fragment = true;
    if (mark != 0 && query == len) query = i + std::size_t(__builtin_ctz(mark));
  }
#endif
  for (; i < len; ++i) {
    if (t[i] == '#') fragment = true;
    if (t[i] == '?' && query == len) query = i;
  }
  return query;
}

// Whether [p, p + len), at most 16 bytes with 16 readable, is a whole
// Host value of the usual shape: letters, digits, '.' and '-', then
// optionally ':' and digits. `port` says whether the ':' is there. One
// load, three masks; anything else is left to the byte-by-byte walk.
bool usual_host(const char* p, std::size_t len, const char* readable_end, bool& port) {
#if defined(__SSE2__)
  if (len == 0 || len > 16 || readable_end - p < 16) return false;
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const auto in = [](__m128i x, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(char(lo - 1))), _mm_cmplt_epi8(x, _mm_set1_epi8(char(hi + 1))));
  };
  const unsigned valid = (1u << len) - 1;  // len <= 16: no overflow in 32 bits
  const __m128i digit = in(v, '0', '9');
  // Letters of either case, lower-cased by bit 5 (which maps no other byte
  // to a lower-case letter).
  const __m128i letter = in(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z');
  const unsigned name = unsigned(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(digit, in(v, '-', '.')), letter)));
  const unsigned colon = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')))) & valid;
  if (((name | colon) & valid) != valid) return false;
  port = colon != 0;
  if (!port) return true;
  const unsigned first = unsigned(__builtin_ctz(colon));
  const unsigned after = valid & ~((2u << first) - 1);  // the bytes after the first ':'
  return first > 0 && (after & ~unsigned(_mm_movemask_epi8(digit))) == 0;
#else
  (void)p;
  (void)len;
  (void)readable_end;
  (void)port;
  return false;
#endif
}

constexpr std::array<bool, 256> host_bytes = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) table[std::size_t(c)] = is_host_byte(char(c));
  return table;
}();


// "http://" or "https://", case-insensitively: the absolute form of a
// request target (RFC 9112 section 3.2.2), which a server must accept.
std::size_t absolute_form_prefix(std::string_view target) {
  for (const std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (target.size() < scheme.size()) continue;
    bool match = true;
    for (std::size_t i = 0; i < scheme.size() && match; ++i) match = ascii_lower(target[i]) == scheme[i];
    if (match) return scheme.size();
  }
  return 0;
}

Method method_of(std::uint8_t m) {
  switch (m) {
    case HTTP_GET: return Method::get;
    case HTTP_HEAD: return Method::head;
    case HTTP_POST: return Method::post;
    case HTTP_PUT: return Method::put;
    case HTTP_DELETE: return Method::del;
    case HTTP_OPTIONS: return Method::options;
    default: return Method::other;
  }
}

}  // namespace

const llhttp_settings_t& RequestParser::settings() {
  static const llhttp_settings_t s = [] {
    llhttp_settings_t out;
    llhttp_settings_init(&out);
    out.on_message_begin = &RequestParser::on_message_begin;
    out.on_url = &RequestParser::on_url;
    out.on_header_field = &RequestParser::on_header_field;
    out.on_header_value = &RequestParser::on_header_value;
    out.on_headers_complete = &RequestParser::on_headers_complete;
    out.on_body = &RequestParser::on_body;
    out.on_chunk_header = &RequestParser::on_chunk_header;
    out.on_message_complete = &RequestParser::on_message_complete;
    return out;
  }();
  return s;
}

RequestParser::RequestParser() { reset(Limits{}, nullptr); }

void RequestParser::reset(const Limits& limits, RequestEvents* events) {
  llhttp_init(&llhttp_, HTTP_REQUEST, &settings());
  llhttp_.data = this;
  // Any HTTP/d.d version is parsed; check_head answers a major version
  // other than 1 with 505 and reads 1.2 and up as 1.1.
  llhttp_.lenient_flags |= LENIENT_VERSION;
  // The target buffer holds the longest request line the limit allows.
  assert(limits.request_line_bytes_max <= request_line_bytes_limit);
  events_ = events;
  limits_ = limits;
  error_ = ParseError::none;
  callback_error_ = ParseError::none;
  in_message_ = false;
  headers_done_ = false;
  pending_ = Pending::none;
  framing_.reset();
  unknown_method_ = false;
  unknown_method_len_ = 0;
}

RequestParser::Result RequestParser::feed(const char* data, std::size_t len) {
  assert(error_ == ParseError::none);
  assert(buf_ != nullptr && "a parser is fed only with buffers lent");
  const char* const end = data + len;
  if (unknown_method_) return scan_unknown_method(data, data, end);
  const char* pos = data;
  feed_end_ = end;
  framing_.begin_feed(data, end);
  while (true) {
    const llhttp_errno_t rc = llhttp_execute(&llhttp_, pos, std::size_t(end - pos));
    if (rc == HPE_OK) {
      if (!scan_framing(end)) return {Status::error, std::size_t(end - data)};
      return {Status::done, len};
    }
    const char* const at = llhttp_get_error_pos(&llhttp_);
    assert(at >= pos && at <= end);
    if (rc == HPE_PAUSED) {
      // Paused by our own callbacks at the end of a header section or a
      // request: check its framing, then tell the caller.
      const Result r = deliver(data, at);
      if (r.status != Status::done) return r;
      // Nothing left: llhttp goes on from its pause with the next feed.
      if (at == end) return r;
      pos = at;
      continue;
    }
    if (rc == HPE_PAUSED_UPGRADE) {
      // An Upgrade request, answered as any other (RFC 9110 section 7.8: a
      // server may ignore Upgrade); the connection goes on in HTTP/1.1.
      // (CONNECT never gets here: check_head refuses it.)
      llhttp_resume_after_upgrade(&llhttp_);
      pos = at;
      continue;
    }
    // llhttp (or one of our callbacks) refused a byte. A framing rule
    // broken before it is the earlier fault and is reported instead, so the
    // verdict is the same however the input was split.
    if (error_ == ParseError::none && scan_framing(at)) {
      // A framing fault llhttp found first is the scanner's kind too: the
      // byte after a CR or after chunk data (the scanner has read up to
      // it), or a bare LF refused by a byte-by-byte check of llhttp's
      // (those errors stop exactly at the byte; others may stop a byte
      // later, or at the feed's end, so only these look at it).
      const bool byte_check = rc == HPE_INVALID_HEADER_TOKEN || rc == HPE_INVALID_CHUNK_SIZE || rc == HPE_STRICT ||
                              rc == HPE_CR_EXPECTED || rc == HPE_LF_EXPECTED;
      const bool bare_lf = byte_check && at < end && *at == '\n';
      if (callback_error_ == ParseError::none && (framing_.line_end_due() || bare_lf)) {
        if (!bare_lf || scan_framing(at + 1)) error_ = ParseError::bad_framing;
      } else if (callback_error_ != ParseError::none) {
        error_ = callback_error_;
      } else if (rc == HPE_UNEXPECTED_CONTENT_LENGTH) {
        error_ = ParseError::ambiguous_length;
      } else if (rc == HPE_INVALID_TRANSFER_ENCODING) {
        error_ = ParseError::ambiguous_length;  // chunked is not the last coding
      } else if (rc == HPE_INVALID_METHOD) {
        // Each byte llhttp took was a known method's: a token so far (the
        // scanner counted them, after any empty lines before the request).
        // Read on to the space (in later feeds too) to tell 501 from 400.
        unknown_method_ = true;
        unknown_method_len_ = framing_.run_bytes() > 0 ? 1 : 0;
        in_message_ = true;
        return scan_unknown_method(data, at, end);
      } else {
        error_ = ParseError::malformed;
      }
    }
    return {Status::error, std::size_t(at - data)};
  }
}

// An unknown method (RFC 9110 section 9.1): a token followed by a space is
// 501, anything else (an empty method included) 400. One longer than the
// request line's limit is 400 as well.
RequestParser::Result RequestParser::scan_unknown_method(const char* data, const char* from, const char* end) {
  for (const char* p = from; p < end; ++p) {
    if (*p == ' ' && unknown_method_len_ > 0) {
      error_ = ParseError::unsupported_method;
      return {Status::error, std::size_t(p - data)};
    }
    if (!is_tchar(*p) || ++unknown_method_len_ > limits_.request_line_bytes_max) {
      error_ = ParseError::malformed;
      return {Status::error, std::size_t(p - data)};
    }
  }
  return {Status::done, std::size_t(end - data)};
}

// llhttp stopped right after a header section or a request (`at`): its
// framing is checked up to there before anyone acts on it.
RequestParser::Result RequestParser::deliver(const char* data, const char* at) {
  const Pending pending = pending_;
  pending_ = Pending::none;
  assert(pending != Pending::none);
  if (!scan_framing(at)) return {Status::error, std::size_t(at - data)};
  llhttp_resume(&llhttp_);
  if (pending == Pending::headers) {
    // What follows is chunked framing or body data, not the header section.
    framing_.header_section_ended();
    if (buf_->head.expect_continue && events_ != nullptr) events_->on_request_headers(buf_->head);
    return {Status::done, std::size_t(at - data)};
  }
  // The next request's framing starts here.
  framing_.request_ended();
  const bool pause = events_ != nullptr && events_->on_request(buf_->head);
  return {pause ? Status::paused : Status::done, std::size_t(at - data)};
}

int RequestParser::fail(ParseError error) {
  if (callback_error_ == ParseError::none) callback_error_ = error;
  return -1;
}

int RequestParser::on_message_begin(llhttp_t* p) {
  RequestParser& s = self(p);
  s.in_message_ = true;
  s.headers_done_ = false;
  s.expect_continue_ = false;
  s.transfer_encoding_seen_ = false;
  s.chunked_count_ = 0;
  s.other_coding_ = false;
  s.last_coding_chunked_ = false;
  s.inspected_ = Inspected::other;
  s.line_ = Line::none;
  s.name_len_ = 0;
  s.value_len_ = 0;
  s.value_overflow_ = false;
  s.target_len_ = 0;
  s.kept_kind_ = KeptHeader::count_;
  s.kept_len_ = 0;
  if (s.kept_seen_ != 0) {
    for (KeptSpan& k : s.kept_) k = KeptSpan{};
    s.kept_seen_ = 0;
  }
  s.body_len_ = 0;
  s.body_truncated_ = false;
  s.body_bytes_ = 0;
  s.name_last_ = 0;
  s.host_count_ = 0;
  s.host_invalid_ = false;
  s.chunk_left_ = 0;
  return 0;
}

int RequestParser::on_url(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  const std::size_t target_len = s.target_len_ + len;
  // The request line is its method, the target and request_line_frame_bytes.
  // The method's length is looked up only when a line could be too long
  // even with the shortest (three bytes).
  if (target_len + request_line_frame_bytes + 3 > s.limits_.request_line_bytes_max) {
    const std::size_t method_len = std::strlen(llhttp_method_name(llhttp_method_t(p->method)));
    if (target_len + request_line_frame_bytes + method_len > s.limits_.request_line_bytes_max) {
      return s.fail(ParseError::target_too_long);
    }
  }
  assert(target_len <= target_bytes_max);
  s.query_at_ = query_unknown;
#if defined(__SSE2__)
  if (s.target_len_ == 0 && len <= 16 && s.feed_end_ - at >= 16) {
    // A short target in one span: one load and store, and where its query
    // starts is read off the same load (split_target's work, done here).
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(s.buf_->target), v);
    const unsigned valid = (1u << len) - 1;  // len <= 16: no overflow in 32 bits
    const unsigned hash = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('#')))) & valid;
    const unsigned mark = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('?')))) & valid;
    // A fragment is refused: split_target finds it again.
    s.query_at_ = hash != 0 ? query_unknown : std::uint16_t(mark != 0 ? unsigned(__builtin_ctz(mark)) : len);
    s.target_len_ = std::uint16_t(len);
    return 0;
  }
#endif
  std::memcpy(s.buf_->target + s.target_len_, at, len);
  s.target_len_ = std::uint16_t(target_len);
  return 0;
}

// The name of the line just ended (lower case, in buf_->name unless
// skipped) says what its value is.
void RequestParser::classify_name() {
  inspected_ = Inspected::other;
  value_len_ = 0;
  value_overflow_ = false;
  if (name_skipped_) return;
  const std::string_view name(buf_->name, name_len_);
  // By length first: one comparison for most names.
  switch (name_len_) {
    case 4:
      if (name == "host") start_host();
      return;
    case 6:
      if (name == "expect") {
        inspected_ = Inspected::expect;
        return;
      }
      break;
    case 17:
      if (name == "transfer-encoding") {
        inspected_ = Inspected::transfer_encoding;
        transfer_encoding_seen_ = true;
        coding_len_ = 0;
        coding_params_ = false;
        coding_overflow_ = false;
        return;
      }
      return;
    case 12: case 13: case 29: case 30: break;
    default: return;
  }
  for (const KeptName& k : kept_names) {
    if (name != k.name) continue;
    inspected_ = Inspected::kept;
    kept_kind_ = k.kind;
    kept_begin_ = kept_len_;
    kept_overflow_ = false;
    return;
  }
}

void RequestParser::start_host() {
  inspected_ = Inspected::host;
  if (host_count_ < 2) ++host_count_;
  host_part_ = HostPart::before;
}

void RequestParser::end_header_line() {
  if (inspected_ == Inspected::host) {
    // Empty (RFC 9110 section 4.2.1: an http URI's host is never empty),
    // an IP literal not closed, or nothing at all: not a host.
    if (host_part_ == HostPart::before || host_part_ == HostPart::literal) host_invalid_ = true;
  } else if (inspected_ == Inspected::expect) {
    const std::string_view value = trim(std::string_view(buf_->value, value_len_));
    expect_continue_ = !value_overflow_ && value == "100-continue";
  } else if (inspected_ == Inspected::transfer_encoding) {
    end_transfer_coding();
  } else if (inspected_ == Inspected::kept) {
    KeptSpan& span = kept_[std::size_t(kept_kind_)];
    const std::string_view raw(buf_->kept_bytes + kept_begin_, std::size_t(kept_len_ - kept_begin_));
    const std::string_view trimmed = trim(raw);
    if (span.present || kept_overflow_) {
      // Repeated, or too long to keep: unusable either way, and its bytes
      // are given back.
      span.usable = false;
      span.begin = span.len = 0;
      kept_len_ = kept_begin_;
    } else {
      span.begin = std::uint16_t(trimmed.data() - buf_->kept_bytes);
      span.len = std::uint16_t(trimmed.size());
    }
    span.present = true;
    kept_seen_ = std::uint8_t(kept_seen_ | 1u << unsigned(kept_kind_));
  }
  inspected_ = Inspected::other;
}

// Transfer-Encoding is a list of codings, each with optional parameters,
// over one line or several (RFC 9110 section 5.3, RFC 9112 section 6.1):
// read one byte at a time, each coding in buf_->value, empty elements
// skipped.
void RequestParser::transfer_coding_byte(char c) {
  if (c == ',') {
    end_transfer_coding();
    return;
  }
  if (coding_params_) return;  // a parameter: no coding we take has one, so it makes the coding unknown
  if (c == ';') {
    coding_params_ = true;
    coding_overflow_ = true;
    return;
  }
  if (is_space_or_tab(c)) {
    // Whitespace around a coding is optional; inside one, it ends it, and
    // a byte after it makes the coding unknown.
    if (coding_len_ > 0) value_overflow_ = true;
    return;
  }
  if (value_overflow_ || coding_len_ == inspected_value_bytes_max || !is_tchar(c)) coding_overflow_ = true;
  if (coding_len_ < inspected_value_bytes_max) buf_->value[coding_len_++] = ascii_lower(c);
}

void RequestParser::end_transfer_coding() {
  const std::string_view coding(buf_->value, coding_len_);
  if (!coding.empty() || coding_params_) {
    const bool chunked = !coding_overflow_ && coding == "chunked";
    if (chunked && chunked_count_ < 2) ++chunked_count_;
    other_coding_ = other_coding_ || !chunked;
    last_coding_chunked_ = chunked;
  }
  coding_len_ = 0;
  coding_params_ = false;
  coding_overflow_ = false;
  value_overflow_ = false;
}

int RequestParser::on_header_field(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (s.line_ != Line::name) {
    if (s.line_ != Line::none) s.end_header_line();
    s.name_len_ = 0;
    if (len > 0) s.name_last_ = at[len - 1];
    // The usual case: the whole name in this span (llhttp ended it before
    // the feed's end, at its colon), classified where it lies.
    if (len > 0 && s.feed_end_ - at > std::ptrdiff_t(len) && s.classify_whole_name(at, len)) {
      s.line_ = Line::named;
      return 0;
    }
    s.line_ = Line::name;
    // Only names starting like an inspected one are kept; every other
    // header costs this one comparison.
    const char first = len > 0 ? ascii_lower(at[0]) : 'e';
    s.name_skipped_ = !may_be_inspected(first);
  }
  if (len > 0) s.name_last_ = at[len - 1];
  if (s.name_skipped_) return 0;
  if (s.name_len_ + len > inspected_name_bytes_max) {
    s.name_skipped_ = true;  // longer than any inspected name
    return 0;
  }
  // Lower case by setting bit 5: of the token bytes llhttp lets into a
  // name, only letters become letters and only '-' becomes '-' (the bytes
  // inspected names are made of), so the name equals an inspected one
  // exactly when the original does, case aside.
  char* const to = s.buf_->name + s.name_len_;
  if (len <= 8 && std::size_t(s.name_len_) + 8 <= inspected_name_bytes_max && s.feed_end_ - at >= 8) {
    // A short name (Host), 8 bytes at once: what follows it is copied too
    // and never read (name_len_ says where the name ends).
    std::uint64_t word;
    std::memcpy(&word, at, 8);
    word |= 0x2020202020202020u;
    std::memcpy(to, &word, 8);
  } else {
    for (std::size_t i = 0; i < len; ++i) to[i] = char(at[i] | 0x20);
  }
  s.name_len_ = std::uint8_t(s.name_len_ + len);
  return 0;
}

// A whole header name [at, at + len) in the feed: Host is told at once,
// other names not of an inspected length are skipped; true when it was
// classified (false: the caller copies it and classifies it at its end).
bool RequestParser::classify_whole_name(const char* at, std::size_t len) {
  switch (len) {
    case 4: {
      std::uint32_t word;
      std::memcpy(&word, at, 4);
      std::uint32_t host;
      std::memcpy(&host, "host", 4);
      // Bit 5 set: the same lower-casing as a copied name's (see below).
      if ((word | 0x20202020u) == host) {
        start_host();
      } else {
        inspected_ = Inspected::other;
      }
      return true;
    }
    case 6: case 12: case 13: case 17: case 29: case 30: return false;
    default: inspected_ = Inspected::other; return true;
  }
}

int RequestParser::on_header_value(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (s.line_ != Line::value) {
    // llhttp 8.1 takes "Host : x" with the space in the name; RFC 9112
    // section 5.1 says whitespace before the colon must be refused with 400.
    // (An empty name is the framing scanner's to refuse.)
    if (is_space_or_tab(s.name_last_)) return s.fail(ParseError::malformed);
    if (s.line_ == Line::name) s.classify_name();
    s.line_ = Line::value;
  }
  switch (s.inspected_) {
    case Inspected::other: return 0;
    case Inspected::host: s.check_host_bytes(at, len); return 0;
    case Inspected::transfer_encoding:
      for (std::size_t i = 0; i < len; ++i) s.transfer_coding_byte(at[i]);
      return 0;
    case Inspected::kept:
      // Kept as sent (a token and an origin are case-sensitive).
      if (s.kept_overflow_) return 0;
      if (kept_value_bytes_max - s.kept_len_ < len) {
        s.kept_overflow_ = true;
        return 0;
      }
      std::memcpy(s.buf_->kept_bytes + s.kept_len_, at, len);
      s.kept_len_ = std::uint16_t(s.kept_len_ + len);
      return 0;
    case Inspected::expect:
      for (std::size_t i = 0; i < len; ++i) {
        if (s.value_len_ == inspected_value_bytes_max) {
          s.value_overflow_ = true;
          break;
        }
        s.buf_->value[s.value_len_++] = ascii_lower(at[i]);
      }
      return 0;
  }
  return 0;
}

void RequestParser::check_host_bytes(const char* at, std::size_t len) {
  bool port = false;
  if (host_part_ == HostPart::before && usual_host(at, len, feed_end_, port)) {
    host_part_ = port ? HostPart::port : HostPart::name;
    return;
  }
  // Anything else (a longer name, whitespace around it, an IP literal, a
  // value split over feeds, a bad byte): the parts in turn.
  for (std::size_t i = 0; i < len; ++i) host_byte(at[i]);
}

// One byte of a Host value: the parts of uri-host [":" port] in turn,
// whitespace allowed around them.
void RequestParser::host_byte(char c) {
  const bool space = is_space_or_tab(c);
  switch (host_part_) {
    case HostPart::before:
      if (space) return;
      if (c == '[') {
        host_part_ = HostPart::literal;
        return;
      }
      host_part_ = HostPart::name;
      host_invalid_ = host_invalid_ || !host_bytes[std::uint8_t(c)];
      return;
    case HostPart::name:
      if (c == ':') {
        host_part_ = HostPart::port;
      } else if (space) {
        host_part_ = HostPart::after;
      } else {
        host_invalid_ = host_invalid_ || !host_bytes[std::uint8_t(c)];
      }
      return;
    case HostPart::literal:
      // An IPv6 address (or IPvFuture): hex digits, ':' and '.', or a
      // future form's unreserved and sub-delims bytes.
      if (c == ']') {
        host_part_ = HostPart::literal_end;
      } else {
        host_invalid_ = host_invalid_ || !(c == ':' || host_bytes[std::uint8_t(c)]);
      }
      return;
    case HostPart::literal_end:
      if (c == ':') {
        host_part_ = HostPart::port;
      } else {
        host_part_ = HostPart::after;
        host_invalid_ = host_invalid_ || !space;
      }
      return;
    case HostPart::port:
      if (space) {
        host_part_ = HostPart::after;
      } else {
        host_invalid_ = host_invalid_ || c < '0' || c > '9';
      }
      return;
    case HostPart::after:
      host_invalid_ = host_invalid_ || !space;
      return;
  }
}

// What RFC 9112 requires of a request llhttp 8.1 accepted: an HTTP/1 major
// version (section 2.3), one valid Host in HTTP/1.1 and up (section 3.2), a
// request target in origin, absolute or asterisk form (section 3.2), with
// no fragment (section 3.2.1) and, in absolute form, no userinfo (RFC 9110
// section 4.2.4). CONNECT is not served: this is no proxy.
ParseError RequestParser::check_head(const llhttp_t* p) {
  if (p->http_major != 1) return ParseError::unsupported_version;
  if (host_count_ > 1 || host_invalid_) return ParseError::bad_host;
  if (host_count_ == 0 && p->http_minor >= 1) return ParseError::bad_host;
  if (p->method == HTTP_CONNECT) return ParseError::unsupported_method;
  const std::string_view target(buf_->target, target_len_);
  if (target == "*") return p->method == HTTP_OPTIONS ? ParseError::none : ParseError::malformed;
  if (!target.empty() && target.front() == '/') return ParseError::none;
  const std::size_t authority = absolute_form_prefix(target);
  if (authority == 0) return ParseError::malformed;
  const std::string_view rest = target.substr(authority);
  if (rest.substr(0, rest.find_first_of("/?")).find('@') != std::string_view::npos) return ParseError::malformed;
  normalize_target();
  return ParseError::none;
}

// The absolute form is routed by its path and query: "http://h/p?q" becomes
// "/p?q", "http://h?q" becomes "/?q" and "http://h" becomes "/" (RFC 9112
// section 3.2.2: the authority replaces Host, which was still required).
void RequestParser::normalize_target() {
  const std::string_view target(buf_->target, target_len_);
  const std::size_t authority = absolute_form_prefix(target);
  std::size_t path = target.find_first_of("/?", authority);
  if (path == std::string_view::npos) path = target.size();
  std::size_t len = target.size() - path;
  const bool needs_slash = path == target.size() || target[path] == '?';
  std::memmove(buf_->target + (needs_slash ? 1 : 0), buf_->target + path, len);
  if (needs_slash) {
    buf_->target[0] = '/';
    ++len;
  }
  target_len_ = std::uint16_t(len);
  query_at_ = query_unknown;
}

int RequestParser::on_headers_complete(llhttp_t* p) {
  RequestParser& s = self(p);
  if (s.line_ == Line::value) {
    s.end_header_line();
  } else if (s.line_ == Line::name) {
    s.classify_name();  // a name with an empty value
    s.end_header_line();
  } else if (s.line_ == Line::named) {
    s.end_header_line();  // a name with an empty value
  }
  s.line_ = Line::none;
  s.headers_done_ = true;
  const bool has_length = (p->flags & F_CONTENT_LENGTH) != 0;
  const bool chunked = (p->flags & F_CHUNKED) != 0;
  // Both framings at once is the classic request-smuggling vector: refuse.
  if (has_length && s.transfer_encoding_seen_) return s.fail(ParseError::ambiguous_length);
  if (s.transfer_encoding_seen_) {
    // RFC 9112 section 6.3: unless chunked is the last coding, the body's
    // length cannot be known (400); chunked twice is refused as well
    // (section 7: a sender never applies it twice). Only chunked is
    // supported (501 for any other coding before it).
    if (!s.last_coding_chunked_ || s.chunked_count_ > 1) return s.fail(ParseError::ambiguous_length);
    if (s.other_coding_) return s.fail(ParseError::unsupported_transfer_coding);
  }
  if (const ParseError e = s.check_head(p); e != ParseError::none) return s.fail(e);
  if (has_length && p->content_length > s.limits_.body_bytes_max) return s.fail(ParseError::body_too_large);
  // A target has no fragment (RFC 9112 section 3.2: a client sends none).
  bool fragment = false;
  const std::size_t query =
      s.query_at_ != query_unknown ? s.query_at_ : split_target(s.buf_->target, s.target_len_, target_bytes_max, fragment);
  if (fragment) return s.fail(ParseError::malformed);
  RequestHead& head = s.buf_->head;
  head.llhttp_method = p->method;
  head.method = method_of(p->method);
  head.target = std::string_view(s.buf_->target, s.target_len_);
  head.path = head.target.substr(0, query);
  head.query = query < head.target.size() ? head.target.substr(query + 1) : std::string_view();
  head.version_major = p->http_major;
  head.version_minor = p->http_minor == 0 ? 0 : 1;
  // llhttp_should_keep_alive() without its response-only half (a request
  // never needs the connection's end to delimit its body), inlined: HTTP/1.1
  // keeps alive unless told to close, HTTP/1.0 only when asked. An HTTP/1.0
  // request with Transfer-Encoding closes after its response whatever it
  // asked (RFC 9112 section 6.1: its framing may have been misread on the
  // way).
  const bool http10 = p->http_minor == 0;
  head.keep_alive = !http10 ? (p->flags & F_CONNECTION_CLOSE) == 0
                            : (p->flags & F_CONNECTION_KEEP_ALIVE) != 0 && !s.transfer_encoding_seen_;
  head.has_body = (has_length && p->content_length > 0) || chunked;
  // An HTTP/1.0 client's expectation is ignored (RFC 9110 section 10.1.1):
  // it gets no 1xx (section 15.2).
  head.expect_continue = s.expect_continue_ && head.has_body && !http10;
  head.kept_sent = s.kept_seen_;
  if (s.kept_seen_ != 0) {
    for (std::size_t i = 0; i < kept_header_kinds; ++i) {
      const KeptSpan& span = s.kept_[i];
      head.kept[i] = HeaderValue{std::string_view(s.buf_->kept_bytes + span.begin, span.len), span.present, span.usable};
    }
  }
  head.body = {};
  head.body_truncated = false;
  // Pause where the header section ends when what follows is not plain
  // body data (chunked framing, whose lines the scanner must tell from the
  // header section) or when 100 Continue is due: feed() checks the framing
  // up to here first.
  if (!chunked && !head.expect_continue) return 0;
  s.pending_ = Pending::headers;
  return HPE_PAUSED;
}

int RequestParser::on_chunk_header(llhttp_t* p) {
  self(p).chunk_left_ = p->content_length;
  return 0;
}

int RequestParser::on_body(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  // The framing before this body data is checked now, and the data skipped.
  if (!s.scan_framing(at)) return -1;
  s.framing_.skip_body(at + len);
  if ((p->flags & F_CHUNKED) != 0) {
    // llhttp never reports more data than the chunk's size; were it to,
    // the framing could not be trusted.
    if (len > s.chunk_left_) return s.fail(ParseError::bad_framing);
    s.chunk_left_ -= len;
    if (s.chunk_left_ == 0) s.framing_.chunk_data_ended();
  }
  if (!s.body_truncated_) {
    if (body_kept_bytes_max - s.body_len_ < len) {
      s.body_truncated_ = true;
      s.body_len_ = 0;
    } else {
      std::memcpy(s.buf_->body + s.body_len_, at, len);
      s.body_len_ = std::uint16_t(s.body_len_ + len);
    }
  }
  s.body_bytes_ += len;
  return s.body_bytes_ <= s.limits_.body_bytes_max ? 0 : s.fail(ParseError::body_too_large);
}

int RequestParser::on_message_complete(llhttp_t* p) {
  RequestParser& s = self(p);
  s.in_message_ = false;
  s.buf_->head.body = std::string_view(s.buf_->body, s.body_len_);
  s.buf_->head.body_truncated = s.body_truncated_;
  // Delivered by feed() once the request's framing has been checked.
  s.pending_ = Pending::message;
  return HPE_PAUSED;
}

std::string_view RequestHead::method_name() const { return llhttp_method_name(llhttp_method_t(llhttp_method)); }

// An idle keep-alive connection carries a parser: grow it only knowingly
// (request_parser.hpp, Buffers).
static_assert(sizeof(RequestParser) <= 248, "the parser's own state, in every connection slot");

}  // namespace ringhttp::http
