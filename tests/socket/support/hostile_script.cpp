#include "support/hostile_script.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>

namespace socket_test::hostile {
namespace {

constexpr std::string_view host_line = "Host: localhost\r\n";

// Bursts per connection, and requests per burst when it is not one of the
// large ones (a large burst goes up to ScriptOptions::burst_requests_max).
constexpr std::uint64_t bursts_max = 6;
constexpr std::uint64_t small_burst_requests_max = 6;
constexpr std::uint32_t large_burst_percent = 15;
// The chance that any one request ends the connection (a refusal or a
// close): about one connection in four ends that way.
constexpr std::uint32_t terminal_percent = 3;
// Requests sent after the one that ends the connection, in the same send.
constexpr std::uint64_t trailing_requests_max = 3;
constexpr std::uint64_t stream_bytes_max = 256 * 1024;
// A few streams are larger than the server's socket send buffer can take
// (loopback's tcp_wmem grows to 4 MiB): with the client not reading, the
// server's sends come back short and it must stop reading that client.
constexpr std::uint64_t large_stream_bytes_min = 6ull << 20;
constexpr std::uint64_t large_stream_bytes_max = 10ull << 20;
constexpr std::uint64_t idle_gap_ms_min = 5;
constexpr std::uint64_t idle_gap_ms_max = 50;
constexpr std::uint64_t stop_reading_ms_min = 20;
constexpr std::uint64_t stop_reading_ms_max = 300;
// All the gaps of one send step together stay under this, far below the
// server's header timeout (2 s in the tests): a request sent slowly must
// never be taken for a slow-loris one.
constexpr std::uint64_t send_gaps_ms_max = 300;
// A send carrying an oversized chunked body goes in pieces at least this
// large and without gaps: the server stops reading it a second after its
// 413 (its linger time), and what it has not read by then is reset.
constexpr std::uint32_t large_body_piece_bytes_min = 16 * 1024;
constexpr std::uint32_t whole = std::numeric_limits<std::uint32_t>::max();

std::uint64_t mix(std::uint64_t seed, std::uint64_t index) {
  Rng rng(seed ^ (index * 0xd1b54a32d192ed03ull));
  return rng.next();
}

template <typename T, std::size_t N>
T weighted(Rng& rng, const std::array<std::pair<T, std::uint32_t>, N>& choices) {
  std::uint64_t total = 0;
  for (const auto& [value, weight] : choices) total += weight;
  std::uint64_t pick = rng.below(total);
  for (const auto& [value, weight] : choices) {
    if (pick < weight) return value;
    pick -= weight;
  }
  return choices.back().first;
}

std::string hex(std::uint64_t n, bool upper) {
  char buf[32];
  std::snprintf(buf, sizeof buf, upper ? "%llX" : "%llx", static_cast<unsigned long long>(n));
  return buf;
}

class Builder {
 public:
  Builder(std::uint64_t seed, std::uint32_t index, const ScriptOptions& options)
      : rng_(mix(seed, index)), options_(options) {
    script_.seed = seed;
    script_.index = index;
  }

  Script build() {
    if (rng_.chance(25)) script_.receive_buffer_bytes = int(rng_.between(4096, 32768));
    const std::uint64_t bursts = rng_.between(1, bursts_max);
    bool ended = false;
    for (std::uint64_t b = 0; b < bursts && !ended; ++b) {
      ended = add_burst();
      if (ended) break;
      if (rng_.chance(25)) push({.op = Op::stop_reading, .ms = ms(stop_reading_ms_min, stop_reading_ms_max)});
      if (rng_.chance(30)) push({.op = Op::pause, .ms = ms(idle_gap_ms_min, idle_gap_ms_max)});
      if (rng_.chance(45)) push({.op = Op::await_responses, .count = answered_count()});
    }
    if (ended) {
      script_.expects_eof = true;
      push({.op = Op::finish});
    } else {
      add_ending();
    }
    return std::move(script_);
  }

