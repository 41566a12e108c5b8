// A blocking TCP client connection to the server under test, with a receive
// and send timeout so that a broken server fails a test instead of hanging it.
// Over HTTPS when the suite runs so (ConnectOptions::tls): the reads and
// sends below then carry plaintext, the project's TLS session (core/tls)
// in between.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "support/http_response.hpp"

namespace socket_test {

struct ConnectOptions {
  std::string address = "127.0.0.1";        // an IP literal: 127.0.0.0/8 or ::1
  std::chrono::milliseconds timeout{5000};  // SO_RCVTIMEO and SO_SNDTIMEO
  std::optional<int> receive_buffer_bytes;  // SO_RCVBUF, set before connect so the window honours it
  bool no_delay = true;                     // TCP_NODELAY: each send() leaves as its own segment
  // An IPv4 loopback address to send from (e.g. "127.0.0.2"), its port picked
  // at connect: many connections spread over several addresses' port ranges.
  // Empty: the kernel's choice (127.0.0.1).
  std::string source_address;
  // TCP_MAXSEG, set before connect: the segment size offered to the server,
  // which sizes the server's send buffer for this connection by it (a few
  // hundred stalled responses then hold little of the kernel's memory).
  std::optional<int> max_segment_bytes;
  // HTTPS: a TLS handshake after connect, then every send encrypted (each
  // send_all() call in records of its own) and every read decrypted.
  // Unset: when the port is a server serving HTTPS for the suite
  // (support/suite_tls.hpp), so that the same test runs over either.
  std::optional<bool> tls;
  // Over TLS: the ClientHello leaves at connect and the rest of the
  // handshake waits for the first send or read, so that a connection the
  // server has not accepted yet can be made without blocking.
  bool defer_tls_handshake = false;
};

class Connection {
 public:
  // Connects to options.address:port; throws std::runtime_error on failure.
  explicit Connection(std::uint16_t port, ConnectOptions options = {});
  ~Connection();

  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends every byte or throws (timeout, reset, ...). Never raises SIGPIPE.
  // Over TLS: the bytes in full records, sent together.
  void send_all(std::string_view bytes);
  // What carries `plaintext` on the wire: itself, or over TLS its records,
  // encrypted now (send them next, in order, e.g. with ::send on fd()).
  std::string wire_bytes(std::string_view plaintext);
  // One send() per byte (over TLS, one record per byte).
  void send_byte_by_byte(std::string_view bytes);

  // Buffered bytes if there are any, else the bytes of one recv(), at most
  // `max`. Empty means the peer closed. Throws on timeout or error.
  std::string read_some(std::size_t max = 64 * 1024);
  // One raw recv() (buffered bytes first); same as read_some.
  std::string recv_some(std::size_t max = 64 * 1024) { return read_some(max); }
  // Exactly n bytes; throws if the connection closes or times out first.
  std::string read_exact(std::size_t n);
  // One CRLF-terminated line without its CRLF; throws on EOF or timeout.
  std::string read_line();
  // Everything until the peer closes.
  std::string read_until_close();

  // One response: status line, headers, then the body framed by
  // Content-Length or chunked coding (none for HEAD, 1xx, 204, 304).
  Response read_response(bool head = false);
  // Status line and headers only; the body stays unread.
  Response read_head();

  // Whether a read would return at once: bytes are buffered or arriving,
  // or the peer has closed. Over TLS, arriving means plaintext decrypted.
  bool input_ready();

  // Success when the peer has closed (EOF or reset) within the timeout and
  // sent nothing more before closing.
  testing::AssertionResult expect_closed();

  void set_timeout(std::chrono::milliseconds timeout);
  // SO_LINGER {1, 0} then close: the peer sees a reset.
  void reset();
  void close();

  int fd() const { return fd_; }
  bool tls() const { return tls_ != nullptr; }
  std::size_t buffered() const { return buffer_.size() - consumed_; }

 private:
  // Appends one recv() to the buffer; returns its size (0 = EOF). Throws on
  // timeout or error.
  std::size_t fill();
  // One recv() of what arrives on the socket: its size (0 = EOF), or
  // -errno (-EAGAIN on timeout).
  ssize_t recv_raw(char* into, std::size_t max);
  [[noreturn]] void throw_recv_error(int error) const;
  void send_raw(std::string_view bytes);
  void start_tls();
  void send_pending_handshake();  // a server that closed at once marks the connection closed
  void received(const char* bytes, std::size_t n);
  void finish_handshake();  // blocking; throws on a TLS failure or timeout
  enum class Decrypted { plaintext, closed, need_more };
  Decrypted decrypt_received();  // what was received, into buffer_
  std::string take(std::size_t n);

  int fd_ = -1;
  std::chrono::milliseconds timeout_{};
  std::string buffer_;
  std::size_t consumed_ = 0;
  struct Tls;  // the session and the ciphertext not yet decrypted
  std::unique_ptr<Tls> tls_;
};

}  // namespace socket_test
