// Per-request user-space cost of parsing: llhttp alone with no callbacks
// (the floor a wrapper can reach) against RequestParser, on the request wrk
// sends, one at a time and 16 pipelined in one buffer.
//
//   tools/micro.sh --benchmark_filter=Parse
//   valgrind --tool=callgrind build/bench/micro/micro_bench --benchmark_filter=Parse --benchmark_min_time=0.01

#include <benchmark/benchmark.h>
#include <llhttp.h>

#include <string>

#include "bench/micro/items.hpp"
#include "core/http/request_parser.hpp"

namespace {

using ringhttp::http::RequestEvents;
using ringhttp::http::RequestHead;
using ringhttp::http::RequestParser;

const std::string wrk_request = "GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n";

std::string repeated(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += wrk_request;
  return out;
}

class CountingEvents final : public RequestEvents {
 public:
  void on_request_headers(const RequestHead&) override {}
  bool on_request(const RequestHead& head) override {
    benchmark::DoNotOptimize(head.target.data());
    ++requests;
    return false;
  }
  std::uint64_t requests = 0;
};

void ParseLlhttpBare(benchmark::State& state) {
  const std::string input = repeated(int(state.range(0)));
  llhttp_settings_t settings;
  llhttp_settings_init(&settings);
  llhttp_t parser;
  llhttp_init(&parser, HTTP_REQUEST, &settings);
  for (auto _ : state) {
    const llhttp_errno_t rc = llhttp_execute(&parser, input.data(), input.size());
    if (rc != HPE_OK) state.SkipWithError("llhttp error");
  }
  ringhttp::bench::set_items(state, state.range(0));
}
BENCHMARK(ParseLlhttpBare)->Arg(1)->Arg(16);
// A fixed count, for instruction counting under callgrind (divide by 320,000 requests).
BENCHMARK(ParseLlhttpBare)->Arg(16)->Iterations(20000);

void ParseRequestParser(benchmark::State& state) {
  const std::string input = repeated(int(state.range(0)));
  CountingEvents events;
  RequestParser::Buffers buffers;
  RequestParser parser;
  parser.reset({}, &events);
  parser.lend_buffers(&buffers);
  for (auto _ : state) {
    const auto result = parser.feed(input.data(), input.size());
    if (result.status != RequestParser::Status::done) state.SkipWithError("parse error");
  }
  ringhttp::bench::set_items(state, state.range(0));
}
BENCHMARK(ParseRequestParser)->Arg(1)->Arg(16);
BENCHMARK(ParseRequestParser)->Arg(16)->Iterations(20000);

}  // namespace
