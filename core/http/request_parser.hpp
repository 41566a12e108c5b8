#pragma once
// HTTP/1.1 request parsing over llhttp: pure, bytes in and events out, no
// sockets.
//
// Strict where llhttp 8.1 (Debian's) is lenient. It is built in its strict
// mode (subprojects/llhttp: field names are tokens, a space included; no raw
// non-ASCII byte or tab in a target), and every framing byte (all but body
// data: request line, header section, chunk-size lines and trailers) passes
// a small scanner of our own as well (framing_scanner.hpp: every line ends
// in CRLF, chunk data in exactly CRLF, no folded lines, a header limit on
// every framing byte), since even strict llhttp 8.1 takes a bare LF in some
// places and not others. A request's events are delivered only once the
// scanner has seen every byte up to its end (llhttp is paused there), so no
// request is answered whose framing was not checked.
//
// Input may arrive split at any byte; the parser keeps what it must (the
// request target, bounded) and nothing else, so the caller may recycle each
// input buffer as soon as feed() returns, except the unconsumed tail of a
// paused feed. It also keeps the few header values routes and middleware
// read (Content-Type, Authorization, Origin, the CORS preflight's
// Access-Control-Request-*) and a small body, each bounded. What it keeps
// lives in Buffers that the caller lends (lend_buffers) and may take back
// between requests: the parser's own state is small.

#include <llhttp.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/http/framing_scanner.hpp"
#include "core/http/parse_error.hpp"

namespace ringhttp::http {

enum class Method : std::uint8_t { get, head, post, put, del, options, other };

// A header value the parser kept for the application. Absent, present, or
// unusable: sent twice (which one would count is ambiguous) or longer than
// the parser keeps.
struct HeaderValue {
  std::string_view value;  // trimmed; valid during the callback only
  bool present = false;
  bool usable = true;  // false: repeated or too long; `value` is then empty

  bool ok() const { return present && usable; }
};

// The headers the parser keeps, by name (case-insensitive).
enum class KeptHeader : std::uint8_t {
  content_type,
  authorization,
  origin,
  access_control_request_method,
  access_control_request_headers,
  count_,
};
inline constexpr std::size_t kept_header_kinds = std::size_t(KeptHeader::count_);

struct RequestHead {
  Method method = Method::other;
  std::uint8_t llhttp_method = 0;  // llhttp_method_t, for method_name()
  std::string_view target;         // path and query, valid during the callback only
  std::string_view path;           // the target up to its '?'
  std::string_view query;          // after the '?' (empty when there is none)
  std::uint8_t version_major = 1;
  std::uint8_t version_minor = 1;  // 0 or 1: a higher minor version is read as 1 (RFC 9110 section 2.5)
  bool keep_alive = true;        // after Connection: and the version's default
  bool expect_continue = false;  // Expect: 100-continue with a body to come, from an HTTP/1.1 client
  bool has_body = false;
  // A bit per KeptHeader sent in this request; kept[] holds those only
  // (the usual request sends none, and nothing is written for it).
  std::uint8_t kept_sent = 0;
  HeaderValue kept[kept_header_kinds];
  // The body when it is at most body_kept_bytes_max; followed by at least
  // body_padding_bytes readable bytes (what a SIMD JSON parser reads past
  // the end). Valid during the callback only.
  std::string_view body;
  bool body_truncated = false;  // longer than body_kept_bytes_max: not kept

  const HeaderValue& header(KeptHeader h) const {
    static constexpr HeaderValue absent{};
    return (kept_sent >> unsigned(h) & 1u) != 0 ? kept[std::size_t(h)] : absent;
  }
  std::string_view method_name() const;
};

class RequestEvents {
 public:
  // The header section of a request with Expect: 100-continue is complete
  // and its body is yet to come: the moment to answer 100 Continue.
  virtual void on_request_headers(const RequestHead& head) = 0;
  // A whole request, body included, has been read. Return true to pause the
  // parser right after it (feed() then reports Paused and how far it got).
  virtual bool on_request(const RequestHead& head) = 0;

