#pragma once
// What every TLS connection of one side shares: an OpenSSL SSL_CTX with its
// settings, certificates and (client side) the session kept for
// resumption. A context starts a Session for each connection.
//
// Both sides: TLS 1.2 at least, 1.3 allowed; no compression (CRIME);
// no renegotiation (nothing needs it, and a peer could make us pay for a
// second handshake on a connection at any time).
//
// A client context is one thread's: it is not locked, and it changes on
// every connection (the session it keeps); the client has one per worker.
// The server's context does not change after start-up and is shared by
// its shards (see ServerContext).

#include <openssl/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

// <openssl/types.h> leaves this one to <openssl/ssl.h>; the same typedef
// again is allowed and spares every includer that header.
typedef struct ssl_session_st SSL_SESSION;

namespace ringhttp::tls {

class Session;

struct ClientConfig {
  bool verify = true;             // the server's chain and host name; false is curl's -k
  std::string ca_file;            // PEM; empty: the system store (SSL_CTX_set_default_verify_paths)
  std::string alpn = "http/1.1";  // protocols to offer, comma-separated; empty: none offered
  bool resume = true;             // offer the latest session the server gave
  // The ciphers offered, in OpenSSL's syntax, in order of preference; empty:
  // OpenSSL's defaults. TLS 1.2's list (SSL_CTX_set_cipher_list), TLS 1.3's
  // suites (SSL_CTX_set_ciphersuites): curl's --ciphers and --tls13-ciphers.
  std::string ciphers;
  std::string tls13_ciphers;
};

// What is wrong with `config`'s cipher lists (no cipher OpenSSL knows, or a
// TLS 1.3 suite it does not), or "" when both apply.
std::string cipher_lists_error(const ClientConfig& config);

class ClientContext {
 public:
  // Nullptr and `error` set when the settings cannot be applied: the CA
  // file does not load, an ALPN name is empty or longer than 255 bytes, a
  // cipher list has no cipher OpenSSL knows.
  static std::unique_ptr<ClientContext> make(const ClientConfig& config, std::string& error);
  ~ClientContext();
  ClientContext(const ClientContext&) = delete;
  ClientContext& operator=(const ClientContext&) = delete;

  // Starts `session` as the client of a new connection to `host` (a name,
  // or an IP literal; an IPv6 one may be bracketed), dropping what the
  // session held. The name goes out as SNI unless it is an IP literal, and
  // is what the certificate must match when verify is on. Offers the kept
  // session when it was made for the same host. False and `error` set on a
  // host OpenSSL refuses (empty with verify on, over 255 bytes) or when
  // OpenSSL runs out of memory; `session` is then empty.
  bool start(Session& session, std::string_view host, std::string& error);

  // Whether a session from the server is kept for the next start. TLS 1.3
  // servers send theirs after the handshake, so it arrives during a read.
  bool has_resumable_session() const { return kept_ != nullptr; }

 private:
  explicit ClientContext(SSL_CTX* ctx) : ctx_(ctx) {}
  static int on_new_session(SSL* ssl, SSL_SESSION* session);

  SSL_CTX* ctx_;
  SSL_SESSION* kept_ = nullptr;  // one reference, ours
  // The host `kept_` is for, and a count that changes with it: each SSL
  // carries the count it started under, so a session arriving late from a
  // connection to an earlier host is not kept for the new one (it was
  // verified against the other name).
  std::string host_;
  std::uintptr_t host_epoch_ = 0;
  bool verify_ = true;
  bool resume_ = true;
};

struct ServerConfig {
  std::string certificate_file;  // PEM: the server's certificate first, then its chain
  std::string key_file;          // PEM: the private key of the first certificate
  bool tickets = true;           // resumption by stateless tickets
  std::string ciphers;           // TLS 1.2's cipher list, OpenSSL's syntax; empty: OpenSSL's default
  bool tls13_only = false;       // refuse TLS 1.2
};

// Selects "http/1.1" when the client offers ALPN; a client that offers
// only other protocols (such as "h2") is refused with the
// no_application_protocol alert (RFC 7301 section 3.2), since it would
// speak a protocol this server does not. A client that offers no ALPN
// gets HTTP/1.1 without it. Session tickets are stateless (OpenSSL's
// default), so resumption keeps no state per client; their key is made
// with the context, at start-up. One context serves every shard of a
// server: OpenSSL makes a connection from a shared context safely (a
// reference count per connection, not per request), and a ticket from one
// shard resumes on any other.
class ServerContext {
 public:
  // Nullptr and `error` set when a file does not load or the key does not
  // match the certificate.
  static std::unique_ptr<ServerContext> make(const ServerConfig& config, std::string& error);
  ~ServerContext();
  ServerContext(const ServerContext&) = delete;
  ServerContext& operator=(const ServerContext&) = delete;

  // Starts `session` as the server of a new connection, dropping what it
  // held. False and `error` set only when OpenSSL runs out of memory.
  bool start(Session& session, std::string& error);

 private:
  explicit ServerContext(SSL_CTX* ctx) : ctx_(ctx) {}

  SSL_CTX* ctx_;
};

}  // namespace ringhttp::tls
