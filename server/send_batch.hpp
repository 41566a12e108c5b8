#pragma once
// What one send carries: the iovecs of a connection's queued responses, in
// order, each pointing at where its bytes already live (the static head,
// the shard's Date line, the framing tail, the body; a stream's next chunk
// over the shared pattern block). Pure: it reads the queue and writes only
// the iovecs, so Shard::flush and bench/micro run the same code.

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "server/connection.hpp"

namespace ringhttp::server {

struct SendBatch {
  std::size_t iovecs = 0;          // iovecs filled, from the span's start
  std::uint64_t bytes = 0;         // their total length (> 0 for a non-empty queue)
  std::uint32_t retires = 0;       // whole responses the send completes, from entry `first`
  std::uint64_t stream_bytes = 0;  // bytes of an unfinished stream at the batch's end (0: none)
};

// Walks `out` from entry `first` (the entries before it are written and wait
// only for zero-copy notifications; 0 in the other send modes). Stops after
// the first stream that the batch does not finish: nothing queued behind it
// may be sent before its last byte. Stops before a deferred response (its
// result has not come): the batch may then be empty. `iov` holds at least
// Connection::iovecs_max entries.
SendBatch build_send_batch(const OutputQueue<Connection::responses_max>& out, std::size_t first,
                           std::string_view date_line, std::span<iovec> iov);

}  // namespace ringhttp::server