 private:
  enum class Ending : std::uint8_t { close, half_close, reset, header_timeout, idle };

  std::uint32_t ms(std::uint64_t lo, std::uint64_t hi) { return std::uint32_t(rng_.between(lo, hi)); }
  void push(Step step) { script_.steps.push_back(step); }
  std::uint32_t answered_count() const {
    return std::uint32_t(
        std::count_if(script_.requests.begin(), script_.requests.end(), [](const Request& r) { return r.answered; }));
  }

  // A burst of pipelined requests, sent together (in pieces), except that
  // an Expect: 100-continue request may wait for its 100 before its body.
  // Returns true when a request in it ends the connection.
  bool add_burst() {
    const bool large = rng_.chance(large_burst_percent);
    const std::uint64_t count = large ? rng_.between(std::min(options_.burst_requests_min, options_.burst_requests_max),
                                                     options_.burst_requests_max)
                                      : rng_.between(1, small_burst_requests_max);
    const std::uint64_t burst_begin = script_.stream.size();
    std::vector<std::size_t> waits;  // requests whose body waits for the 100
    bool ended = false;
    for (std::uint64_t i = 0; i < count && !ended; ++i) {
      if (rng_.chance(terminal_percent)) {
        add_terminal();
        if (rng_.chance(30)) {
          const std::uint64_t trailing = rng_.between(1, trailing_requests_max);
          for (std::uint64_t t = 0; t < trailing; ++t) add_trailing();
        }
        ended = true;
      } else if (add_answered()) {
        waits.push_back(script_.requests.size() - 1);
      }
    }
    // A large burst mostly arrives whole, so that it fills the queue at once.
    const bool whole_pieces = large && rng_.chance(50);
    std::uint64_t cursor = burst_begin;
    for (const std::size_t w : waits) {
      const Request& r = script_.requests[w];
      add_send(cursor, r.head_end, whole_pieces);
      push({.op = Op::await_continue, .count = std::uint32_t(w)});
      cursor = r.head_end;
    }
    add_send(cursor, script_.stream.size(), whole_pieces);
    return ended;
  }

  void add_ending() {
    static constexpr std::array<std::pair<Ending, std::uint32_t>, 5> endings{{
        {Ending::close, 48},
        {Ending::half_close, 21},
        {Ending::reset, 21},
        {Ending::header_timeout, 6},
        {Ending::idle, 4},
    }};
    switch (weighted(rng_, endings)) {
      case Ending::close: break;
      case Ending::idle:
        script_.ends_idle = true;
        script_.expects_eof = true;
        break;
      case Ending::half_close:
        push({.op = Op::half_close});
        script_.expects_eof = true;
        break;
      case Ending::reset: return add_reset();
      case Ending::header_timeout: {
        // A header section begun and never finished: the server must answer
        // what came before, then 408, then close.
        const std::size_t r = start(Kind::header_timeout);
        append("GET /users/" + std::to_string(unique_id()) + " HTTP/1.1\r\n");
        append(host_line);
        append("X-Slow: ");
        refuse(r, 408, timeout_refusal);
        add_send(script_.requests[r].begin, script_.stream.size());
        script_.expects_eof = true;
        break;
      }
    }
    push({.op = Op::finish});
  }

  // Resets the connection at a random point: between two steps, or in the
  // middle of a send (so in the middle of a request, a body, or a burst).
  void add_reset() {
    const std::size_t at = std::size_t(rng_.below(script_.steps.size() + 1));
    std::uint64_t sent_before = 0;
    for (std::size_t i = 0; i < at; ++i) {
      if (script_.steps[i].op == Op::send) sent_before = script_.steps[i].end;
    }
    std::size_t keep = at;
    if (at < script_.steps.size() && script_.steps[at].op == Op::send && rng_.chance(50)) {
      Step& send = script_.steps[at];
      if (send.end - sent_before >= 2) {
        send.end = rng_.between(sent_before + 1, send.end - 1);
        keep = at + 1;
      }
    }
    script_.steps.resize(keep);
    push({.op = Op::reset});
  }

