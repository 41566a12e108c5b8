// A small HTTP/2 server for the client's tests, well-behaved or misbehaving
// in one chosen way. It runs on threads of its own on 127.0.0.1 and a free
// port: h2c by prior knowledge (the client sends the connection preface on
// a plain TCP socket), or TLS with ALPN h2 and certificates made for it.
// Framing and HPACK are libnghttp2's server session; the one frame nghttp2
// would refuse to write (a garbage header block) is written by hand.
//
// Every response that completes is 200 with the body "Hello, World!". The
// counts are over every connection and can be read while it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace socket_test {

class TempCertificates;

// HTTP/2 error codes (RFC 9113 section 7) the tests choose among, so that
// they need not include nghttp2.
namespace h2_error {
inline constexpr std::uint32_t no_error = 0x0;
inline constexpr std::uint32_t protocol_error = 0x1;
inline constexpr std::uint32_t internal_error = 0x2;
inline constexpr std::uint32_t refused_stream = 0x7;
inline constexpr std::uint32_t compression_error = 0x9;
inline constexpr std::uint32_t enhance_your_calm = 0xb;
}  // namespace h2_error

enum class H2Behaviour {
  // Answers every request (a body is read whole first).
  normal,
  // Sends the response's HEADERS and the first 7 bytes of its body
  // ("Hello, "), then RST_STREAM(INTERNAL_ERROR); for the requests chosen by
  // H2ServerOptions::reset_every, the others are answered whole.
  rst_mid_response,
  // Holds complete requests unanswered until goaway_open_streams of them
  // are open, then sends GOAWAY(goaway_error) whose last_stream_id is the
  // lowest of them, answers that one (see covered_answer_waits_for_retry)
  // and closes the connection (the streams above it are left unanswered,
  // as RFC 9113 says a client must retry).
  goaway_in_flight,
  // SETTINGS_INITIAL_WINDOW_SIZE 0 and never a WINDOW_UPDATE: a request
  // body can never be sent whole. Before a client has these SETTINGS it may
  // send up to 65,535 bytes (the default window, RFC 9113 section 6.9.2),
  // so a test's body must be larger. Requests without a body are answered.
  window_never_opens,
  // Sends the response's HEADERS (200, content-length 13) and never its DATA.
  response_stalls,
  // SETTINGS_MAX_CONCURRENT_STREAMS 0: no request may be sent. One sent
  // before the client had the SETTINGS is refused by nghttp2 with
  // RST_STREAM(REFUSED_STREAM) and not counted as a request; one sent after
  // them is a connection error (a GOAWAY; its code depends on nghttp2's
  // version).
  zero_streams,
  // Answers with a HEADERS frame (END_HEADERS|END_STREAM) whose header block
  // is the single byte 0x80: HPACK index 0, which RFC 7541 forbids, so the
  // client's decoder must fail the connection with COMPRESSION_ERROR.
  bad_hpack,
  // RST_STREAM(REFUSED_STREAM) for the first request of each connection, as
  // soon as its HEADERS arrive; later ones are answered.
  rst_refused,
};

struct H2ServerOptions {
  // TLS 1.2 or 1.3 with ALPN: h2 is selected when offered. A client that
  // offers only other protocols gets no ALPN answer, and the server speaks
  // HTTP/2 to it anyway (its SETTINGS frame first).
  bool tls = false;
  // The behaviour applies to the first this many connections (counted from
  // 1 as counts().connections counts them); later ones are served as
  // `normal`. 0: all.
  std::uint32_t misbehaving_connections = 0;
  // Like nginx's keepalive_requests, on every connection: when the HEADERS
  // of request number N (of that connection) arrive, a graceful GOAWAY
  // (NO_ERROR, last_stream_id = that request's stream) goes first; the
  // requests up to it are answered, later streams are not, and the
  // connection is closed once they are done. 0: never.
  std::uint32_t requests_per_connection = 0;
  // rst_mid_response: requests are counted from 1 over every connection,
  // and request k is reset when k % reset_every == 0 (1: every one; 2: the
  // 2nd, 4th, ...).
  std::uint32_t reset_every = 1;
  // goaway_in_flight: open requests held before the GOAWAY (at least 2, so
  // that at least one stream is above last_stream_id), and its error code.
  std::uint32_t goaway_open_streams = 2;
  std::uint32_t goaway_error = h2_error::no_error;
  // goaway_in_flight: the covered stream is answered only once the client
  // has opened a new connection (or after 2 s), so that the GOAWAY is
  // taken in before that answer: when both arrive together, curl 7.88 may
  // finish the covered stream first, close the connection and fail the
  // refused streams (exit 16) instead of sending them again. A client that
  // opens no new connection while one is busy (ours, with -c) is answered
  // at once, as real servers do.
  bool covered_answer_waits_for_retry = false;
  // SETTINGS_MAX_CONCURRENT_STREAMS where the behaviour does not set it.
  std::uint32_t max_concurrent_streams = 100;
};

// What the server did, over every connection. Atomic: read them while it runs.
struct H2ServerCounts {
  std::atomic<std::uint32_t> connections{0};          // accepted (TLS: handshake done)
  std::atomic<std::uint32_t> requests{0};             // requests whose HEADERS arrived on a stream it serves
  std::atomic<std::uint32_t> responses{0};            // responses sent whole (END_STREAM)
  std::atomic<std::uint32_t> resets{0};               // RST_STREAM frames it sent
  std::atomic<std::uint32_t> goaways{0};              // GOAWAY frames it sent
  std::atomic<std::uint32_t> bad_headers{0};          // garbage header blocks it sent (bad_hpack)
  std::atomic<std::uint64_t> body_bytes{0};           // request body bytes received
  std::atomic<std::uint32_t> client_goaways{0};       // GOAWAY frames the clients sent
  std::atomic<std::uint32_t> client_goaway_error{0};  // the error code of the last of them
};

class H2Server {
 public:
  // Listens at once; throws std::runtime_error when it cannot (or, with
  // TLS, when the certificates cannot be made).
  explicit H2Server(H2Behaviour behaviour, H2ServerOptions options = {});
  // Stops within a poll interval (20 ms): open connections are closed
  // without a GOAWAY.
  ~H2Server();
  H2Server(const H2Server&) = delete;
  H2Server& operator=(const H2Server&) = delete;

  std::uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT/..." or "https://..."; `path` starts with "/".
  std::string url(const std::string& path = "/") const;
  // TLS only ("" otherwise): the CA that signed the server's certificate
  // (PEM), which names localhost, 127.0.0.1 and ::1.
  std::string ca_file() const;

  const H2ServerCounts& counts() const { return counts_; }
  H2Behaviour behaviour() const { return behaviour_; }
  const H2ServerOptions& options() const { return options_; }

 private:
  void accept_loop();
  void serve(int fd);

  const H2Behaviour behaviour_;
  const H2ServerOptions options_;
  std::unique_ptr<TempCertificates> certificates_;
  struct TlsContext;
  std::unique_ptr<TlsContext> tls_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  H2ServerCounts counts_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> request_serial_{0};  // over every connection, for reset_every
  std::thread thread_;
};

}  // namespace socket_test
