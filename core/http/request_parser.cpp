#include "core/http/request_parser.hpp"

#include <cassert>
#include <cstring>

#include "core/text/ascii.hpp"

namespace ringhttp::http {
namespace {

// Bytes of framing a header line costs beyond its name and value (": " and
// CRLF), and a request line beyond method, target and version (two spaces
// and CRLF), so the header limit counts what the peer really sent, near
// enough: optional whitespace is not counted.
constexpr std::size_t header_line_overhead_bytes = 4;
// The request line's method and version are not reported byte by byte (the
// callbacks would cost more than they tell): llhttp accepts only known
// methods (at most 13 bytes, "MKACTIVITY" and kin) and "HTTP/x.y", so a fixed
// allowance covers them along with the two spaces and CRLF.
constexpr std::size_t request_line_overhead_bytes = 13 + 8 + 4;

RequestParser& self(llhttp_t* p) { return *static_cast<RequestParser*>(p->data); }

using text::ascii_lower;

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
  return first == 'e' || first == 't' || first == 'c' || first == 'a' || first == 'o';
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

int status_for(ParseError error) {
  switch (error) {
    case ParseError::none: return 200;
    case ParseError::malformed: return 400;
    case ParseError::ambiguous_length: return 400;
    case ParseError::target_too_long: return 414;
    case ParseError::header_too_large: return 431;
    case ParseError::body_too_large: return 413;
    case ParseError::unsupported_transfer_coding: return 501;
    case ParseError::count_: break;
  }
  assert(false && "unknown ParseError");
  return 500;
}

const char* metric_name(ParseError error) {
  switch (error) {
    case ParseError::none: return "none";
    case ParseError::malformed: return "malformed";
    case ParseError::ambiguous_length: return "ambiguous_length";
    case ParseError::target_too_long: return "target_too_long";
    case ParseError::header_too_large: return "header_too_large";
    case ParseError::body_too_large: return "body_too_large";
    case ParseError::unsupported_transfer_coding: return "unsupported_transfer_coding";
    case ParseError::count_: break;
  }
  return "unknown";
}

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
    out.on_message_complete = &RequestParser::on_message_complete;
    return out;
  }();
  return s;
}

RequestParser::RequestParser() { reset(Limits{}, nullptr); }

void RequestParser::reset(const Limits& limits, RequestEvents* events) {
  llhttp_init(&llhttp_, HTTP_REQUEST, &settings());
  llhttp_.data = this;
  events_ = events;
  limits_ = limits;
  error_ = ParseError::none;
  in_message_ = false;
  headers_done_ = false;
}

RequestParser::Result RequestParser::feed(const char* data, std::size_t len) {
  assert(error_ == ParseError::none);
  const llhttp_errno_t rc = llhttp_execute(&llhttp_, data, len);
  switch (rc) {
    case HPE_OK: return {Status::done, len};
    case HPE_PAUSED: {
      const std::size_t consumed = std::size_t(llhttp_get_error_pos(&llhttp_) - data);
      assert(consumed <= len);
      llhttp_resume(&llhttp_);
      return {Status::paused, consumed};
    }
    case HPE_PAUSED_UPGRADE:
      // Upgrade and CONNECT are not served; the caller answers the request it
      // already has and closes.
      return {Status::upgrade, std::size_t(llhttp_get_error_pos(&llhttp_) - data)};
    default: break;
  }
  if (error_ == ParseError::none) {
    if (rc == HPE_UNEXPECTED_CONTENT_LENGTH) {
      error_ = ParseError::ambiguous_length;
    } else if (rc == HPE_INVALID_TRANSFER_ENCODING && !transfer_encoding_chunked_only_) {
      error_ = ParseError::unsupported_transfer_coding;
    } else {
      error_ = ParseError::malformed;
    }
  }
  return {Status::error, std::size_t(llhttp_get_error_pos(&llhttp_) - data)};
}

int RequestParser::fail(ParseError error) {
  error_ = error;
  return -1;
}