  void add_send(std::uint64_t from, std::uint64_t to, bool whole_pieces = false) {
    if (from >= to) return;
    if (whole_pieces) {
      push({.op = Op::send, .end = to, .piece_bytes_max = whole});
      return;
    }
    if (to - from >= 2 && rng_.chance(20)) {
      // An idle gap inside the bytes: a request (or a burst) stops halfway.
      const std::uint64_t mid = rng_.between(from + 1, to - 1);
      add_pieces(from, mid);
      push({.op = Op::pause, .ms = ms(idle_gap_ms_min, idle_gap_ms_max)});
      add_pieces(mid, to);
      return;
    }
    add_pieces(from, to);
  }

  void add_pieces(std::uint64_t from, std::uint64_t to) {
    static constexpr std::array<std::pair<int, std::uint32_t>, 4> shapes{{{0, 20}, {1, 25}, {2, 25}, {3, 30}}};
    std::uint32_t piece = whole;
    switch (weighted(rng_, shapes)) {
      case 0: piece = std::uint32_t(rng_.between(1, 3)); break;
      case 1: piece = std::uint32_t(rng_.between(4, 64)); break;
      case 2: piece = std::uint32_t(rng_.between(65, 1460)); break;
      default: break;
    }
    std::uint32_t gap = rng_.chance(25) ? std::uint32_t(rng_.between(1, 5)) : 0;
    const std::uint64_t average_piece = piece == whole ? to - from : (std::uint64_t(piece) + 1) / 2;
    if ((to - from) / average_piece * gap > send_gaps_ms_max) gap = 0;
    if (carries_large_body(from, to)) {
      piece = std::max(piece, large_body_piece_bytes_min);
      gap = 0;
    }
    push({.op = Op::send, .end = to, .piece_bytes_max = piece, .gap_ms = gap});
  }

  bool carries_large_body(std::uint64_t from, std::uint64_t to) const {
    return std::any_of(script_.requests.begin(), script_.requests.end(), [&](const Request& r) {
      return r.kind == Kind::body_too_large_chunked && r.begin < to && from < r.end;
    });
  }

  // ---- requests

  std::uint64_t unique_id() { return 1 + (std::uint64_t(script_.index) * 4096 + serial_) * 8 + rng_.below(8); }

  std::size_t start(Kind kind) {
    ++serial_;
    Request r;
    r.kind = kind;
    r.begin = script_.stream.size();
    script_.requests.push_back(std::move(r));
    return script_.requests.size() - 1;
  }
  void append(std::string_view bytes) { script_.stream.append(bytes); }
  void end_head(std::size_t r) { script_.requests[r].head_end = script_.stream.size(); }
  void end(std::size_t r) {
    Request& q = script_.requests[r];
    q.end = script_.stream.size();
    if (q.head_end == 0) q.head_end = q.end;
  }
  void refuse(std::size_t r, int status, std::string metric) {
    end(r);
    Request& q = script_.requests[r];
    q.terminal = true;
    q.expected = Expected{.status = status,
                          .body_check = Expected::Body::contains,
                          .closes = true,
                          .routed = false,
                          .refusal_metric = std::move(metric)};
  }

  std::string extra_headers() {
    static constexpr std::array<std::string_view, 6> pool{
        "User-Agent: hostile-driver/1\r\n",
        "Accept: */*\r\n",
        "accept-encoding: identity\r\n",
        "X-Empty:\r\n",
        "X-Tab:\tvalue\t\r\n",
        "X-Long: "
        "0123456789abcdef0123456789abcdef\r\n",
    };
    std::string out;
    const std::uint64_t n = rng_.below(3);
    for (std::uint64_t i = 0; i < n; ++i) out += pool[rng_.below(pool.size())];
    return out;
  }

