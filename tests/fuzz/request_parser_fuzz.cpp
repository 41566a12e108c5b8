// libFuzzer target for the request parser: any bytes, split anywhere, must
// give the same requests and the same verdict as the same bytes fed whole,
// and never read or report past what it was given. The split runs also
// trade the parser's buffers for another set, filled with garbage, after
// every feed that ends between requests (as the server lends them only to
// busy connections): nothing a later request reads may come from them.
//
// Built and run by tools/fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/http/request_parser.hpp"

namespace {

using ringhttp::http::HeaderValue;
using ringhttp::http::kept_header_kinds;
using ringhttp::http::KeptHeader;
using ringhttp::http::ParseError;
using ringhttp::http::RequestEvents;
using ringhttp::http::RequestHead;
using ringhttp::http::RequestParser;

struct Outcome {
  std::vector<std::string> requests;  // method, target, keep-alive of each
  int continues = 0;
  ParseError error = ParseError::none;

  bool operator==(const Outcome&) const = default;
};

class Recorder final : public RequestEvents {
 public:
  explicit Recorder(Outcome& out, bool pause) : out_(out), pause_(pause) {}
  void on_request_headers(const RequestHead& head) override {
    if (!head.expect_continue) std::abort();  // only called for 100-continue
    ++out_.continues;
  }
  bool on_request(const RequestHead& head) override {
    std::string line(head.method_name());
    line += ' ';
    line.append(head.target);
    line += head.keep_alive ? " ka" : " close";
    line += head.expect_continue ? " continue" : "";
    // Everything the application may read must not depend on the split:
    // the kept headers (value, or absent/unusable) and the body.
    for (std::size_t i = 0; i < kept_header_kinds; ++i) {
      const HeaderValue& h = head.header(KeptHeader(i));
      line += !h.present ? " |absent" : !h.usable ? " |unusable" : " |" + std::string(h.value);
    }
    line += head.body_truncated ? " body:truncated" : " body:" + std::string(head.body);
    out_.requests.push_back(std::move(line));
    return pause_;
  }

 private:
  Outcome& out_;
  bool pause_;
};

// Feeds `input` in pieces whose lengths come from `splits`, resuming after
// every pause, as the server does with held input.
Outcome run(const std::string& input, const std::vector<std::size_t>& splits, bool pause) {
  static RequestParser::Buffers sets[2];
  std::size_t lent = 0;
  Outcome out;
  Recorder events(out, pause);
  RequestParser::Limits limits;
  limits.header_bytes_max = 1024;
  limits.body_bytes_max = 4096;
  RequestParser parser;
  parser.reset(limits, &events);
  parser.lend_buffers(&sets[lent]);
  std::size_t pos = 0;
  std::size_t split = 0;
  while (pos < input.size()) {
    std::size_t len = input.size() - pos;
    if (split < splits.size() && splits[split] < len) len = splits[split] == 0 ? 1 : splits[split];
    ++split;
    std::size_t off = 0;
    while (off < len) {
      const RequestParser::Result r = parser.feed(input.data() + pos + off, len - off);
      if (r.consumed > len - off) std::abort();  // reported past its input
      if (r.status == RequestParser::Status::error) {
        out.error = parser.error();
        return out;
      }
      off += r.consumed;
      if (r.status == RequestParser::Status::done) break;
    }
    if (!splits.empty() && !parser.in_message()) {
      parser.take_buffers();
      lent ^= 1;
      std::memset(static_cast<void*>(&sets[lent]), 0xA5, sizeof sets[lent]);
      parser.lend_buffers(&sets[lent]);
    }
    pos += len;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  // The first bytes choose how to split the rest.
  const std::size_t split_count = data[0] % 8;
  if (size < 1 + split_count) return 0;
  std::vector<std::size_t> splits(data + 1, data + 1 + split_count);
  const std::string input(reinterpret_cast<const char*>(data + 1 + split_count), size - 1 - split_count);

  const Outcome whole = run(input, {}, false);
  const Outcome split = run(input, splits, false);
  const Outcome paused = run(input, splits, true);
  if (!(whole == split) || !(whole == paused)) std::abort();  // splitting changed the meaning
  return 0;
}
