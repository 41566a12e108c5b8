// One connection of the HTTP/2 test server (support/h2_server.hpp): its
// nghttp2 server session and the chosen behaviour, bytes in and bytes out.
// It never touches the socket.
#pragma once

#include <nghttp2/nghttp2.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "support/h2_server.hpp"

namespace socket_test {

class H2ServerSession {
 public:
  // `behaviour` is this connection's (normal past misbehaving_connections).
  // The server's SETTINGS are pending at once.
  H2ServerSession(H2Behaviour behaviour, const H2ServerOptions& options, H2ServerCounts& counts,
                  std::atomic<std::uint32_t>& request_serial);
  ~H2ServerSession();
  H2ServerSession(const H2ServerSession&) = delete;
  H2ServerSession& operator=(const H2ServerSession&) = delete;

  // Bytes from the client. False when nghttp2 failed the connection; what
  // it queued (its GOAWAY) is still in take_output().
  bool received(const char* bytes, std::size_t n);
  // Everything to send now, in order: frames written by hand, then nghttp2's.
  std::string take_output();
  // Whether the connection is over: failed, or a GOAWAY sent and every
  // stream it covers closed, or nghttp2 wants neither to read nor to write.
  bool finished() const;
  // Called between reads: what waits for time or for other connections
  // (goaway_in_flight's held answer) is done when its moment has come.
  void on_poll();

 private:
  enum class Body { whole, cut, stalled };
  struct Stream {
    bool reset = false;  // refused by this server: never answered
    bool held = false;   // goaway_in_flight: complete, waiting for the GOAWAY
    Body body = Body::whole;
    std::size_t sent = 0;  // body bytes handed to nghttp2
  };

  void request_began(std::int32_t id);
  void request_complete(std::int32_t id);
  void hold_for_goaway(std::int32_t id);
  void respond(std::int32_t id, Body body);
  void send_goaway(std::int32_t last_stream_id, std::uint32_t error_code);
  void send_bad_header_block(std::int32_t id);

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int on_frame_send(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t, const std::uint8_t*, std::size_t len,
                           void* self);
  static int on_stream_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* self);
  static ssize_t read_body(nghttp2_session*, std::int32_t, std::uint8_t* out, std::size_t cap, std::uint32_t* flags,
                           nghttp2_data_source* source, void*);

  const H2Behaviour behaviour_;
  const H2ServerOptions& options_;
  H2ServerCounts& counts_;
  std::atomic<std::uint32_t>& request_serial_;
  nghttp2_session* session_ = nullptr;
  std::map<std::int32_t, Stream> streams_;   // open streams it serves; nodes stay put for read_body
  std::uint32_t requests_ = 0;               // on this connection
  std::uint32_t held_ = 0;                   // goaway_in_flight: complete requests not answered yet
  std::int32_t goaway_last_stream_id_ = -1;  // -1: no GOAWAY sent
  // goaway_in_flight: the covered stream, answered once the client has
  // taken in the GOAWAY (a new connection came) or at answer_by_.
  std::int32_t answer_after_retry_ = -1;
  std::uint32_t connections_at_goaway_ = 0;
  std::chrono::steady_clock::time_point answer_by_;
  std::string raw_output_;
  bool failed_ = false;
};

}  // namespace socket_test