  std::string user_body(std::uint64_t id) {
    return R"({"id":)" + std::to_string(id) + R"(,"name":"user-)" + std::to_string(id) + R"("})";
  }

  // A request that is answered and keeps the connection open. Returns true
  // when its body is to wait for its 100 Continue.
  bool add_answered() {
    static constexpr std::array<std::pair<Kind, std::uint32_t>, 9> kinds{{
        {Kind::user, 30},
        {Kind::plaintext, 8},
        {Kind::head_plaintext, 6},
        {Kind::echo, 30},
        {Kind::stream, 10},
        {Kind::bad_user_id, 4},
        {Kind::not_found, 4},
        {Kind::wrong_media_type, 3},
        {Kind::http10_keep_alive, 5},
    }};
    const Kind kind = weighted(rng_, kinds);
    if (kind == Kind::echo) return add_echo();
    const std::size_t r = start(kind);
    Expected e;
    switch (kind) {
      case Kind::user: {
        const std::uint64_t id = unique_id();
        append("GET /users/" + std::to_string(id) + " HTTP/1.1\r\n" + std::string(host_line) + extra_headers() +
               "\r\n");
        e.body = user_body(id);
        break;
      }
      case Kind::plaintext:
        append("GET /plaintext HTTP/1.1\r\n" + std::string(host_line) + extra_headers() + "\r\n");
        e.body = "Hello, World!";
        break;
      case Kind::head_plaintext:
        append("HEAD /plaintext HTTP/1.1\r\n" + std::string(host_line) + extra_headers() + "\r\n");
        e.body_check = Expected::Body::none;
        script_.requests[r].head = true;
        break;
      case Kind::stream: add_stream(e); break;
      case Kind::bad_user_id: add_bad_user_id(e); break;
      case Kind::not_found:
        append("GET /nope/" + std::to_string(serial_) + " HTTP/1.1\r\n" + std::string(host_line) + "\r\n");
        e.status = 404;
        e.body = "Not Found\n";
        break;
      case Kind::wrong_media_type:
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
               "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}");
        e.status = 415;
        e.body_check = Expected::Body::contains;
        e.body = "Content-Type must be application/json";
        break;
      case Kind::http10_keep_alive: {
        const std::uint64_t id = unique_id();
        append("GET /users/" + std::to_string(id) + " HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        e.body = user_body(id);
        e.keep_alive_header = true;
        break;
      }
      default: break;
    }
    end(r);
    script_.requests[r].expected = std::move(e);
    return false;
  }

  // GET /stream of a size drawn from four ranges, most of them small.
  void add_stream(Expected& e) {
    static constexpr std::array<std::pair<int, std::uint32_t>, 4> sizes{{{0, 50}, {1, 34}, {2, 13}, {3, 3}}};
    const int size = weighted(rng_, sizes);
    const std::uint64_t bytes = size == 0   ? rng_.between(0, 1000)
                                : size == 1 ? rng_.between(1001, 65536)
                                : size == 2 ? rng_.between(65537, stream_bytes_max)
                                            : rng_.between(large_stream_bytes_min, large_stream_bytes_max);
    append("GET /stream?bytes=" + std::to_string(bytes) + " HTTP/1.1\r\n" + std::string(host_line) + "\r\n");
    e.body_check = Expected::Body::stream;
    e.stream_bytes = bytes;
  }

  // A user id the route refuses (400), the connection kept.
  void add_bad_user_id(Expected& e) {
    static constexpr std::array<std::string_view, 4> paths{"/users/0", "/users/abc", "/users/007", "/users/-1"};
    append("GET " + std::string(paths[rng_.below(paths.size())]) + " HTTP/1.1\r\n" + std::string(host_line) +
           "\r\n");
    e.status = 400;
    e.body_check = Expected::Body::contains;
    e.body = "invalid path parameter";
  }

