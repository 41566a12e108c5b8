#include "support/h2_server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <vector>

#include "support/certificates.hpp"
#include "support/h2_server_session.hpp"
#include "support/h2_transport.hpp"
#include "support/loopback_listener.hpp"

namespace socket_test {
namespace {

constexpr int poll_ms = 20;                     // how soon a thread notices it must stop
constexpr std::uint32_t connections_max = 256;  // a thread each: a client that loops must not make thousands
constexpr std::size_t read_bytes = 16 * 1024;   // one TLS record's worth

// ALPN's wire form: h2 only, so that a client that offers only http/1.1 sees
// the server select nothing.
constexpr unsigned char alpn_h2[] = {2, 'h', '2'};

int select_h2(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* offered,
              unsigned int offered_len, void*) {
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_len, alpn_h2, sizeof alpn_h2, offered, offered_len) !=
      OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

// SIGPIPE held back on a connection's thread: OpenSSL's socket BIO writes
// with write(), which raises it when the client has gone. One that came is
// consumed before the thread ends.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, nullptr);
  }
  ~SigpipeBlocked() {
    const timespec none{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &none) == SIGPIPE) {
    }
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
};

}  // namespace

struct H2Server::TlsContext {
  SSL_CTX* context = nullptr;
  ~TlsContext() { SSL_CTX_free(context); }
};

H2Server::H2Server(H2Behaviour behaviour, H2ServerOptions options) : behaviour_(behaviour), options_(options) {
  if (options_.tls) {
    certificates_ = std::make_unique<TempCertificates>();
    tls_ = std::make_unique<TlsContext>();
    tls_->context = SSL_CTX_new(TLS_server_method());
    if (tls_->context == nullptr || SSL_CTX_set_min_proto_version(tls_->context, TLS1_2_VERSION) != 1 ||
        SSL_CTX_use_certificate_chain_file(tls_->context, certificates_->files().cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(tls_->context, certificates_->files().key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      throw std::runtime_error("h2 server: OpenSSL refused the certificate or key");
    }
    SSL_CTX_set_alpn_select_cb(tls_->context, select_h2, nullptr);
  }
  listen_fd_ = listen_on_loopback("h2 server", port_);
  thread_ = std::thread([this] { accept_loop(); });
}

H2Server::~H2Server() {
  stop_ = true;
  thread_.join();
  ::close(listen_fd_);
}

std::string H2Server::url(const std::string& path) const {
  return std::string(options_.tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

std::string H2Server::ca_file() const { return certificates_ ? certificates_->files().ca_file : std::string(); }

void H2Server::accept_loop() {
  // A thread per connection, as support/canned_server.cpp: tests open few.
  std::vector<std::thread> connections;
  while (!stop_) {
    const int fd = accept_within(listen_fd_, poll_ms, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) continue;
    if (connections.size() >= connections_max) {
      ::close(fd);
      continue;
    }
    // Frames leave as soon as they are written: Nagle's wait for the
    // client's delayed ACK would add tens of milliseconds.
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    connections.emplace_back([this, fd] { serve(fd); });
  }
  for (std::thread& t : connections) t.join();
}

void H2Server::serve(int fd) {
  SigpipeBlocked no_sigpipe;
  H2Transport transport(fd, tls_ ? tls_->context : nullptr);
  if (!transport.handshake(stop_)) return;
  const std::uint32_t number = counts_.connections.fetch_add(1) + 1;
  const bool misbehaves = options_.misbehaving_connections == 0 || number <= options_.misbehaving_connections;
  H2ServerSession session(misbehaves ? behaviour_ : H2Behaviour::normal, options_, counts_, request_serial_);
  std::vector<char> input(read_bytes);
  while (!stop_) {
    session.on_poll();
    const std::string output = session.take_output();
    if (!output.empty() && !transport.write_all(output, stop_)) return;
    if (session.finished()) {
      transport.linger_close(stop_);
      return;
    }
    const ssize_t n = transport.read(input.data(), input.size(), poll_ms);
    if (n < 0) return;
    if (n > 0) session.received(input.data(), std::size_t(n));
  }
}

}  // namespace socket_test