int RequestParser::on_message_begin(llhttp_t* p) {
  RequestParser& s = self(p);
  s.in_message_ = true;
  s.headers_done_ = false;
  s.expect_continue_ = false;
  s.transfer_encoding_seen_ = false;
  s.transfer_encoding_chunked_only_ = true;
  s.inspected_ = Inspected::other;
  s.line_ = Line::none;
  s.name_len_ = 0;
  s.value_len_ = 0;
  s.value_overflow_ = false;
  s.target_len_ = 0;
  s.kept_kind_ = KeptHeader::count_;
  s.kept_len_ = 0;
  for (KeptSpan& k : s.kept_) k = KeptSpan{};
  s.body_len_ = 0;
  s.body_truncated_ = false;
  s.header_bytes_ = request_line_overhead_bytes;
  s.body_bytes_ = 0;
  return 0;
}

int RequestParser::on_url(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (!s.count_header_bytes(len)) return s.fail(ParseError::header_too_large);
  if (s.target_len_ + len > target_bytes_max) return s.fail(ParseError::target_too_long);
  std::memcpy(s.target_ + s.target_len_, at, len);
  s.target_len_ = std::uint16_t(s.target_len_ + len);
  return 0;
}

void RequestParser::classify_name() {
  const std::string_view name(name_, name_len_);
  if (!name_skipped_ && name == "expect") {
    inspected_ = Inspected::expect;
  } else if (!name_skipped_ && name == "transfer-encoding") {
    inspected_ = Inspected::transfer_encoding;
    transfer_encoding_seen_ = true;
  } else {
    inspected_ = Inspected::other;
    if (!name_skipped_) {
      for (const KeptName& k : kept_names) {
        if (name != k.name) continue;
        inspected_ = Inspected::kept;
        kept_kind_ = k.kind;
        kept_begin_ = kept_len_;
        kept_overflow_ = false;
        break;
      }
    }
  }
  value_len_ = 0;
  value_overflow_ = false;
}

void RequestParser::end_header_line() {
  const std::string_view value = trim(std::string_view(value_, value_len_));
  if (inspected_ == Inspected::expect) {
    expect_continue_ = !value_overflow_ && value == "100-continue";
  } else if (inspected_ == Inspected::transfer_encoding) {
    // Only "chunked" is supported; every other coding (or a list) is a 501.
    if (value_overflow_ || value != "chunked") transfer_encoding_chunked_only_ = false;
  } else if (inspected_ == Inspected::kept) {
    KeptSpan& span = kept_[std::size_t(kept_kind_)];
    const std::string_view raw(kept_bytes_ + kept_begin_, std::size_t(kept_len_ - kept_begin_));
    const std::string_view trimmed = trim(raw);
    if (span.present || kept_overflow_) {
      // Repeated, or too long to keep: unusable either way, and its bytes
      // are given back.
      span.usable = false;
      span.begin = span.len = 0;
      kept_len_ = kept_begin_;
    } else {
      span.begin = std::uint16_t(trimmed.data() - kept_bytes_);
      span.len = std::uint16_t(trimmed.size());
    }
    span.present = true;
  }
  inspected_ = Inspected::other;
}

int RequestParser::on_header_field(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (s.line_ != Line::name) {
    if (s.line_ == Line::value) s.end_header_line();
    s.line_ = Line::name;
    s.name_len_ = 0;
    // Only names starting like an inspected one are kept; every other
    // header costs this one comparison.
    const char first = len > 0 ? ascii_lower(at[0]) : 'e';
    s.name_skipped_ = !may_be_inspected(first);
    if (!s.count_header_bytes(header_line_overhead_bytes)) return s.fail(ParseError::header_too_large);
  }
  if (!s.count_header_bytes(len)) return s.fail(ParseError::header_too_large);
  if (s.name_skipped_) return 0;
  if (s.name_len_ + len > inspected_name_bytes_max) {
    s.name_skipped_ = true;  // longer than any inspected name
    return 0;
  }
  for (std::size_t i = 0; i < len; ++i) s.name_[s.name_len_++] = ascii_lower(at[i]);
  return 0;
}