  bool add_echo() {
    const std::size_t r = start(Kind::echo);
    std::string name = "c" + std::to_string(script_.index) + "r" + std::to_string(serial_);
    const std::uint64_t suffix = rng_.below(9);
    for (std::uint64_t i = 0; i < suffix; ++i) name += char('a' + rng_.below(26));
    const std::int64_t n = std::int64_t(rng_.between(1, 1'000'000'000)) * (rng_.chance(50) ? 1 : -1);
    std::string body;
    switch (rng_.below(3)) {
      case 0: body = R"({"name":")" + name + R"(","n":)" + std::to_string(n) + "}"; break;
      case 1: body = R"({"n":)" + std::to_string(n) + R"(,"name":")" + name + R"("})"; break;
      default: body = R"( { "name" : ")" + name + R"(" , "n" : )" + std::to_string(n) + " }\n"; break;
    }
    const bool chunked = rng_.chance(50);
    const bool expect = rng_.chance(35);
    std::string head = "POST /echo HTTP/1.1\r\n" + std::string(host_line) + extra_headers();
    head += "Content-Type: application/json\r\n";
    if (expect) head += "Expect: 100-continue\r\n";
    head += chunked ? std::string("Transfer-Encoding: chunked\r\n")
                    : "Content-Length: " + std::to_string(body.size()) + "\r\n";
    append(head + "\r\n");
    end_head(r);
    append(chunked ? chunk(body) : body);
    end(r);
    Request& q = script_.requests[r];
    q.expect_continue = expect;
    q.expected.body = R"({"hello":")" + name + R"(","doubled":)" + std::to_string(2 * n) + "}";
    return expect && rng_.chance(50);
  }

  // `body` in chunks of random sizes, hex digits in either case, sometimes
  // with a leading zero, an extension, or a trailer field.
  std::string chunk(std::string_view body) {
    std::string out;
    std::size_t pos = 0;
    while (pos < body.size()) {
      const std::size_t left = body.size() - pos;
      const std::size_t n = rng_.chance(50) ? std::size_t(rng_.between(1, std::min<std::size_t>(left, 8)))
                                            : std::size_t(rng_.between(1, left));
      if (rng_.chance(10)) out += '0';
      out += hex(n, rng_.chance(50));
      if (rng_.chance(10)) out += ";ext=1";
      out += "\r\n";
      out.append(body.substr(pos, n));
      out += "\r\n";
      pos += n;
    }
    out += "0\r\n";
    if (rng_.chance(10)) out += "X-Trailer: t\r\n";
    out += "\r\n";
    return out;
  }

  void add_trailing() {
    const std::size_t r = start(Kind::trailing);
    append("GET /users/" + std::to_string(unique_id()) + " HTTP/1.1\r\n" + std::string(host_line) + "\r\n");
    end(r);
    script_.requests[r].answered = false;
  }

  // A request after which the server closes: answered with Connection:
  // close, or refused with its status.
  void add_terminal() {
    static constexpr std::array<std::pair<Kind, std::uint32_t>, 9> kinds{{
        {Kind::connection_close, 25},
        {Kind::http10, 10},
        {Kind::header_too_large, 10},
        {Kind::unsupported_coding, 10},
        {Kind::garbage, 10},
        {Kind::ambiguous_length, 10},
        {Kind::body_too_large, 10},
        {Kind::body_too_large_chunked, 5},
        {Kind::bare_cr, 10},
    }};
    Kind kind = weighted(rng_, kinds);
    if (kind == Kind::bare_cr && !options_.bare_cr) kind = Kind::garbage;
    const std::size_t r = start(kind);
    const std::string id = std::to_string(unique_id());
    switch (kind) {
      case Kind::connection_close:
      case Kind::http10: return add_closing(kind, r, id);
      case Kind::header_too_large:
        append("GET /users/" + id + " HTTP/1.1\r\n" + std::string(host_line) + "X-Pad: ");
        append(std::string(rng_.between(options_.header_bytes_max, options_.header_bytes_max + 1024), 'p'));
        append("\r\n\r\n");
        return refuse(r, 431, "header_too_large");
      case Kind::unsupported_coding: {
        // A coding before chunked (chunked not last is 400: ambiguous_length).
        static constexpr std::array<std::string_view, 3> codings{"gzip, chunked", "deflate, chunked", "gzip,chunked"};
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
               "Content-Type: application/json\r\nTransfer-Encoding: " + std::string(codings[rng_.below(3)]) +
               "\r\n\r\n");
        return refuse(r, 501, "unsupported_transfer_coding");
      }
      case Kind::garbage: return add_garbage(r);
      case Kind::ambiguous_length:
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) + "Content-Type: application/json\r\n");
        append(rng_.chance(50) ? "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                               : "Content-Length: 5\r\nContent-Length: 6\r\n\r\n");
        return refuse(r, 400, "ambiguous_length");
      case Kind::body_too_large:
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
               "Content-Type: application/json\r\nContent-Length: " +
               std::to_string(options_.body_bytes_max + rng_.between(1, 100000)) + "\r\n\r\n");
        return refuse(r, 413, "body_too_large");
      case Kind::body_too_large_chunked: return add_chunked_body_too_large(r);
      case Kind::bare_cr: return add_bare_cr(r, id);
      default: break;
    }
  }

