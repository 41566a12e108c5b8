#include "core/tls/session.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cassert>
#include <climits>
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
static_assert(input_bytes <= INT_MAX && output_bytes <= INT_MAX, "BIO lengths are ints");
static_assert(sizeof(Session) <= 4 * sizeof(void*), "a connection table holds one per slot");

Session::Session(Session&& other) noexcept
    : ssl_(std::exchange(other.ssl_, nullptr)),
      network_(std::exchange(other.network_, nullptr)),
      error_(std::exchange(other.error_, 0)),
      failed_(std::exchange(other.failed_, false)),
      handshake_done_(std::exchange(other.handshake_done_, false)),
      close_queued_(std::exchange(other.close_queued_, false)) {}

Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    reset();
    std::swap(ssl_, other.ssl_);
    std::swap(network_, other.network_);
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
  SSL_free(ssl_);  // and the pair's SSL end, which it owns; that unpairs ours
  BIO_free(network_);
  ssl_ = nullptr;
  network_ = nullptr;
  error_ = 0;
  failed_ = false;
  handshake_done_ = false;
  close_queued_ = false;
}

bool Session::begin(SSL_CTX* ctx) {
  assert(ctx != nullptr);
  reset();
  SSL* ssl = SSL_new(ctx);
  BIO* inner = nullptr;
  BIO* network = nullptr;
  // The pair's buffers are allocated here, once: `inner` holds what the
  // SSL writes (the output side), `network` what we put (the input side).
  if (ssl == nullptr || BIO_new_bio_pair(&inner, output_bytes, &network, input_bytes) != 1) {
    SSL_free(ssl);
    ERR_clear_error();
    return false;
  }
  SSL_set_bio(ssl, inner, inner);  // one reference, for both directions
  // A write may return after each record instead of insisting on the
  // whole length, and a repeated one may come from a moved buffer.
  // write() also encrypts one record at a time into room it has checked,
  // so a record never stays half-written inside OpenSSL.
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  ssl_ = ssl;
  network_ = network;
  return true;
}

std::size_t Session::put_ciphertext(const char* data, std::size_t len) {
  assert(started());
  const std::size_t n = std::min(len, BIO_ctrl_get_write_guarantee(network_));
  if (n == 0) return 0;
  const int written = BIO_write(network_, data, int(n));
  assert(written == int(n));
  (void)written;
  return n;
}

Session::Status Session::fail() {
  // The queue is the thread's: keep the first reason for this session and
  // leave the queue empty for the next connection's calls.
  failed_ = true;
  error_ = ERR_peek_error();
  ERR_clear_error();
  return Status::error;
}

namespace {

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

Session::Status Session::handshake() {
  assert(started());
  if (failed_) return Status::error;
  if (handshake_done_) return Status::done;
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

Session::Status Session::read(char* out, std::size_t cap, std::size_t& n) {
  assert(started());
  assert(cap > 0);
  n = 0;
  if (failed_) return Status::error;
  assert(handshake_done_);
  // Nothing received and nothing held (and no close_notify, which keeps
  // reading as closed): SSL_read would say want_io, at the cost of a call
  // through the record layer, once a receive at least.
  if (!SSL_has_pending(ssl_) && BIO_ctrl_pending(SSL_get_rbio(ssl_)) == 0 &&
      (SSL_get_shutdown(ssl_) & SSL_RECEIVED_SHUTDOWN) == 0) {
    return Status::want_io;
  }
  ensure_no_errors();
  // TLS 1.3 session tickets and key updates are handled in here too: the
  // tickets reach ClientContext's callback, a key update queues its answer
  // (want_io when the output side has no room for it).
  const int result = SSL_read_ex(ssl_, out, cap, &n);
  if (result == 1) {
    assert(n > 0);
    return Status::done;
  }
  n = 0;
  const Status status = classify(ssl_, result);
  return status == Status::error ? fail() : status;
}

std::size_t Session::write(const char* data, std::size_t len) {
  assert(started());
  if (failed_) return 0;
  assert(handshake_done_);
  assert(!close_queued_);
  std::size_t taken = 0;
  while (!failed_ && taken < len) {
    const std::size_t room = BIO_ctrl_get_write_guarantee(SSL_get_wbio(ssl_));
    if (room <= write_reserve_bytes) break;
    const std::size_t chunk = std::min({len - taken, record_plaintext_bytes_max, room - write_reserve_bytes});
    ensure_no_errors();
    std::size_t written = 0;
    const int result = SSL_write_ex(ssl_, data + taken, chunk, &written);
    if (result != 1) {
      // With the room checked the output side cannot be full, and nothing
      // else (no renegotiation) makes a write wait; stop without taking
      // more either way. A failure is kept for failed().
      if (classify(ssl_, result) != Status::want_io) fail();
      break;
    }
    assert(written == chunk);
    taken += written;
  }
  return taken;
}

std::string_view Session::pending_ciphertext() {
  assert(started());
  char* data = nullptr;
  const int n = BIO_nread0(network_, &data);  // a peek: nothing moves until consume_ciphertext
  if (n <= 0) return {};
  return {data, std::size_t(n)};
}

void Session::consume_ciphertext(std::size_t n) {
  assert(started());
  assert(n <= pending_ciphertext().size());
  if (n == 0) return;
  char* data = nullptr;
  const int consumed = BIO_nread(network_, &data, int(n));
  assert(consumed == int(n));
  (void)consumed;
}

bool Session::close() {
  assert(started());
  if (!handshake_done_ || failed_ || close_queued_) return true;
  // Queue the alert only with room for its record, so that it never stays
  // half-written inside OpenSSL.
  if (BIO_ctrl_get_write_guarantee(SSL_get_wbio(ssl_)) < write_reserve_bytes) return false;
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
