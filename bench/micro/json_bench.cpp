// JSON serialization (core/http/json_writer): the /json body as
// the App's json() handler writes it for every request, into a response
// slot's scratch, and a string that needs escaping.
//
// What it does not measure: routing, the response head and framing, or the
// send (see SendBatch* for building the iovecs).

#include <benchmark/benchmark.h>

#include <string_view>

#include "bench/micro/items.hpp"
#include "core/http/json_writer.hpp"
#include "server/reply.hpp"

namespace {

using ringhttp::http::JsonWriter;
using ringhttp::server::PendingResponse;
using ringhttp::server::Reply;

// {"message":"Hello, World!"}, 27 bytes. Items are bodies.
void JsonHelloWorld(benchmark::State& state) {
  char scratch[PendingResponse::scratch_bytes_max];
  for (auto _ : state) {
    JsonWriter w(scratch, Reply::scratch_bytes());
    w.begin_object().key("message").string("Hello, World!").end_object();
    if (!w.ok()) state.SkipWithError("scratch too small");
    auto size = w.size();
    benchmark::DoNotOptimize(size);
    benchmark::ClobberMemory();  // the body is read later, by the kernel
  }
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(JsonHelloWorld);

// A 38-byte value of which 6 bytes need escaping: two quotes, a backslash,
// a newline, a tab and a control character (written \u0001).
void JsonEscaped(benchmark::State& state) {
  static constexpr std::string_view value = "say \"hi\" to C:\\tmp\nthen\ttab \x01 and go!!";
  char out[128];
  for (auto _ : state) {
    JsonWriter w(out, sizeof out);
    w.begin_object().key("message").string(value).end_object();
    if (!w.ok()) state.SkipWithError("buffer too small");
    auto size = w.size();
    benchmark::DoNotOptimize(size);
    benchmark::ClobberMemory();
  }
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(JsonEscaped);

}  // namespace