 protected:
  ~RequestEvents() = default;
};

class RequestParser {
 public:
  struct Buffers;
  // The request target is kept in the parser (it may arrive split), so the
  // request line has its own limit (Limits::request_line_bytes_max), at
  // most this. Lent buffers are touched only as far as targets reach.
  static constexpr std::size_t request_line_bytes_limit = 32768;
  // What a request line holds besides its target: two spaces, "HTTP/1.1"
  // and CRLF (the method apart).
  static constexpr std::size_t request_line_frame_bytes = 12;
  static constexpr std::size_t target_bytes_max = request_line_bytes_limit - request_line_frame_bytes;
  // Short header values the parser inspects itself (Expect,
  // Transfer-Encoding); anything longer is not a value we accept.
  static constexpr std::size_t inspected_value_bytes_max = 32;
  // Longest inspected name: "access-control-request-headers" (30).
  static constexpr std::size_t inspected_name_bytes_max = 32;
  // Room for the kept header values together: a bearer token of up to 2 KiB
  // (core/auth's token_bytes_max) with an origin and a content type beside
  // it. A value that does not fit is kept as unusable.
  static constexpr std::size_t kept_value_bytes_max = 3072;
  // The largest body kept for the application (POST /echo's limit); a
  // longer one is still read (up to Limits::body_bytes_max) but not kept.
  static constexpr std::size_t body_kept_bytes_max = 4096;
  // simdjson reads up to SIMDJSON_PADDING (64) bytes past a document's end.
  static constexpr std::size_t body_padding_bytes = 64;

  struct Limits {
    // RFC 9112 section 3 recommends at least 8,000 octets; nginx's default
    // large buffer, 8 KiB, holds one line.
    std::uint32_t request_line_bytes_max = 8192;
    // The header section, request line included; nginx: 4 such buffers.
    std::uint32_t header_bytes_max = 32768;
    std::uint64_t body_bytes_max = 1 << 20;
  };

  // Upgrade is not served but ignored (RFC 9110 section 7.8): the
  // connection goes on as HTTP/1.1.
  enum class Status : std::uint8_t { done, paused, error };
  struct Result {
    Status status;
    std::size_t consumed;  // bytes of the input the parser has taken
  };

  RequestParser();
  void reset(const Limits& limits, RequestEvents* events);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Lends the parser the buffers a request in progress needs; feed() takes
  // them as given. take_buffers() hands them back, for another connection
  // to use: between requests (!in_message()) nothing in them is needed
  // again; in the middle of one the request is abandoned, and the parser
  // is fed no more (the caller is closing the connection).
  void lend_buffers(Buffers* buffers) {
    assert(buf_ == nullptr && buffers != nullptr);
    buf_ = buffers;
  }
  Buffers* take_buffers() {
    Buffers* b = buf_;
    buf_ = nullptr;
    return b;
  }
  bool has_buffers() const { return buf_ != nullptr; }

  // Requires buffers lent (lend_buffers).
  Result feed(const char* data, std::size_t len);

  ParseError error() const { return error_; }
  // True between the first byte of a request and its complete header section.
  bool in_header_section() const { return in_message_ && !headers_done_; }
  // True between the first byte of a request and its end.
  bool in_message() const { return in_message_; }
  // True while a request's body is being read (its header section is done).
  bool in_body() const { return in_message_ && headers_done_; }
  // Body bytes of the current (or last) request read so far.
  std::uint64_t body_bytes() const { return body_bytes_; }

 private:
  // Where the parser is inside a header line, to see a name end when its
  // value starts and a value end when the next name (or the blank line)
  // starts, without a callback per completion.
  enum class Inspected : std::uint8_t { other, expect, transfer_encoding, host, kept };
  // Where a Host value is (RFC 9110 section 7.2: uri-host [":" port]).
  enum class HostPart : std::uint8_t { before, name, literal, literal_end, port, after };
  // name: a name being copied, classified when its value starts; named:
  // a whole name already classified.
  enum class Line : std::uint8_t { none, name, named, value };

  static int on_message_begin(llhttp_t* p);
  static int on_url(llhttp_t* p, const char* at, std::size_t len);
  static int on_header_field(llhttp_t* p, const char* at, std::size_t len);
  static int on_header_value(llhttp_t* p, const char* at, std::size_t len);
  static int on_headers_complete(llhttp_t* p);
  static int on_body(llhttp_t* p, const char* at, std::size_t len);
  static int on_message_complete(llhttp_t* p);
  static const llhttp_settings_t& settings();

  // Why llhttp was paused by our own callbacks: a complete header section
  // to check (and answer 100 Continue to), or a complete request.
  enum class Pending : std::uint8_t { none, headers, message };

  static int on_chunk_header(llhttp_t* p);
  // For callbacks: records why, returns llhttp's "stop". feed() reports it
  // unless the framing scanner finds an earlier fault.
  int fail(ParseError error);
  // Scans the current feed's framing bytes up to `to`; false (error_ set)
  // at the first byte that breaks a rule. Deterministic per byte, so the
  // verdict does not depend on how the input was split.
  bool scan_framing(const char* to) {
    const ParseError e = framing_.scan_to(to, limits_.header_bytes_max);
    if (e == ParseError::none) return true;
    if (error_ == ParseError::none) error_ = e;
    return false;
  }
  void end_header_line();
  void classify_name();
  bool classify_whole_name(const char* at, std::size_t len);
  void start_host();
  void check_host_bytes(const char* at, std::size_t len);
  void host_byte(char c);
  void transfer_coding_byte(char c);
  void end_transfer_coding();
  Result scan_unknown_method(const char* data, const char* from, const char* end);
  ParseError check_head(const llhttp_t* p);
  void normalize_target();
  Result deliver(const char* data, const char* at);