  // A request answered, then the connection closed: Connection: close, or
  // HTTP/1.0 without keep-alive.
  void add_closing(Kind kind, std::size_t r, const std::string& id) {
    if (kind == Kind::connection_close) {
      append("GET /users/" + id + " HTTP/1.1\r\n" + std::string(host_line) + "Connection: close\r\n\r\n");
    } else {
      append("GET /users/" + id + " HTTP/1.0\r\n\r\n");
    }
    end(r);
    Request& q = script_.requests[r];
    q.terminal = true;
    q.expected.body = user_body(std::stoull(id));
    q.expected.closes = true;
  }

  void add_garbage(std::size_t r) {
    static constexpr std::array<std::string_view, 4> forms{
        "(BREW) /pot HTTP/1.1\r\n\r\n",  // not a token (BREW alone would be a 501)
        "GET /plaintext HTTP/1.1 junk\r\n\r\n",
        "\x01\x02\x03\x04\r\n\r\n",
        "GET /plaintext HTTP/1.1\r\nHost: localhost\r\nNo colon here\r\n\r\n",
    };
    append(forms[rng_.below(forms.size())]);
    refuse(r, 400, "malformed");
  }

  void add_chunked_body_too_large(std::size_t r) {
    append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
           "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    std::uint64_t left = options_.body_bytes_max + rng_.between(1, 4096);
    while (left > 0) {
      const std::uint64_t n = std::min<std::uint64_t>(left, 4096);
      append(hex(n, false) + "\r\n" + std::string(n, 'x') + "\r\n");
      left -= n;
    }
    append("0\r\n\r\n");
    refuse(r, 413, "body_too_large");
  }

  // A CR where the grammar needs CRLF: ending the header section, or ending
  // a chunk's size line or its data.
  void add_bare_cr(std::size_t r, const std::string& id) {
    switch (rng_.below(3)) {
      case 0: append("GET /users/" + id + " HTTP/1.1\r\n" + std::string(host_line) + "\rX\r\n\r\n"); break;
      case 1:
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
               "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\rX{}\r\n0\r\n\r\n");
        break;
      default:
        append("POST /echo HTTP/1.1\r\n" + std::string(host_line) +
               "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\rX0\r\n\r\n");
        break;
    }
    refuse(r, 400, any_parse_error);
  }

  Rng rng_;
  const ScriptOptions& options_;
  Script script_;
  std::uint32_t serial_ = 0;
};

