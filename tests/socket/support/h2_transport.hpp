// One connection of the HTTP/2 test server (support/h2_server.hpp): a
// nonblocking socket, plain or under OpenSSL's server side of TLS. Every
// wait is a poll of at most `poll_ms`, so that the server's thread notices
// when it must stop; a write that cannot go on for write_stall_ms fails.
#pragma once

#include <openssl/ssl.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <string_view>

namespace socket_test {

class H2Transport {
 public:
  // Takes `fd` (closed by the destructor). `context` null: plain TCP.
  H2Transport(int fd, SSL_CTX* context);
  ~H2Transport();
  H2Transport(const H2Transport&) = delete;
  H2Transport& operator=(const H2Transport&) = delete;

  // The TLS handshake (true at once for plain TCP); false when it fails,
  // takes longer than handshake_ms, or `stop` is set.
  bool handshake(const std::atomic<bool>& stop);
  // Waits at most `poll_ms` for input: the bytes read (> 0), 0 when none
  // came, -1 when the peer closed or the connection failed.
  ssize_t read(char* out, std::size_t cap, int poll_ms);
  // Sends every byte: false when the peer is gone, a send stalls for
  // write_stall_ms, or `stop` is set.
  bool write_all(std::string_view bytes, const std::atomic<bool>& stop);
  // Ends the sending side (close_notify, then FIN) and reads until the
  // peer closes, at most linger_ms: closing with unread input would send a
  // TCP reset, which can destroy what the peer has not read yet.
  void linger_close(const std::atomic<bool>& stop);

 private:
  bool wait(short events, int poll_ms) const;

  int fd_;
  SSL* ssl_ = nullptr;
};

}  // namespace socket_test
