#pragma once
// HTTP/2 on one load connection (--http2, --http2-prior-knowledge): its
// session (core/http2, over memory), the times of each stream in flight,
// and the area the session's output is taken into for the connection's
// one send. Made with
// the connection's slot and kept; the session is started anew per socket.

#include <cstdint>
#include <memory>
#include <vector>

#include "core/http2/client_session.hpp"

namespace ringhttp::client {

struct Connection;

// A request on a stream: what its latency and deadline count from.
struct StreamRequest {
  std::uint64_t sent_at_ns = 0;   // its first send: a refused request keeps it when sent again
  std::uint64_t intended_ns = 0;  // rate model: when it was due
  std::uint32_t request = 0;      // which of the run's distinct requests
  bool in_flight = false;
};

struct H2Link final : http2::ClientEvents {
  // The session's output is taken into this area, then sent (h2c) or
  // handed to TLS: one send carries every frame queued since the last.
  // 16 KiB holds a batch of header blocks (HPACK makes a repeated request
  // a few bytes) and a frame's worth of body.
  static constexpr std::uint32_t out_bytes = 16 * 1024;

  H2Link(Connection& conn, std::uint32_t max_streams);

  // Takes the places of the streams: none in flight.
  void clear_streams();
  StreamRequest* take_place();

  void on_stream_done(void* user, const http2::StreamResult& result) override;
  void on_goaway(std::int32_t last_stream_id, std::uint32_t error_code) override;

  Connection& conn;
  http2::ClientSession session;
  // One place per stream allowed at once, and the free ones.
  std::vector<StreamRequest> streams;
  std::vector<std::uint32_t> free;
  bool goaway = false;  // this socket's server said GOAWAY: no new stream, close once the rest are done
  // The session is being ended under streams still open: those that end
  // broken are counted with the connection, not one by one.
  bool ending = false;
  // The server broke the protocol: counted, nothing more read or opened,
  // and the socket closes once the session's GOAWAY is sent.
  bool broken = false;
  // This side ends the connection (--requests-per-connection: its streams
  // are spent and done): nothing more read or opened, and the socket
  // closes once the session's GOAWAY(NO_ERROR) is sent.
  bool leaving = false;
  // No stream in flight was sent before this (UINT64_MAX: none in flight
  // since it was last worked out): the tick scans the streams for one past
  // --timeout only once this is that old, not on every tick.
  std::uint64_t oldest_sent_ns = UINT64_MAX;
  std::unique_ptr<char[]> out;
};

}  // namespace ringhttp::client
