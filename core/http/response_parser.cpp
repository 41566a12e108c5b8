#include "core/http/response_parser.hpp"

#include <cassert>
#include <cstring>

namespace ringhttp::http {
namespace {

ResponseParser& self(llhttp_t* p) { return *static_cast<ResponseParser*>(p->data); }

bool is_interim(std::uint16_t status) { return status >= 100 && status < 200 && status != 101; }

// llhttp's on_headers_complete return value that means "this message has no body".
constexpr int skip_body = 1;

}  // namespace

const llhttp_settings_t& ResponseParser::settings() {
  static const llhttp_settings_t s = [] {
    llhttp_settings_t out;
    llhttp_settings_init(&out);
    out.on_message_begin = &ResponseParser::on_message_begin;
    out.on_headers_complete = &ResponseParser::on_headers_complete;
    out.on_body = &ResponseParser::on_body;
    out.on_message_complete = &ResponseParser::on_message_complete;
    return out;
  }();
  return s;
}

ResponseParser::ResponseParser() { reset(Config{}); }

void ResponseParser::reset(const Config& config) {
  llhttp_init(&llhttp_, HTTP_RESPONSE, &settings());
  llhttp_.data = this;
  config_ = config;
  error_ = ResponseError::none;
  in_message_ = false;
}

ResponseParser::Status ResponseParser::feed(const char* data, std::size_t len) {
  assert(error_ == ResponseError::none);
  const llhttp_errno_t rc = llhttp_execute(&llhttp_, data, len);
  if (rc == HPE_OK) return Status::ok;
  error_ = rc == HPE_PAUSED_UPGRADE ? ResponseError::upgrade : ResponseError::malformed;
  return Status::error;
}

ResponseParser::Status ResponseParser::finish() {
  assert(error_ == ResponseError::none);
  // A close-delimited body ends here (llhttp then calls on_message_complete);
  // any other response still in progress was cut short.
  const bool close_delimited = in_message_ && llhttp_message_needs_eof(&llhttp_) != 0;
  const llhttp_errno_t rc = llhttp_finish(&llhttp_);
  if (rc == HPE_OK && (close_delimited || !in_message_)) return Status::ok;
  error_ = ResponseError::truncated;
  return Status::error;
}

int ResponseParser::on_message_begin(llhttp_t* p) {
  ResponseParser& s = self(p);
  s.in_message_ = true;
  s.body_matches_ = true;
  s.body_bytes_ = 0;
  return 0;
}

int ResponseParser::on_headers_complete(llhttp_t* p) {
  ResponseParser& s = self(p);
  // llhttp already knows 1xx, 204 and 304 have no body; HEAD it cannot know.
  return s.config_.head_request && !is_interim(p->status_code) ? skip_body : 0;
}

int ResponseParser::on_body(llhttp_t* p, const char* at, std::size_t len) {
  ResponseParser& s = self(p);
  if (s.config_.check_body && s.body_matches_) {
    const std::string_view expected = s.config_.expected_body;
    s.body_matches_ =
        s.body_bytes_ + len <= expected.size() && std::memcmp(expected.data() + s.body_bytes_, at, len) == 0;
  }
  s.body_bytes_ += len;
  return 0;
}

int ResponseParser::on_message_complete(llhttp_t* p) {
  ResponseParser& s = self(p);
  s.in_message_ = false;
  if (is_interim(p->status_code)) return 0;  // 100 Continue and friends: the real one follows
  ResponseHead head;
  head.status = p->status_code;
  head.keep_alive = llhttp_should_keep_alive(p) != 0;
  head.body_bytes = s.body_bytes_;
  head.body_matches = !s.config_.check_body || (s.body_matches_ && s.body_bytes_ == s.config_.expected_body.size());
  if (s.config_.events != nullptr) s.config_.events->on_response(head);
  return 0;
}

}  // namespace ringhttp::http
