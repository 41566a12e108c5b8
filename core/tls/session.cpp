#include "core/tls/session.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace ringhttp::tls {
namespace {

// SSL_get_error() needs the thread's error queue empty before the call it
// judges. Every path that can leave an error empties it (fail(), close()),
// so it is empty here but for another library's leftovers: cleared only
// then, since ERR_clear_error() costs several hundred instructions, twice a
// request or more.
void ensure_no_errors() {
  if (ERR_peek_error() != 0) ERR_clear_error();
}

}  // namespace

static_assert(record_plaintext_bytes_max == SSL3_RT_MAX_PLAIN_LENGTH);
static_assert(record_overhead_bytes_max == SSL3_RT_HEADER_LENGTH + SSL3_RT_MAX_ENCRYPTED_OVERHEAD);
static_assert(sizeof(Session) <= 3 * sizeof(void*), "a connection table holds one per slot");

namespace {

// The BIO every session's SSL reads and writes through: the Wire of the
// call in progress (BIO_get_data), null between calls.
int wire_write(BIO* bio, const char* data, std::size_t len, std::size_t* written) {
  BIO_clear_retry_flags(bio);
  auto* wire = static_cast<Wire*>(BIO_get_data(bio));
  const std::size_t n = wire == nullptr ? 0 : std::min(len, wire->out_room());
  if (n == 0) {
    BIO_set_retry_write(bio);
    return 0;
  }
  std::memcpy(wire->out + wire->out_len, data, n);
  wire->out_len += n;
  *written = n;
  return 1;
}

int wire_read(BIO* bio, char* data, std::size_t len, std::size_t* read) {
  BIO_clear_retry_flags(bio);
  auto* wire = static_cast<Wire*>(BIO_get_data(bio));
  const std::size_t n = wire == nullptr ? 0 : std::min(len, wire->in_len);
  if (n == 0) {
    BIO_set_retry_read(bio);
    return 0;
  }
  std::memcpy(data, wire->in, n);
  wire->in += n;
  wire->in_len -= n;
  *read = n;
  return 1;
}

long wire_ctrl(BIO*, int cmd, long, void*) {
  // A flush has nothing to do: written bytes are in the Wire already.
  // Everything else (pending counts, push, pop) is not supported.
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

int wire_create(BIO* bio) {
  BIO_set_data(bio, nullptr);
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* wire_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "ringhttp wire");
    if (m == nullptr) return m;
    BIO_meth_set_write_ex(m, wire_write);
    BIO_meth_set_read_ex(m, wire_read);
    BIO_meth_set_ctrl(m, wire_ctrl);
    BIO_meth_set_create(m, wire_create);
    return m;
  }();
  return method;
}

// The Wire of one call, given to the SSL's BIO for the call's length.
class OnWire {
 public:
  OnWire(SSL* ssl, Wire& wire) : bio_(SSL_get_rbio(ssl)) {
    assert(wire.out_len <= wire.out_cap);
    BIO_set_data(bio_, &wire);
  }
  ~OnWire() { BIO_set_data(bio_, nullptr); }
  OnWire(const OnWire&) = delete;
  OnWire& operator=(const OnWire&) = delete;

 private:
  BIO* bio_;
};

// What a failed SSL_* call of `ssl` means for the caller.
Session::Status classify(SSL* ssl, int result) {
  switch (SSL_get_error(ssl, result)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE: return Session::Status::want_io;
    case SSL_ERROR_ZERO_RETURN: return Session::Status::closed;
    default: return Session::Status::error;
  }
}

}  // namespace

Session::Session(Session&& other) noexcept
    : ssl_(std::exchange(other.ssl_, nullptr)),
      error_(std::exchange(other.error_, 0)),
      failed_(std::exchange(other.failed_, false)),
      handshake_done_(std::exchange(other.handshake_done_, false)),
      close_queued_(std::exchange(other.close_queued_, false)) {}

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    reset();
    std::swap(ssl_, other.ssl_);
    std::swap(error_, other.error_);
    std::swap(failed_, other.failed_);
    std::swap(handshake_done_, other.handshake_done_);
    std::swap(close_queued_, other.close_queued_);
  }
  return *this;
}

