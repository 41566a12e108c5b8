#pragma once
// One connection's TLS as a pure transform: ciphertext in, plaintext out,
// and plaintext in, ciphertext out. No socket and no ring: the caller (the
// engine's user, on either backend, server or client) moves the bytes.
//
// The session owns no network buffer. Each call is given a Wire: the
// received ciphertext OpenSSL may read (straight from the receive buffer
// it arrived in) and the room it may write its ciphertext to (lent by the
// caller, which sends it). OpenSSL sees the Wire through a BIO of our own.
// A record split across two receives is kept inside OpenSSL (its read
// buffer, released while empty with SSL_MODE_RELEASE_BUFFERS), so the
// caller never holds ciphertext for it: after a call that returns want_io,
// `wire.in` is empty or the call stopped for room in `wire.out`.
//
// The caller's loop:
//   - received bytes: read() with `wire.in` over them until it stops
//     returning done (it drives the handshake first; handshake_done() says
//     when that is over); a done read leaves the rest of `wire.in` for the
//     next call;
//   - plaintext to send: write() (it takes what the room in `wire.out`
//     allows, a record at a time), then send `wire.out`;
//   - after every call, `wire.out` may have grown: handshake messages, a
//     session ticket, a reply to the peer's key update, an alert, a
//     close_notify. Send it. A call that stopped for room (want_io with
//     `wire.in` left) is made again once the room is back.
//
// A Session is started by ClientContext::start or ServerContext::start and
// may be started again for the next connection of its slot. Its state
// lives in OpenSSL's objects, so the object itself stays small for the
// connection table.

#include <openssl/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::tls {

// The plaintext of one record (RFC 8446 section 5.1).
inline constexpr std::size_t record_plaintext_bytes_max = 16 * 1024;
// One record on the wire at most: a 5-byte header and a body of up to
// 2^14 + 2048 bytes (RFC 5246 section 6.2.3; TLS 1.3 allows only 2^14 + 256).
inline constexpr std::size_t record_bytes_max = 5 + record_plaintext_bytes_max + 2048;
// What a record we send adds to its plaintext at most: header, then
// TLS 1.2's CBC suites' explicit IV, MAC and padding, as OpenSSL counts
// them (SSL3_RT_MAX_ENCRYPTED_OVERHEAD); compression is off.
inline constexpr std::size_t record_overhead_bytes_max = 5 + 256 + 64;
// write() keeps room for this much besides the plaintext: the overhead of
// the record it writes and of a small record OpenSSL may put before it (a
// KeyUpdate answering the peer's).
inline constexpr std::size_t write_reserve_bytes = 2 * record_overhead_bytes_max;
// Room in `wire.out` that holds one full record and what write() reserves.
inline constexpr std::size_t wire_out_record_bytes = record_plaintext_bytes_max + write_reserve_bytes;

// The network side of one call. `in` is advanced past what OpenSSL read;
// `out_len` grows by what it wrote, never past `out_cap`.
struct Wire {
  const char* in = nullptr;
  std::size_t in_len = 0;
  char* out = nullptr;
  std::size_t out_len = 0;
  std::size_t out_cap = 0;

  std::size_t out_room() const { return out_cap - out_len; }
};

// Why a session failed, in classes a server counts.
enum class Failure : std::uint8_t {
  none,
  plain_http,        // a plain HTTP request where a ClientHello belonged
  no_protocol,       // ALPN: the client offered no protocol this side speaks
  version,           // no TLS version both sides accept
  no_shared_cipher,  // no cipher suite both sides accept
  peer_alert,        // the peer sent a fatal alert
  other,             // malformed records or messages, and the rest
  count_,
};
inline constexpr std::size_t failure_kinds = std::size_t(Failure::count_);
// "plain_http", ...: the label /metrics gives each.
const char* failure_name(Failure failure);

class Session {
 public:
  enum class Status : std::uint8_t {
    done,     // handshake(): complete; read(): `n` bytes of plaintext out
    want_io,  // more ciphertext is needed in `wire.in`, or room in `wire.out`: then call again
    closed,   // read(): the peer's close_notify; nothing more will come
    error,    // the connection is over; error_reason() says why
  };

  Session() = default;
  ~Session() { reset(); }
  Session(Session&& other) noexcept;
  Session& operator=(Session&& other) noexcept;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Frees the connection's OpenSSL objects; the session is empty again.
  // A connection that ended without a close_notify (the peer left, the run
  // ended) leaves its TLS session resumable, as TLS 1.1 and later allow.
  void reset();
  bool started() const { return ssl_ != nullptr; }

  // Drives the handshake: done, want_io or error. After done, call read():
  // the same ciphertext may hold application data.
  Status handshake(Wire& wire);
  bool handshake_done() const { return handshake_done_; }

  // Decrypts into `out` (cap > 0): done with n > 0, want_io (n = 0) when
  // `wire.in` holds no whole record more or `wire.out` has no room for what
  // OpenSSL must write (a ticket, a key update's answer), closed on the
  // peer's close_notify, error otherwise. Before the handshake is done it
  // drives the handshake first, as handshake() does, and goes on to read
  // when it completes. With `cap` of record_plaintext_bytes_max at least,
  // a done read returns a whole record, so OpenSSL keeps no plaintext.
  Status read(Wire& wire, char* out, std::size_t cap, std::size_t& n);

  // Encrypts plaintext after the handshake, a record at a time while
  // `wire.out` has room for one (write_reserve_bytes besides its
  // plaintext). Returns how much was taken: it may be less than `len`, or
  // 0: send `wire.out` and write the rest then. Takes nothing once the
  // session has failed (see failed()).
  std::size_t write(Wire& wire, const char* data, std::size_t len);

  // Queues a close_notify once the handshake is done; after it, write()
  // must not be called. False when `wire.out` has no room for it now: send
  // and call it again. True (and nothing queued) before the handshake is
  // done or after a failure, when there is nothing to close politely.
  bool close(Wire& wire);

  bool failed() const { return failed_; }
  // Why the session failed, in words: the certificate check (with the host
  // on a name mismatch), the alert the peer sent, or OpenSSL's reason.
  // Empty when it has not failed.
  std::string error_reason() const;
  // OpenSSL's first error at the failure (ERR_GET_REASON and ERR_GET_LIB
  // take it apart); 0 when it has not failed or OpenSSL gave none.
  unsigned long error_code() const { return error_; }
  Failure failure() const;
  bool close_queued() const { return close_queued_; }

  // After the handshake.
  const char* protocol() const;   // "TLSv1.3"
  const char* cipher() const;     // "TLS_AES_256_GCM_SHA384"
  bool resumed() const;           // an earlier session was resumed
  std::string_view alpn() const;  // the protocol the server selected; empty if none
  // Server side: the host name the client sent as SNI; empty if none.
  std::string_view server_name() const;

 private:
  friend class ClientContext;
  friend class ServerContext;

  // Replaces what the session held with a new SSL over a new wire BIO.
  // False when OpenSSL runs out of memory.
  bool begin(SSL_CTX* ctx);
  Status fail();
  Status run_handshake();

  SSL* ssl_ = nullptr;       // owns its BIO, which reads and writes the Wire of the call
  unsigned long error_ = 0;  // OpenSSL's first error at the failure; 0 if it gave none
  bool failed_ = false;
  bool handshake_done_ = false;
  bool close_queued_ = false;
};

}  // namespace ringhttp::tls
