// Building one send's iovecs: build_send_batch, the loop Session::flush runs
// over a connection's output queue (head, Date line, framing tail, body per
// response; a stream's chunk as iovecs over the pattern block). Queues are
// filled as the server fills them for /plaintext and /stream.
//
// What it does not measure: the queue being filled (parsing and routing),
// the sendmsg itself (kernel time), or retiring the responses afterwards.

#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "bench/micro/items.hpp"
#include "core/http/date_cache.hpp"
#include "server/framing_cache.hpp"
#include "server/heads.hpp"
#include "server/send_batch.hpp"

namespace {

using ringhttp::http::DateCache;
using ringhttp::server::BodySource;
using ringhttp::server::build_send_batch;
using ringhttp::server::Connection;
using ringhttp::server::FramingCache;
using ringhttp::server::OutputQueue;
using ringhttp::server::PendingResponse;
using ringhttp::server::SendBatch;
namespace heads = ringhttp::server::heads;

using Queue = OutputQueue<Connection::responses_max>;
using Iovecs = std::array<iovec, Connection::iovecs_max>;

// What routes.cpp's plaintext() and Session::finish_response leave in a slot
// for a keep-alive GET /plaintext.
void push_plaintext(Queue& out, FramingCache& framing) {
  static constexpr std::string_view body = "Hello, World!";
  PendingResponse& r = out.push();
  r.reset();
  r.status = 200;
  r.head = heads::ok_text;
  r.body = body;
  r.source = BodySource::fixed;
  r.tail = framing.keep_alive(body.size());
}

// The batch must be what the server would send, or the row measures nothing.
bool check(benchmark::State& state, const SendBatch& b, std::size_t iovecs, std::uint32_t retires) {
  if (b.iovecs == iovecs && b.retires == retires && b.bytes > 0) return true;
  state.SkipWithError("unexpected batch");
  return false;
}

void run(benchmark::State& state, const Queue& out, const DateCache& date, Iovecs& iov) {
  for (auto _ : state) {
    SendBatch b = build_send_batch(out, 0, date.line(), iov);
    benchmark::DoNotOptimize(b);
    benchmark::ClobberMemory();  // the iovecs are read later, by the kernel
  }
}

// N keep-alive /plaintext responses queued from one receive (N pipelined
// requests): one send of 4 iovecs each. Items are responses.
void SendBatchPlaintext(benchmark::State& state) {
  const auto n = std::size_t(state.range(0));
  DateCache date;
  FramingCache framing;
  Queue out;
  for (std::size_t i = 0; i < n; ++i) push_plaintext(out, framing);
  Iovecs iov{};
  if (!check(state, build_send_batch(out, 0, date.line(), iov), 4 * n, std::uint32_t(n))) return;
  run(state, out, date, iov);
  ringhttp::bench::set_items(state, std::int64_t(n));
}
BENCHMARK(SendBatchPlaintext)->Arg(1)->Arg(16);

// The first chunk of GET /stream?bytes=1048576: head, Date, framing, then
// stream_iovecs_max iovecs over the pattern block (about 256 KiB). Items
// are sends (chunks).
void SendBatchStreamChunk(benchmark::State& state) {
  DateCache date;
  Queue out;
  PendingResponse& r = out.push();
  r.reset();
  r.status = 200;
  r.head = heads::ok_octets;
  r.tail = "Content-Length: 1048576\r\n\r\n";  // finish_response formats this into the slot
  r.source = BodySource::stream;
  r.stream_offset = 0;
  r.stream_remaining = 1 << 20;
  Iovecs iov{};
  if (!check(state, build_send_batch(out, 0, date.line(), iov), 3 + Connection::stream_iovecs_max, 0)) return;
  run(state, out, date, iov);
  ringhttp::bench::set_items(state, 1);
}
BENCHMARK(SendBatchStreamChunk);

}  // namespace
