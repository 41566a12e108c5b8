#include "core/tls/context.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <cassert>
#include <cstring>

#include "core/tls/session.hpp"

namespace ringhttp::tls {

namespace {

// The longest host name OpenSSL sends as SNI (TLSEXT_MAXLEN_host_name);
// DNS names are shorter still (253 bytes).
constexpr std::size_t host_bytes_max = 255;
// An ALPN protocol name is 1 to 255 bytes (RFC 7301 section 3.1).
constexpr std::size_t alpn_name_bytes_max = 255;

// OpenSSL's first reason for what just failed, and an empty queue after.
std::string openssl_reason() {
  const unsigned long code = ERR_peek_error();
  ERR_clear_error();
  if (code == 0) return "no reason given by OpenSSL";
  if (const char* text = ERR_reason_error_string(code)) return text;
  char buffer[256];
  ERR_error_string_n(code, buffer, sizeof buffer);
  return buffer;
}

// What both sides use: TLS 1.2 at least, no compression, no renegotiation.
bool apply_common(SSL_CTX* ctx, std::string& error) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
    error = "cannot require TLS 1.2 or later: " + openssl_reason();
    return false;
  }
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  return true;
}

// "http/1.1,h2" as ALPN's wire format: each name after its length byte.
bool alpn_wire(std::string_view list, std::string& wire) {
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view name = list.substr(0, comma);
    if (name.empty() || name.size() > alpn_name_bytes_max) return false;
    wire += char(name.size());
    wire += name;
    if (comma == std::string_view::npos) return true;
    list.remove_prefix(comma + 1);
  }
}

bool is_ip_literal(const char* host) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, host, address) == 1 || inet_pton(AF_INET6, host, address) == 1;
}

// The server's ALPN choice: HTTP/1.1 or nothing (see ServerContext).
int select_alpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in, unsigned int in_len,
                void*) {
  constexpr std::string_view http11 = "http/1.1";
  // OpenSSL has checked the list's framing; the bounds are checked again
  // rather than trusted.
  for (unsigned int i = 0; i < in_len;) {
    const unsigned int len = in[i];
    if (len > in_len - i - 1) break;
    if (len == http11.size() && std::memcmp(in + i + 1, http11.data(), len) == 0) {
      *out = in + i + 1;
      *out_len = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;  // OpenSSL sends no_application_protocol
}

}  // namespace

namespace {

// The client's cipher lists on `ctx`: false and `error` set when one does
// not apply.
bool apply_ciphers(SSL_CTX* ctx, const ClientConfig& config, std::string& error) {
  if (!config.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, config.ciphers.c_str()) != 1) {
    error = "the TLS 1.2 cipher list \"" + config.ciphers + "\" names no cipher OpenSSL has: " + openssl_reason();
    return false;
  }
  if (!config.tls13_ciphers.empty() && SSL_CTX_set_ciphersuites(ctx, config.tls13_ciphers.c_str()) != 1) {
    error = "the TLS 1.3 cipher suites \"" + config.tls13_ciphers +
            "\" are not OpenSSL's names (TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, "
            "TLS_CHACHA20_POLY1305_SHA256...): " + openssl_reason();
    return false;
  }
  return true;
}

}  // namespace

std::string cipher_lists_error(const ClientConfig& config) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return "cannot make a TLS client context: " + openssl_reason();
  std::string error;
  (void)apply_ciphers(ctx, config, error);
  SSL_CTX_free(ctx);
  return error;
}

std::unique_ptr<ClientContext> ClientContext::make(const ClientConfig& config, std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) {
    error = "cannot make a TLS client context: " + openssl_reason();
    return nullptr;
  }
  std::unique_ptr<ClientContext> self(new ClientContext(ctx));
  self->verify_ = config.verify;
  self->resume_ = config.resume;
  if (!apply_common(ctx, error)) return nullptr;
  if (!apply_ciphers(ctx, config, error)) return nullptr;

  SSL_CTX_set_verify(ctx, config.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  if (!config.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, config.ca_file.c_str(), nullptr) != 1) {
      error = "cannot load the CA file " + config.ca_file + ": " + openssl_reason();
      return nullptr;
    }
  } else if (config.verify && SSL_CTX_set_default_verify_paths(ctx) != 1) {
    error = "cannot load the system's CA certificates: " + openssl_reason();
    return nullptr;
  }

  if (!config.alpn.empty()) {
    std::string wire;
    if (!alpn_wire(config.alpn, wire)) {
      error = "bad ALPN list \"" + config.alpn + "\": each protocol name is 1 to 255 bytes";
      return nullptr;
    }
    // Note the inverted result: 0 is success here.
    if (SSL_CTX_set_alpn_protos(ctx, reinterpret_cast<const unsigned char*>(wire.data()), unsigned(wire.size())) != 0) {
      error = "cannot set ALPN: " + openssl_reason();
      return nullptr;
    }
  }

  if (config.resume) {
    // Sessions go to our callback only; OpenSSL's own cache would keep
    // every one of them.
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(ctx, &ClientContext::on_new_session);
    SSL_CTX_set_app_data(ctx, self.get());
  } else {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  }
  return self;
}