  llhttp_t llhttp_{};
  RequestEvents* events_ = nullptr;
  Limits limits_{};
  ParseError error_ = ParseError::none;
  ParseError callback_error_ = ParseError::none;  // a callback's verdict, pending the scan before it
  bool in_message_ = false;
  bool headers_done_ = false;
  bool expect_continue_ = false;
  bool transfer_encoding_seen_ = false;
  // The codings of every Transfer-Encoding line, in order, as a list.
  // Bit-fields: an idle connection's parser stays as small as before.
  std::uint8_t chunked_count_ : 2 = 0;    // times "chunked" appears (saturates at 2)
  std::uint8_t other_coding_ : 1 = 0;     // a coding other than chunked appears
  std::uint8_t last_coding_chunked_ : 1 = 0;  // the last coding so far is chunked
  std::uint8_t coding_params_ : 1 = 0;    // in a coding's parameters (after ';'): skipped
  std::uint8_t coding_overflow_ : 1 = 0;  // the current coding is longer than any we know
  std::uint8_t unknown_method_ : 1 = 0;   // reading an unknown method to its end (llhttp gave up)
  std::uint8_t coding_len_ = 0;      // bytes of the current coding in buf_->value (lower case)
  Inspected inspected_ = Inspected::other;
  Line line_ = Line::none;
  bool name_skipped_ = false;  // the name cannot be an inspected one
  std::uint8_t name_len_ = 0;
  std::uint8_t value_len_ = 0;
  bool value_overflow_ = false;
  KeptHeader kept_kind_ = KeptHeader::count_;  // while inspected_ is kept
  std::uint16_t kept_begin_ = 0;               // where the current kept value starts in kept_bytes_
  std::uint16_t kept_len_ = 0;                 // bytes of kept_bytes_ in use
  bool kept_overflow_ = false;                 // the current kept value did not fit
  struct KeptSpan {
    std::uint16_t begin = 0;
    std::uint16_t len = 0;
    bool present = false;
    bool usable = true;
  };
  KeptSpan kept_[kept_header_kinds];
  std::uint8_t kept_seen_ = 0;  // a bit per KeptHeader whose span is set in this request
  std::uint16_t body_len_ = 0;
  bool body_truncated_ = false;
  std::uint16_t target_len_ = 0;
  // Where the target's query starts (its '?', or its length), when on_url
  // saw it: a short target in one span without a fragment.
  static constexpr std::uint16_t query_unknown = 0xffff;
  std::uint16_t query_at_ = query_unknown;
  char name_last_ = 0;          // the last byte of the current header name
  std::uint8_t host_count_ = 0;  // Host lines in this request (saturates at 2)
  bool host_invalid_ = false;
  HostPart host_part_ = HostPart::before;
  std::uint16_t unknown_method_len_ = 0;  // its bytes so far, at most the request line's limit
  Pending pending_ = Pending::none;  // in the padding before chunk_left_: an idle parser stays at 248 bytes
  std::uint64_t chunk_left_ = 0;  // data bytes of the current chunk not yet seen
  const char* feed_end_ = nullptr;  // the end of the current feed: bytes before it may be read
  // The framing scanner (see the top of this file); its state carries over
  // feeds.
  FramingScanner framing_;
  std::uint64_t body_bytes_ = 0;
  Buffers* buf_ = nullptr;  // lent while a request may be in progress
};

// What a request in progress keeps: its head, the request target, the kept
// header values and a small body. Between requests the parser needs none of
// it, so a server lends these from a pool to busy connections only (an idle
// keep-alive connection's parser is its fields alone: 248 bytes, asserted
// in request_parser.cpp).
// Default-initialized: nothing here is read before a request writes it, so
// a block's pages are touched only as far as requests reach.
struct RequestParser::Buffers {
  RequestHead head;  // built once the header section is complete
  char name[inspected_name_bytes_max];
  char value[inspected_value_bytes_max];
  char target[target_bytes_max];  // touched only as far as targets reach
  char kept_bytes[kept_value_bytes_max];
  char body[body_kept_bytes_max + body_padding_bytes];
};

}  // namespace ringhttp::http
