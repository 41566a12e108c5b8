#include "support/hostile_reader.hpp"

#include <charconv>

namespace socket_test::hostile {
namespace {

// Chunk-size lines and trailer lines are short; a longer one is malformed.
constexpr std::size_t chunk_line_bytes_max = 256;
// Consumed bytes are dropped from the front of the buffer past this.
constexpr std::size_t compact_bytes_min = 64 * 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_token_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && c != ':' && c != '(' && c != ')' && c != ',' && c != '/' && c != ';' && c != '<' &&
         c != '>' && c != '=' && c != '?' && c != '@' && c != '[' && c != ']' && c != '{' && c != '}' && c != '"' &&
         c != '\\';
}

[[noreturn]] void malformed(const std::string& why) { throw MalformedResponse("malformed response: " + why); }

// Every CR is followed by LF and every LF preceded by CR.
bool crlf_only(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) return false;
    if (text[i] == '\n' && (i == 0 || text[i - 1] != '\r')) return false;
  }
  return true;
}

}  // namespace

void ResponseReader::append(std::string_view bytes) { buffer_.append(bytes); }

std::optional<Response> ResponseReader::next(bool head) {
  if (!current_ && !parse_head(head)) return std::nullopt;
  switch (framing_) {
    case Framing::none: consumed_ = body_at_; break;
    case Framing::length:
      if (buffer_.size() - body_at_ < length_) return std::nullopt;
      current_->body.assign(buffer_, body_at_, length_);
      consumed_ = body_at_ + length_;
      break;
    case Framing::chunked:
      if (!take_chunked_body()) return std::nullopt;
      break;
  }
  Response out = std::move(*current_);
  current_.reset();
  compact();
  return out;
}

bool ResponseReader::parse_head(bool head) {
  const std::size_t end = buffer_.find("\r\n\r\n", consumed_);
  if (end == std::string::npos) {
    if (pending_bytes() > head_bytes_max) malformed("no end of the header section within 16 KiB");
    return false;
  }
  const std::string_view text(buffer_.data() + consumed_, end + 2 - consumed_);
  if (!crlf_only(text)) malformed("a bare CR or LF in the header section");
  Response r;
  std::size_t line_end = text.find("\r\n");
  const std::string_view status_line = text.substr(0, line_end);
  // "HTTP/1.1 200 OK": version, SP, three digits, SP, reason.
  if (status_line.size() < 13 || status_line.substr(0, 9) != "HTTP/1.1 " || status_line[12] != ' ') {
    malformed("status line \"" + std::string(status_line) + "\"");
  }
  r.version = "HTTP/1.1";
  const auto [p, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, r.status);
  if (ec != std::errc() || p != status_line.data() + 12 || r.status < 100) {
    malformed("status code in \"" + std::string(status_line) + "\"");
  }
  r.reason = std::string(status_line.substr(13));
  std::size_t at = line_end + 2;
  while (at < text.size()) {
    line_end = text.find("\r\n", at);
    const std::string_view line = text.substr(at, line_end - at);
    at = line_end + 2;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) malformed("header line \"" + std::string(line) + "\"");
    const std::string_view name = line.substr(0, colon);
    for (const char c : name) {
      if (!is_token_char(c)) malformed("header name \"" + std::string(name) + "\"");
    }
    r.headers.emplace_back(std::string(name), std::string(trim(line.substr(colon + 1))));
  }
  body_at_ = end + 4;
  chunk_cursor_ = body_at_;
  if (r.status < 200 || r.status == 204 || r.status == 304 || head) {
    framing_ = Framing::none;
  } else if (const auto te = r.header("Transfer-Encoding")) {
    if (r.header("Content-Length")) malformed("both Content-Length and Transfer-Encoding");
    if (!equals_ignoring_case(*te, "chunked")) malformed("Transfer-Encoding \"" + *te + "\"");
    framing_ = Framing::chunked;
  } else {
    const auto length = r.content_length();
    if (!length) malformed("a body framed neither by Content-Length nor chunked");
    if (r.header_count("Content-Length") != 1) malformed("more than one Content-Length");
    framing_ = Framing::length;
    length_ = std::size_t(*length);
  }
  current_ = std::move(r);
  return true;
}

bool ResponseReader::take_chunked_body() {
  while (true) {
    const std::size_t line_end = buffer_.find("\r\n", chunk_cursor_);
    if (line_end == std::string::npos) {
      if (buffer_.size() - chunk_cursor_ > chunk_line_bytes_max) malformed("chunk-size line too long");
      return false;
    }
    std::string_view line(buffer_.data() + chunk_cursor_, line_end - chunk_cursor_);
    line = line.substr(0, line.find(';'));
    std::size_t size = 0;
    const auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), size, 16);
    if (ec != std::errc() || p != line.data() + line.size()) malformed("chunk size \"" + std::string(line) + "\"");
    const std::size_t data_at = line_end + 2;
    if (size == 0) {
      // Trailer fields until an empty line.
      std::size_t at = data_at;
      while (true) {
        const std::size_t end = buffer_.find("\r\n", at);
        if (end == std::string::npos) return false;
        if (end == at) {
          consumed_ = end + 2;
          return true;
        }
        at = end + 2;
      }
    }
    if (buffer_.size() - data_at < size + 2) return false;
    if (buffer_.compare(data_at + size, 2, "\r\n") != 0) malformed("chunk data not followed by CRLF");
    current_->body.append(buffer_, data_at, size);
    chunk_cursor_ = data_at + size + 2;
  }
}

void ResponseReader::compact() {
  if (consumed_ == buffer_.size()) {
    buffer_.clear();
    consumed_ = 0;
  } else if (consumed_ >= compact_bytes_min) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
}

}  // namespace socket_test::hostile