void Session::reset() {
  if (ssl_ != nullptr && !failed_) {
    // OpenSSL discards the session of a connection freed without a
    // close_notify, as TLS 1.0 required; TLS 1.1 and later no longer do
    // (RFC 5246 section 7.2.1). Connections often end without one (the
    // peer closes, the run ends), and their sessions stay good to resume.
    // A failed connection's session OpenSSL has discarded already.
    SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  }
  SSL_free(ssl_);  // and its BIO
  ssl_ = nullptr;
  error_ = 0;
  failed_ = false;
  handshake_done_ = false;
  close_queued_ = false;
}

bool Session::begin(SSL_CTX* ctx) {
  assert(ctx != nullptr);
  reset();
  const BIO_METHOD* method = wire_method();
  SSL* ssl = method != nullptr ? SSL_new(ctx) : nullptr;
  BIO* bio = ssl != nullptr ? BIO_new(method) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl);
    ERR_clear_error();
    return false;
  }
  SSL_set_bio(ssl, bio, bio);  // one reference, for both directions
  // A write may return after each record instead of insisting on the
  // whole length, and a repeated one may come from a moved buffer.
  // write() also encrypts one record at a time into room it has checked,
  // so a record never stays half-written inside OpenSSL. The read and
  // write buffers go back to the allocator whenever they are empty, so an
  // idle connection holds neither (nginx does the same).
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  ssl_ = ssl;
  return true;
}

Session::Status Session::fail() {
  // The queue is the thread's: keep the first reason for this session and
  // leave the queue empty for the next connection's calls.
  failed_ = true;
  error_ = ERR_peek_error();
  ERR_clear_error();
  return Status::error;
}

Session::Status Session::run_handshake() {
  ensure_no_errors();
  const int result = SSL_do_handshake(ssl_);
  if (result == 1) {
    handshake_done_ = true;
    return Status::done;
  }
  // A close_notify in the middle of a handshake ends it as a failure.
  const Status status = classify(ssl_, result);
  return status == Status::want_io ? status : fail();
}

Session::Status Session::handshake(Wire& wire) {
  assert(started());
  if (failed_) return Status::error;
  if (handshake_done_) return Status::done;
  const OnWire on(ssl_, wire);
  return run_handshake();
}

Session::Status Session::read(Wire& wire, char* out, std::size_t cap, std::size_t& n) {
  assert(started());
  assert(cap > 0);
  n = 0;
  if (failed_) return Status::error;
  const OnWire on(ssl_, wire);
  if (!handshake_done_) {
    const Status status = run_handshake();
    if (status != Status::done) return status;
  }
  // Nothing received and nothing held (and no close_notify, which keeps
  // reading as closed): SSL_read would say want_io, at the cost of a call
  // through the record layer, once a receive at least.
  if (wire.in_len == 0 && !SSL_has_pending(ssl_) && (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) == 0) {
    return Status::want_io;
  }
  ensure_no_errors();
  // TLS 1.3 session tickets and key updates are handled in here too: the
  // tickets reach ClientContext's callback, a key update queues its answer
  // (want_io when `wire.out` has no room for it).
  const int result = SSL_read_ex(ssl_, out, cap, &n);
  if (result == 1) {
    assert(n > 0);
    return Status::done;
  }
  n = 0;
  const Status status = classify(ssl_, result);
  return status == Status::error ? fail() : status;
}

std::size_t Session::write(Wire& wire, const char* data, std::size_t len) {
  assert(started());
  if (failed_) return 0;
  assert(handshake_done_);
  assert(!close_queued_);
  const OnWire on(ssl_, wire);
  std::size_t taken = 0;
  while (!failed_ && taken < len) {
    const std::size_t room = wire.out_room();
    if (room <= write_reserve_bytes) break;
    const std::size_t chunk = std::min({len - taken, record_plaintext_bytes_max, room - write_reserve_bytes});
    ensure_no_errors();
    std::size_t written = 0;
    const int result = SSL_write_ex(ssl_, data + taken, chunk, &written);
    if (result != 1) {
      // With the room checked `wire.out` cannot be full, and nothing else
      // (no renegotiation) makes a write wait; stop without taking more
      // either way. A failure is kept for failed().
      if (classify(ssl_, result) != Status::want_io) fail();
      break;
    }
    assert(written == chunk);
    taken += written;
  }
  return taken;
}

