// The hostile driver's model of one connection: every byte it will send,
// the steps it sends them in (pieces, idle gaps, waits, half-close, reset),
// and what the server must answer to each request. A script is a pure
// function of (seed, index), so any connection of a failing run can be
// replayed alone (hostile_driver --seed S --connection K).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace socket_test::hostile {

// splitmix64: small, fast, and the same sequence on every platform (the
// standard distributions are not), so a printed seed replays exactly.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) { return next() % n; }
  // Uniform in [lo, hi].
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi) { return lo + below(hi - lo + 1); }
  bool chance(std::uint32_t percent) { return below(100) < percent; }

 private:
  std::uint64_t state_;
};

// What a request is, and so what the model expects for it.
enum class Kind : std::uint8_t {
  // Answered; the connection stays open.
  user,               // GET /users/<id>: 200 {"id":<id>,"name":"user-<id>"}
  plaintext,          // GET /plaintext: 200 Hello, World!
  head_plaintext,     // HEAD /plaintext: 200, Content-Length 13, no body
  echo,               // POST /echo, Content-Length or chunked, maybe Expect: 100-continue
  stream,             // GET /stream?bytes=N: N bytes of the i mod 251 pattern
  bad_user_id,        // GET /users/0: 400 from the route, connection kept
  not_found,          // GET /nope/<n>: 404
  wrong_media_type,   // POST /echo with text/plain: 415, connection kept
  http10_keep_alive,  // HTTP/1.0 with Connection: keep-alive: answered with keep-alive
  // Answered, then the server closes.
  connection_close,  // Connection: close
  http10,            // HTTP/1.0 without keep-alive
  // Refused with a defined status, then the server closes.
  header_too_large,        // 431: a header section over --header-bytes-max
  unsupported_coding,      // 501: a Transfer-Encoding coding before chunked
  garbage,                 // 400: not HTTP/1.x
  ambiguous_length,        // 400: Content-Length with Transfer-Encoding, or two lengths
  body_too_large,          // 413: Content-Length over --body-bytes-max (body not sent)
  body_too_large_chunked,  // 413: a chunked body that grows over --body-bytes-max
  bare_cr,                 // 400: a CR not followed by LF (RFC 9112 section 2.2)
  header_timeout,          // 408: a header section left unfinished past --header-timeout-ms
  trailing,                // sent after a request that ends the connection: never answered
};
const char* kind_name(Kind kind);

inline constexpr const char* any_parse_error = "*";
inline constexpr const char* timeout_refusal = "header";

// The response the model expects for one request.
struct Expected {
  enum class Body : std::uint8_t { exact, contains, stream, none };
  int status = 200;
  Body body_check = Body::exact;
  std::string body;                // exact text, or a substring for `contains`
  std::uint64_t stream_bytes = 0;  // for Body::stream
  bool closes = false;             // Connection: close on the response, then EOF
  bool keep_alive_header = false;  // Connection: keep-alive on the response (HTTP/1.0)
  // Counted by ringhttp_requests_total: every request the router saw.
  // Refusals by the parser and the header timeout are not.
  bool routed = true;
  // The counter a refusal increments: a parse error kind
  // (ringhttp_parse_errors_total{kind=...}), any_parse_error where the kind
  // is the server's choice, or timeout_refusal for the header timeout
  // (ringhttp_timeouts_total{kind="header"}).
  std::string refusal_metric;
};

struct Request {
  Kind kind = Kind::user;
  std::uint64_t begin = 0;     // its bytes are stream[begin, end)
  std::uint64_t end = 0;       //
  std::uint64_t head_end = 0;  // end of its header section: a 100 Continue cannot come before it is sent
  bool expect_continue = false;
  bool head = false;      // a HEAD request: the response has no body
  bool answered = true;   // false for bytes sent after the connection's last request
  bool terminal = false;  // the server closes after answering it
  Expected expected;
};

enum class Op : std::uint8_t {
  send,             // stream up to `end`, in send() calls of 1..piece_bytes_max bytes, gap_ms apart
  pause,            // send nothing for `ms` (reading goes on): an idle gap
  stop_reading,     // read nothing for the next `ms` (sending goes on)
  await_responses,  // wait for `count` final responses in all
  await_continue,   // wait for request `count`'s 100 Continue (or its final response)
  half_close,       // shutdown(SHUT_WR): the server must answer everything, then close
  reset,            // SO_LINGER {1, 0} and close: the server sees a reset
  finish,           // wait for every expected response (and EOF when expected), then close
};

struct Step {
  Op op = Op::finish;
  std::uint64_t end = 0;              // send
  std::uint32_t piece_bytes_max = 0;  // send
  std::uint32_t gap_ms = 0;           // send: between pieces
  std::uint32_t ms = 0;               // pause, stop_reading
  std::uint32_t count = 0;            // await_responses: responses; await_continue: request index
};

struct Script {
  std::uint64_t seed = 0;
  std::uint32_t index = 0;
  std::string stream;  // every byte the connection sends, in order
  std::vector<Request> requests;
  std::vector<Step> steps;
  std::optional<int> receive_buffer_bytes;  // SO_RCVBUF: a small one makes the server's sends come back short
  // The server must close once the last expected response is written: a
  // request that ends the connection, a half-close, or an idle connection.
  bool expects_eof = false;
  // The connection ends by sitting idle, every request answered, until the
  // server's idle timeout closes it.
  bool ends_idle = false;
};

struct ScriptOptions {
  // Requests pipelined in one large burst: from this many (where the
  // server's queue of 32 responses, 100 Continues included, is nearly full)
  // to above its size, so that a burst fills it and the server must pause
  // reading, at every request and interim response near the edge.
  std::uint32_t burst_requests_min = 24;
  std::uint32_t burst_requests_max = 40;
  // Refusals of a bare CR (a known llhttp leniency) are part of the mix.
  bool bare_cr = true;
  // The server's limits, as passed on its command line.
  std::uint32_t header_bytes_max = 2048;
  std::uint64_t body_bytes_max = 65536;
};

Script generate_script(std::uint64_t seed, std::uint32_t index, const ScriptOptions& options);

// Bytes as a C string literal's contents (\r, \n, \xNN), runs of one byte
// longer than 16 written as <'a' x 3000>, cut after about `max` characters.
std::string escaped(std::string_view bytes, std::size_t max = 4096);
// The steps, the requests and the bytes: enough to replay a failure by hand.
std::string describe(const Script& script);

}  // namespace socket_test::hostile
