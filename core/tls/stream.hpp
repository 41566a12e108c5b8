#pragma once
// One connection's TLS between the engine and a session, the same in the
// server and the client. session.hpp is the transform; this is how a
// connection drives it:
//   - received ciphertext is read in place, from the buffer it arrived in,
//     and each record's plaintext goes to the session (read_records);
//   - the session's plaintext is encrypted into an Outbox, an area its
//     owner lends, a record at a time while there is room (encrypt);
//   - the Outbox leaves in one send at a time (begin_send). What OpenSSL
//     writes while that send is in flight (a ticket, a key update's
//     answer, an alert) is kept behind it and goes next (sent).
// Nothing here allocates, and nothing sees a socket.

#include <sys/uio.h>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/tls/session.hpp"

struct msghdr;

namespace ringhttp::tls {

// The ciphertext a connection sends, in an area lent by its owner (the
// server's output block, the client's slot). [0, len) is written; a send
// in flight carries [0, sending), and what follows was written since.
struct Outbox {
  char* data = nullptr;
  std::uint32_t cap = 0;
  std::uint32_t len = 0;
  std::uint32_t sending = 0;

  void lend(char* area, std::uint32_t area_bytes) {
    assert(len == 0 && sending == 0);
    data = area;
    cap = area_bytes;
  }
  bool empty() const { return len == 0; }
  bool in_flight() const { return sending > 0; }
  void clear() { len = sending = 0; }

  // The network side of one Session call: `in` to read, this area to write.
  Wire wire(const char* in = nullptr, std::size_t in_len = 0) const { return Wire{in, in_len, data, len, cap}; }
  void wrote(const Wire& wire) {
    assert(wire.out == data && wire.out_len <= cap);
    len = std::uint32_t(wire.out_len);
  }

  // The next send: everything written. One send at a time.
  std::span<const char> begin_send() {
    assert(!in_flight() && len > 0);
    sending = len;
    return {data, len};
  }
  // That send is done (the engine resumed it if it was short): its bytes
  // leave, and what was written meanwhile moves to the front (small: a
  // read's answers and alerts).
  void sent();
};

// Where read_records stopped.
enum class ReadEnd : std::uint8_t {
  drained,  // every byte of the input was read: more ciphertext is needed
  no_room,  // bytes of the input are left: OpenSSL had to write and the
            // outbox is full; read them once its send is done
  stopped,  // a callback asked to stop; the input may hold more
  closed,   // the peer's close_notify: nothing more will come
  error,    // the session failed: send what the outbox holds (an alert), then close
};

// Reads the records [in, in + in_len) holds, the handshake's messages
// first while it lasts, and advances `in` past what was read. Each
// record's plaintext, decrypted into `plain` (a whole record's room:
// record_plaintext_bytes_max), goes to on_plaintext(data, n); the end of
// the handshake, before any plaintext that came with its last flight, to
// on_handshake(). Either returns false to stop (the session paused, or the
// connection is over). Each call is given the outbox as it is then: a
// callback may write to it (the client encrypts its next requests).
template <typename OnHandshake, typename OnPlaintext>
ReadEnd read_records(Session& session, Outbox& out, const char*& in, std::size_t& in_len, std::span<char> plain,
                     OnHandshake&& on_handshake, OnPlaintext&& on_plaintext) {
  assert(plain.size() >= record_plaintext_bytes_max);
  while (true) {
    Wire wire = out.wire(in, in_len);
    const bool was_done = session.handshake_done();
    std::size_t n = 0;
    const Session::Status status = session.read(wire, plain.data(), plain.size(), n);
    out.wrote(wire);
    in = wire.in;
    in_len = wire.in_len;
    if (!was_done && session.handshake_done() && !on_handshake()) return ReadEnd::stopped;
    switch (status) {
      case Session::Status::done:
        if (!on_plaintext(static_cast<const char*>(plain.data()), n)) return ReadEnd::stopped;
        break;
      case Session::Status::want_io: return in_len > 0 ? ReadEnd::no_room : ReadEnd::drained;
      case Session::Status::closed: return ReadEnd::closed;
      case Session::Status::error: return ReadEnd::error;
    }
  }
}

// Encrypts from [data, data + len) into the outbox, a record at a time
// while it has room, and returns how much it took: less than `len` (or 0)
// when the room ran out: send the outbox, and encrypt the rest after.
std::size_t encrypt(Session& session, Outbox& out, const char* data, std::size_t len);
// The same from the first `left` bytes of a message's iovecs, advancing
// them past what it took (core/io/send_cursor.hpp).
std::size_t encrypt(Session& session, Outbox& out, msghdr& msg, std::size_t left);

// Drives the handshake with no input (Session::handshake): a client's
// first flight, or the rest of a flight larger than the outbox once it has
// room again (OpenSSL kept it). Done, want_io or error.
Session::Status handshake(Session& session, Outbox& out);

// Queues a close_notify (Session::close). False when the outbox has no
// room for it now.
bool queue_close(Session& session, Outbox& out);

}  // namespace ringhttp::tls
