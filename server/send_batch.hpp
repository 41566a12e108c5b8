#pragma once
// What one send carries: the iovecs of a connection's queued responses, in
// order. Large pieces (a stream's chunks over the shared pattern block, a
// large body) are sent from where they live; small ones (the static head,
// the shard's Date line, header blocks, the framing tail, a small body) are
// copied one after another into a staging area when one is given, so that
// a response is one iovec instead of four to seven: the kernel's cost per
// iovec exceeds a small copy's. Pure: it reads the queue and writes only
// the iovecs and the staging area, so Session::flush and bench/micro run the
// same code.

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstdint>
#include <span>
#include <string_view>

#include "server/connection.hpp"

namespace ringhttp::server {

// Pieces up to this size are copied into the staging area (while it has
// room) rather than given an iovec of their own.
inline constexpr std::size_t coalesce_bytes_max = 512;

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
// Connection::iovecs_max entries. `staging` (empty: none, as for zero-copy
// sends, whose bytes must stay unchanged until their notification) holds
// the copied pieces; it must stay unchanged until the send is done.
SendBatch build_send_batch(const OutputQueue<Connection::responses_max>& out, std::size_t first,
                           std::string_view date_line, std::span<iovec> iov, std::span<char> staging = {});

}  // namespace ringhttp::server