ClientContext::~ClientContext() {
  // An SSL keeps its SSL_CTX alive past this, so a session still started
  // must not call back into this object.
  SSL_CTX_sess_set_new_cb(ctx_, nullptr);
  SSL_CTX_set_app_data(ctx_, nullptr);
  SSL_SESSION_free(kept_);
  SSL_CTX_free(ctx_);
}

int ClientContext::on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* self = static_cast<ClientContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  if (self == nullptr) return 0;
  const auto epoch = reinterpret_cast<std::uintptr_t>(SSL_get_app_data(ssl));
  if (epoch != self->host_epoch_ || SSL_SESSION_is_resumable(session) != 1) return 0;
  SSL_SESSION_free(self->kept_);
  self->kept_ = session;
  return 1;  // the reference OpenSSL handed over is ours now
}

bool ClientContext::start(Session& session, std::string_view host, std::string& error) {
  session.reset();
  // An IPv6 literal may come bracketed, as in a URL.
  std::string_view bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
  if (bare.size() > host_bytes_max || bare.find('\0') != std::string_view::npos) {
    error = "the host name is longer than 255 bytes or holds a NUL";
    return false;
  }
  if (verify_ && bare.empty()) {
    error = "no host name to verify the certificate against";
    return false;
  }
  char name[host_bytes_max + 1];
  bare.copy(name, bare.size());
  name[bare.size()] = '\0';
  const bool ip = is_ip_literal(name);

  if (host != host_) {
    SSL_SESSION_free(kept_);
    kept_ = nullptr;
    host_.assign(host);
    ++host_epoch_;
  }
  // A connection that resumed it and then failed makes OpenSSL mark it
  // spent; the next full handshake brings a new one.
  if (kept_ != nullptr && SSL_SESSION_is_resumable(kept_) != 1) {
    SSL_SESSION_free(kept_);
    kept_ = nullptr;
  }
  if (!session.begin(ctx_)) {
    error = "out of memory for a TLS connection";
    return false;
  }
  SSL* ssl = session.ssl_;
  SSL_set_connect_state(ssl);
  SSL_set_app_data(ssl, reinterpret_cast<void*>(host_epoch_));
  bool ok = true;
  if (!ip && !bare.empty()) ok = SSL_set_tlsext_host_name(ssl, name) == 1;
  if (ok && verify_) {
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    // OpenSSL 3.0 has no SSL_set1_ip_asc; it sets the same parameter.
    ok = (ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) : SSL_set1_host(ssl, name)) == 1;
  }
  if (ok && resume_ && kept_ != nullptr) ok = SSL_set_session(ssl, kept_) == 1;
  if (!ok) {
    error = "cannot use the host " + std::string(host) + " for TLS: " + openssl_reason();
    session.reset();
    return false;
  }
  return true;
}

std::unique_ptr<ServerContext> ServerContext::make(const ServerConfig& config, std::string& error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    error = "cannot make a TLS server context: " + openssl_reason();
    return nullptr;
  }
  std::unique_ptr<ServerContext> self(new ServerContext(ctx));
  if (!apply_common(ctx, error)) return nullptr;
  if (SSL_CTX_use_certificate_chain_file(ctx, config.certificate_file.c_str()) != 1) {
    error = "cannot load the certificate chain " + config.certificate_file + ": " + openssl_reason();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, config.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    // OpenSSL checks the pair as it loads the key.
    const bool mismatch = ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH;
    error = mismatch ? "the key " + config.key_file + " does not match the certificate " + config.certificate_file
                     : "cannot load the private key " + config.key_file + ": " + openssl_reason();
    ERR_clear_error();
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    error = "the key " + config.key_file + " does not match the certificate " + config.certificate_file + ": " +
            openssl_reason();
    return nullptr;
  }
  if (config.tls13_only && SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1) {
    error = "cannot require TLS 1.3: " + openssl_reason();
    return nullptr;
  }
  if (!config.ciphers.empty() && SSL_CTX_set_cipher_list(ctx, config.ciphers.c_str()) != 1) {
    error = "bad cipher list \"" + config.ciphers + "\": " + openssl_reason();
    return nullptr;
  }
  if (!config.tickets) SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_alpn_select_cb(ctx, &select_alpn, nullptr);
  // Resumption rides on stateless tickets alone: a session-ID cache would
  // hold state per client, and locks, for clients of TLS 1.2 without
  // tickets only.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  return self;
}

ServerContext::~ServerContext() { SSL_CTX_free(ctx_); }

bool ServerContext::start(Session& session, std::string& error) {
  if (!session.begin(ctx_)) {
    error = "out of memory for a TLS connection";
    return false;
  }
  SSL_set_accept_state(session.ssl_);
  return true;
}

}  // namespace ringhttp::tls