int RequestParser::on_header_value(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (s.line_ != Line::value) {
    s.line_ = Line::value;
    s.classify_name();
  }
  if (!s.count_header_bytes(len)) return s.fail(ParseError::header_too_large);
  if (s.inspected_ == Inspected::other) return 0;
  if (s.inspected_ == Inspected::kept) {
    // Kept as sent (a token and an origin are case-sensitive).
    if (s.kept_overflow_) return 0;
    if (kept_value_bytes_max - s.kept_len_ < len) {
      s.kept_overflow_ = true;
      return 0;
    }
    std::memcpy(s.kept_bytes_ + s.kept_len_, at, len);
    s.kept_len_ = std::uint16_t(s.kept_len_ + len);
    return 0;
  }
  for (std::size_t i = 0; i < len; ++i) {
    if (s.value_len_ == inspected_value_bytes_max) {
      s.value_overflow_ = true;
      break;
    }
    s.value_[s.value_len_++] = ascii_lower(at[i]);
  }
  return 0;
}

int RequestParser::on_headers_complete(llhttp_t* p) {
  RequestParser& s = self(p);
  if (s.line_ == Line::value) {
    s.end_header_line();
  } else if (s.line_ == Line::name) {
    s.classify_name();  // a name with an empty value
    s.end_header_line();
  }
  s.line_ = Line::none;
  s.headers_done_ = true;
  const bool has_length = (p->flags & F_CONTENT_LENGTH) != 0;
  // Both framings at once is the classic request-smuggling vector: refuse.
  if (has_length && s.transfer_encoding_seen_) return s.fail(ParseError::ambiguous_length);
  if (s.transfer_encoding_seen_ && !s.transfer_encoding_chunked_only_) {
    return s.fail(ParseError::unsupported_transfer_coding);
  }
  if (has_length && p->content_length > s.limits_.body_bytes_max) return s.fail(ParseError::body_too_large);
  RequestHead& head = s.head_;
  head.llhttp_method = p->method;
  head.method = method_of(p->method);
  head.target = std::string_view(s.target_, s.target_len_);
  head.version_major = p->http_major;
  head.version_minor = p->http_minor;
  // llhttp_should_keep_alive() without its response-only half (a request
  // never needs the connection's end to delimit its body), inlined: HTTP/1.1
  // keeps alive unless told to close, HTTP/1.0 only when asked.
  head.keep_alive = p->http_major > 0 && p->http_minor > 0 ? (p->flags & F_CONNECTION_CLOSE) == 0
                                                           : (p->flags & F_CONNECTION_KEEP_ALIVE) != 0;
  head.has_body = (has_length && p->content_length > 0) || (p->flags & F_CHUNKED) != 0;
  head.expect_continue = s.expect_continue_ && head.has_body;
  for (std::size_t i = 0; i < kept_header_kinds; ++i) {
    const KeptSpan& span = s.kept_[i];
    head.kept[i] = HeaderValue{std::string_view(s.kept_bytes_ + span.begin, span.len), span.present, span.usable};
  }
  head.body = {};
  head.body_truncated = false;
  // Only an Expect: 100-continue needs an answer before the body.
  if (head.expect_continue && s.events_ != nullptr) s.events_->on_request_headers(head);
  return 0;
}

int RequestParser::on_body(llhttp_t* p, const char* at, std::size_t len) {
  RequestParser& s = self(p);
  if (!s.body_truncated_) {
    if (body_kept_bytes_max - s.body_len_ < len) {
      s.body_truncated_ = true;
      s.body_len_ = 0;
    } else {
      std::memcpy(s.body_ + s.body_len_, at, len);
      s.body_len_ = std::uint16_t(s.body_len_ + len);
    }
  }
  s.body_bytes_ += len;
  return s.body_bytes_ <= s.limits_.body_bytes_max ? 0 : s.fail(ParseError::body_too_large);
}

int RequestParser::on_message_complete(llhttp_t* p) {
  RequestParser& s = self(p);
  s.in_message_ = false;
  s.head_.body = std::string_view(s.body_, s.body_len_);
  s.head_.body_truncated = s.body_truncated_;
  const bool pause = s.events_ != nullptr && s.events_->on_request(s.head_);
  return pause ? HPE_PAUSED : 0;
}

std::string_view RequestHead::method_name() const { return llhttp_method_name(llhttp_method_t(llhttp_method)); }

}  // namespace ringhttp::http