const char* op_name(Op op) {
  switch (op) {
    case Op::send: return "send";
    case Op::pause: return "pause";
    case Op::stop_reading: return "stop reading";
    case Op::await_responses: return "await responses";
    case Op::await_continue: return "await 100 Continue";
    case Op::half_close: return "half-close";
    case Op::reset: return "reset";
    case Op::finish: return "finish";
  }
  return "?";
}

}  // namespace

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::user: return "user";
    case Kind::plaintext: return "plaintext";
    case Kind::head_plaintext: return "head_plaintext";
    case Kind::echo: return "echo";
    case Kind::stream: return "stream";
    case Kind::bad_user_id: return "bad_user_id";
    case Kind::not_found: return "not_found";
    case Kind::wrong_media_type: return "wrong_media_type";
    case Kind::http10_keep_alive: return "http10_keep_alive";
    case Kind::connection_close: return "connection_close";
    case Kind::http10: return "http10";
    case Kind::header_too_large: return "header_too_large";
    case Kind::unsupported_coding: return "unsupported_coding";
    case Kind::garbage: return "garbage";
    case Kind::ambiguous_length: return "ambiguous_length";
    case Kind::body_too_large: return "body_too_large";
    case Kind::body_too_large_chunked: return "body_too_large_chunked";
    case Kind::bare_cr: return "bare_cr";
    case Kind::header_timeout: return "header_timeout";
    case Kind::trailing: return "trailing";
  }
  return "?";
}

Script generate_script(std::uint64_t seed, std::uint32_t index, const ScriptOptions& options) {
  return Builder(seed, index, options).build();
}

std::string escaped(std::string_view bytes, std::size_t max) {
  static constexpr std::size_t run_bytes_min = 16;
  std::string out;
  std::size_t i = 0;
  while (i < bytes.size() && out.size() < max) {
    const char c = bytes[i];
    std::size_t run = 1;
    while (i + run < bytes.size() && bytes[i + run] == c) ++run;
    if (run >= run_bytes_min) {
      out += "<" + std::to_string(run) + " x '" + escaped(bytes.substr(i, 1)) + "'>";
      i += run;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    if (c == '\r') {
      out += "\\r";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
    ++i;
  }
  if (i < bytes.size()) out += "...(" + std::to_string(bytes.size() - i) + " more bytes)";
  return out;
}

std::string describe(const Script& script) {
  std::string out = "  script of connection " + std::to_string(script.index) + " (seed " + std::to_string(script.seed) +
                    ")" +
                    (script.receive_buffer_bytes ? ", SO_RCVBUF " + std::to_string(*script.receive_buffer_bytes) : "") +
                    (script.expects_eof ? ", the server must close at the end" : "") +
                    (script.ends_idle ? " (idle timeout)" : "") + ":\n   ";
  std::uint64_t from = 0;
  for (const Step& s : script.steps) {
    out += " ";
    out += op_name(s.op);
    switch (s.op) {
      case Op::send:
        out += " [" + std::to_string(from) + "," + std::to_string(s.end) + ")";
        if (s.piece_bytes_max != whole) out += " pieces<=" + std::to_string(s.piece_bytes_max);
        if (s.gap_ms > 0) out += " gap " + std::to_string(s.gap_ms) + "ms";
        from = s.end;
        break;
      case Op::pause:
      case Op::stop_reading: out += " " + std::to_string(s.ms) + "ms"; break;
      case Op::await_responses: out += " " + std::to_string(s.count); break;
      case Op::await_continue: out += " of #" + std::to_string(s.count); break;
      default: break;
    }
    out += ";";
  }
  out += "\n  requests:";
  for (std::size_t i = 0; i < script.requests.size(); ++i) {
    const Request& r = script.requests[i];
    out += " #" + std::to_string(i) + " " + kind_name(r.kind) + (r.expect_continue ? "+expect" : "") + " [" +
           std::to_string(r.begin) + "," + std::to_string(r.end) + ")";
    if (r.answered) out += "->" + std::to_string(r.expected.status) + (r.expected.closes ? "+close" : "");
    out += ";";
  }
  out += "\n  bytes: \"" + escaped(script.stream) + "\"";
  return out;
}

}  // namespace socket_test::hostile