bool Session::close(Wire& wire) {
  assert(started());
  if (!handshake_done_ || failed_ || close_queued_) return true;
  // Queue the alert only with room for its record, so that it never stays
  // half-written inside OpenSSL.
  if (wire.out_room() < write_reserve_bytes) return false;
  const OnWire on(ssl_, wire);
  ERR_clear_error();
  SSL_shutdown(ssl_);  // 0: ours is queued, the peer's not seen yet; 1: both; either way we are done
  ERR_clear_error();
  close_queued_ = true;
  return true;
}

namespace {

std::string verify_failure(SSL* ssl) {
  const long result = SSL_get_verify_result(ssl);
  std::string text = "certificate verify failed: ";
  text += X509_verify_cert_error_string(result);
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (result == X509_V_ERR_HOSTNAME_MISMATCH) {
    if (const char* host = X509_VERIFY_PARAM_get0_host(param, 0)) {
      text += " (the certificate is not for ";
      text += host;
      text += ')';
    }
  } else if (result == X509_V_ERR_IP_ADDRESS_MISMATCH) {
    if (char* ip = X509_VERIFY_PARAM_get1_ip_asc(param)) {
      text += " (the certificate is not for ";
      text += ip;
      text += ')';
      OPENSSL_free(ip);
    }
  }
  return text;
}

}  // namespace

std::string Session::error_reason() const {
  if (!failed_) return {};
  if (error_ == 0) {
    if (ssl_ != nullptr && (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) != 0) {
      return "the peer closed the connection (close_notify) during the handshake";
    }
    return "TLS failed without a reason from OpenSSL";
  }
  const int reason = ERR_GET_REASON(error_);
  if (ERR_GET_LIB(error_) == ERR_LIB_SSL) {
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && SSL_get_verify_result(ssl_) != X509_V_OK) {
      return verify_failure(ssl_);
    }
    // A fatal alert from the peer is recorded as its own reason code.
    if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) {
      return std::string("the peer sent the alert: ") + SSL_alert_desc_string_long(reason - SSL_AD_REASON_OFFSET);
    }
  }
  if (const char* text = ERR_reason_error_string(error_)) return text;
  char buffer[256];
  ERR_error_string_n(error_, buffer, sizeof buffer);
  return buffer;
}

const char* failure_name(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::plain_http: return "plain_http";
    case Failure::no_protocol: return "no_protocol";
    case Failure::version: return "version";
    case Failure::no_shared_cipher: return "no_shared_cipher";
    case Failure::peer_alert: return "peer_alert";
    case Failure::other:
    case Failure::count_: break;
  }
  return "other";
}

Failure Session::failure() const {
  if (!failed_) return Failure::none;
  if (ERR_GET_LIB(error_) != ERR_LIB_SSL) return Failure::other;
  const int reason = ERR_GET_REASON(error_);
  if (reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256) return Failure::peer_alert;
  switch (reason) {
    case SSL_R_HTTP_REQUEST:
    case SSL_R_HTTPS_PROXY_REQUEST: return Failure::plain_http;
    case SSL_R_NO_APPLICATION_PROTOCOL: return Failure::no_protocol;
    case SSL_R_UNSUPPORTED_PROTOCOL:
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_VERSION_TOO_LOW:
    case SSL_R_VERSION_TOO_HIGH: return Failure::version;
    case SSL_R_NO_SHARED_CIPHER: return Failure::no_shared_cipher;
    default: return Failure::other;
  }
}

const char* Session::protocol() const {
  assert(started());
  return SSL_get_version(ssl_);
}

const char* Session::cipher() const {
  assert(started());
  return SSL_get_cipher_name(ssl_);
}

bool Session::resumed() const {
  assert(started());
  return SSL_session_reused(ssl_) == 1;
}

std::string_view Session::alpn() const {
  assert(started());
  const unsigned char* data = nullptr;
  unsigned int len = 0;
  SSL_get0_alpn_selected(ssl_, &data, &len);
  if (data == nullptr) return {};
  return {reinterpret_cast<const char*>(data), len};
}

std::string_view Session::server_name() const {
  assert(started());
  const char* name = SSL_get_servername(ssl_, TLSEXT_NAMETYPE_host_name);
  return name != nullptr ? std::string_view(name) : std::string_view();
}

}  // namespace ringhttp::tls
