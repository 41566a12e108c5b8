#pragma once
// HTTP/1.1 response parsing over llhttp in response mode: pure, bytes in and
// events out, no sockets. Framing by Content-Length, chunked, or the end of
// the connection (finish()); interim 1xx responses are skipped. The body is
// never kept: it is counted and, when an expected body is given, compared
// piece by piece as it arrives, so the caller may recycle each input buffer
// as soon as feed() returns.

#include <llhttp.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringhttp::http {

// Why a response stream could not be parsed. The connection is then useless.
enum class ResponseError : std::uint8_t {
  none = 0,
  malformed,  // not an HTTP/1.x response, or bad framing
  truncated,  // the peer closed in the middle of a response
  upgrade,    // 101 Switching Protocols: not something a load generator speaks
};

struct ResponseHead {
  std::uint16_t status = 0;
  bool keep_alive = true;    // after Connection: and the version's default
  bool body_matches = true;  // equal to the expected body (true when none is expected)
  std::uint64_t body_bytes = 0;
};

class ResponseEvents {
 public:
  // A whole final (non-1xx) response has been read.
  virtual void on_response(const ResponseHead& head) = 0;

 protected:
  ~ResponseEvents() = default;
};

class ResponseParser {
 public:
  struct Config {
    ResponseEvents* events = nullptr;
    // Compared with every response's body when `check_body`; must outlive the parser's use.
    std::string_view expected_body;
    bool check_body = false;
    // Responses to HEAD carry no body whatever their Content-Length says.
    bool head_request = false;
  };

  enum class Status : std::uint8_t { ok, error };

  ResponseParser();
  ResponseParser(const ResponseParser&) = delete;
  ResponseParser& operator=(const ResponseParser&) = delete;

  // Starts a new connection's response stream.
  void reset(const Config& config);
  // The body the next response must have, from its start on (requests that
  // vary expect bodies that vary); must outlive the parser's use.
  void expect_body(std::string_view body) { config_.expected_body = body; }
  Status feed(const char* data, std::size_t len);
  // The peer closed: completes a close-delimited response; a response cut
  // short is an error (truncated). Call reset() before feeding again.
  Status finish();

  ResponseError error() const { return error_; }
  // True between the first byte of a response and its end.
  bool in_message() const { return in_message_; }

 private:
  static int on_message_begin(llhttp_t* p);
  static int on_headers_complete(llhttp_t* p);
  static int on_body(llhttp_t* p, const char* at, std::size_t len);
  static int on_message_complete(llhttp_t* p);
  static const llhttp_settings_t& settings();

  llhttp_t llhttp_{};
  Config config_{};
  ResponseError error_ = ResponseError::none;
  bool in_message_ = false;
  bool body_matches_ = true;
  std::uint64_t body_bytes_ = 0;
};

}  // namespace ringhttp::http
