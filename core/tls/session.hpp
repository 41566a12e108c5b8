#pragma once
// One connection's TLS as a pure transform: ciphertext in, plaintext out,
// and plaintext in, ciphertext out. No socket and no ring: the caller (the
// engine, on either backend, for server or client) moves the bytes.
//
// OpenSSL's network side is a BIO pair of fixed sizes, made when the
// session starts, so nothing is allocated per operation after the
// handshake. The caller's loop:
//   - received bytes: put_ciphertext(), then handshake() until done, then
//     read() until want_io (one receive may hold many records); bytes
//     put_ciphertext() did not take are put again after those reads;
//   - plaintext to send: write() (it may take part of it), then send
//     pending_ciphertext() in place and consume_ciphertext() once the send
//     has completed; ask again, since the view may be only the first part.
// After every call, pending_ciphertext() may hold bytes to send: handshake
// messages, a reply to the peer's key update, an alert, a close_notify.
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

// Received ciphertext the session holds until read() takes it: one
// receive of 16 KiB (the client's receive buffers) and one whole record of
// the largest size besides, so that a receive put before the previous one
// was read out (a record split across the two) still fits whole.
inline constexpr std::size_t input_bytes = 16 * 1024 + record_bytes_max;
// Ciphertext waiting to be sent: two full records, so that one can be in a
// send while write() encrypts the next.
inline constexpr std::size_t output_bytes = 2 * (record_plaintext_bytes_max + write_reserve_bytes);
static_assert(input_bytes >= 2 * record_plaintext_bytes_max + 2048, "a receive plus a record in progress");
static_assert(output_bytes >= record_plaintext_bytes_max + write_reserve_bytes, "one full record fits");

class Session {
 public:
  enum class Status : std::uint8_t {
    done,     // handshake(): complete; read(): `n` bytes of plaintext out
    want_io,  // send what pending_ciphertext() holds and/or put more ciphertext, then call again
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

  // Copies received ciphertext in. Returns how much was taken: less than
  // `len` only when the input side is full; the caller keeps the rest and
  // puts it after read() has made room.
  std::size_t put_ciphertext(const char* data, std::size_t len);

  // Drives the handshake: done, want_io or error. After done, call read():
  // the same ciphertext may hold application data.
  Status handshake();

  // Decrypts into `out` (cap > 0): done with n > 0, want_io (n = 0) when
  // more ciphertext is needed or what pending_ciphertext() holds must be
  // sent first, closed on the peer's close_notify, error otherwise. Call
  // it until it stops returning done to drain what was put.
  Status read(char* out, std::size_t cap, std::size_t& n);

  // Encrypts plaintext after the handshake. Returns how much was taken: it
  // writes only what fits the output side, so it may take less than `len`
  // (or 0): send the pending ciphertext and write the rest then. Takes
  // nothing once the session has failed (see failed()).
  std::size_t write(const char* data, std::size_t len);

  // Contiguous ciphertext ready to send, read in place from the output
  // side: valid and unchanged until consume_ciphertext(). The output side
  // is a ring, so this may be only the first part of what is pending.
  std::string_view pending_ciphertext();
  // `n` bytes of the view were sent; at most its size.
  void consume_ciphertext(std::size_t n);

  // Queues a close_notify once the handshake is done; after it, write()
  // must not be called. False when it could not be queued now because the
  // output side is full: send the pending ciphertext and call it again.
  // True (and nothing queued) before the handshake is done or after a
  // failure, when there is nothing to close politely.
  bool close();

  bool failed() const { return failed_; }
  // Why the session failed, in words: the certificate check (with the host
  // on a name mismatch), the alert the peer sent, or OpenSSL's reason.
  // Empty when it has not failed.
  std::string error_reason() const;

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

  // Replaces what the session held with a new SSL over a new BIO pair.
  // False when OpenSSL runs out of memory.
  bool begin(SSL_CTX* ctx);
  Status fail();

  SSL* ssl_ = nullptr;
  BIO* network_ = nullptr;   // our end of the pair; the SSL owns the other
  unsigned long error_ = 0;  // OpenSSL's first error at the failure; 0 if it gave none
  bool failed_ = false;
  bool handshake_done_ = false;
  bool close_queued_ = false;
};

}  // namespace ringhttp::tls
