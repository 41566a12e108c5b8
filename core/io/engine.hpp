#pragma once
// The connection engine: the I/O bookkeeping a server shard and a client
// worker both do for their connections, written once, over either backend
// (completion.hpp). The engine owns
//
// - the slot table (slot_table.hpp) and, in each slot's Link,
//   the operations in flight: a slot's socket is closed, and the slot
//   released, only once none is left;
// - receive arming: one receive armed at a time, multishot or not as the
//   owner asks, its completion turned into what the owner acts on
//   (bytes, the peer's FIN, re-arm after the batch or on the tick, our own
//   cancel, the peer gone);
// - one send in flight per slot, with its cursor: a short write is resumed
//   here from exactly the next unsent byte, so the owner hears of a send
//   only when it is wholly written or failed; zero-copy notifications are
//   awaited here (each keeps the slot until it arrives);
// - cancel-all: every operation in flight cancelled, each cancel itself in
//   flight, the slot marked closing until its last completion;
// - the dirty list of the batch and the batch loop.
//
// Owners (the shard's HTTP connections, the client's load connections)
// decide: when to receive, what to send, when to close. They never call the
// backend for a connection's socket. What is theirs alone stays theirs: the
// shard's listener, tick and wake, the client's pacing.

#include <sys/socket.h>

#include <cassert>
#include <cerrno>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/io/batch_loop.hpp"
#include "core/io/completion.hpp"
#include "core/io/errno_class.hpp"
#include "core/io/send_cursor.hpp"
#include "core/io/slot_table.hpp"
#include "core/io/user_data.hpp"
#include "core/net/address.hpp"

namespace ringhttp::io {

// What the engine keeps of each slot: the owner's slot type derives from
// it.
struct Link {
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  int fd = -1;
  // Completions still to come: operations in flight, and the notification
  // of each zero-copy send whose result has arrived but not its notification.
  InFlight inflight;
  // The send in flight: where its unsent bytes begin (a msghdr's iovecs,
  // advanced on a short write, or a byte range) and how many are left.
  union {
    msghdr* send_msg = nullptr;
    const char* send_data;
  };
  std::uint64_t send_left = 0;
  std::uint32_t zc_pending = 0;       // zero-copy sends whose notification has not arrived
  std::uint8_t enobufs_in_a_row = 0;  // -ENOBUFS receives since the last bytes
  bool recv_armed = false;
  bool recv_multishot = false;  // the armed receive is multishot
  bool rearm_recv = false;      // re-arm the receive after this batch or on the tick
  bool recv_stopping = false;   // the armed receive was cancelled: it must end
  bool send_inflight = false;
  bool send_is_message = false;  // the send in flight is send_message's, not send's
  // The send's last completions wrote nothing (EAGAIN): once, it was made
  // again at once (again); twice in a row, it waits for the owner's tick
  // (parked).
  enum class Retry : std::uint8_t { none, again, parked } send_retry = Retry::none;
  // One-shot polls armed (a foreign socket's: ForeignSockets below), one
  // bit per direction (poll_bit).
  std::uint8_t polls = 0;
  bool connecting = false;
  bool closing = false;  // cancel_all was called: closed once nothing is in flight
  bool dirty = false;    // on the engine's list for after this batch
};
static_assert(sizeof(Link) <= 48, "every connection of every shard carries a Link");

// What an owner's session may ask of a Link without its engine (they are
// the same whatever the backend).

// A re-arm was asked for (-ENOBUFS, a retryable error) and none is armed:
// the owner arms one after the batch or on its tick, if it wants one.
inline bool rearm_due(const Link& s) { return s.rearm_recv && !s.recv_armed; }

inline constexpr std::uint8_t poll_bit(bool write) { return write ? 2 : 1; }
inline bool poll_armed(const Link& s, bool write) { return (s.polls & poll_bit(write)) != 0; }

// Work outside the engine that the slot must outlive (a database query
// whose answer is written into it): counted as in flight until unpinned.
inline void pin(Link& s) { s.inflight.add(); }
inline void unpin(Link& s) { s.inflight.done(); }

// Closing, and nothing of it in flight any more: the engine may close it.
inline bool closed(const Link& s) { return s.closing && s.inflight.none(); }

// A receive's completion, as the owner acts on it.
struct Received {
  enum class Kind : std::uint8_t {
    data,           // `len` bytes at `data`, in `buffer_id` (give_back when done); more may follow (next_piece)
    eof,            // the peer finished sending
    rearm,          // nothing lost (-ENOBUFS, a retryable error): re-armed after the batch
    rearm_on_tick,  // -ENOBUFS too often in a row: re-armed on the owner's tick
    cancelled,      // our own cancel
    peer_gone,      // reset, or another error that ends the connection
  };
  Kind kind = Kind::data;
  std::int32_t res = 0;
  const char* data = nullptr;
  std::uint32_t len = 0;
  std::int32_t buffer_id = own_buffer;
};

// A send's completion, as the owner acts on it.
struct Sent {
  enum class Kind : std::uint8_t {
    written,  // this part written; the engine resumed the rest (a short write)
    done,     // the send is over: wholly written, or the slot is closing
    failed,   // the peer is gone, or our own cancel
    again,    // nothing written (EAGAIN, EINTR): made again now, or on the tick (Retry::parked)
  };
  Kind kind = Kind::done;
  std::int32_t res = 0;
};

// Which sockets an engine's slots hold, and the operations it tags them
// with (user_data.hpp): one engine per kind over the same backend.
//
// Own sockets are the owner's connections: opened or accepted for a slot,
// received into the backend's buffers, closed by the engine once nothing
// of them is in flight.
struct OwnSockets {
  static constexpr bool foreign = false;
  static constexpr Op op(Op o) { return o; }
};

// Foreign sockets belong to a library that does its own I/O on them while
// it connects (libpq), and closes them itself, or opens another in their
// place: the engine polls them, sends from and receives into the owner's
// own buffers, and never closes them. A new socket takes a new slot.
struct ForeignSockets {
  static constexpr bool foreign = true;
  static constexpr Op op(Op o) {
    switch (o) {
      case Op::recv: return Op::db_recv;
      case Op::send: return Op::db_send;
      case Op::cancel: return Op::db_cancel;
      default: return o;
    }
  }
};

// Backend is the backend itself (the engine owns it) or a reference to one
// another engine owns (a second table of slots over the same ring or epoll
// set).
template <typename BackendT, typename Slot, typename Sockets = OwnSockets>
class Engine {
  static_assert(std::is_base_of_v<Link, Slot>, "an engine's slot derives from io::Link");
  using Backend = std::remove_reference_t<BackendT>;
  static constexpr bool owns_backend = !std::is_reference_v<BackendT>;

 public:
  Engine() requires owns_backend = default;
  explicit Engine(Backend& shared) requires(!owns_backend) : io_(shared) {}

  struct Config {
    std::uint32_t slots = 0;
    std::uint8_t enobufs_in_a_row_max = 8;  // then the tick re-arms
    SendMode send_mode = SendMode::sendmsg;  // send_message's
    bool zc_report_usage = false;  // zc notifications say whether the kernel copied (6.2)
  };

  // Returns what failed, or "".
  std::string init(const typename Backend::Config& backend, const Config& config) requires owns_backend {
    if (std::string e = io_.init(backend); !e.empty()) return e;
    return init(config);
  }
  // An engine over a backend another one owns (and has initialized).
  std::string init(const Config& config) {
    config_ = config;
    if (std::string e = table_.init(config.slots); !e.empty()) return e;
    dirty_.reserve(config.slots);
    return {};
  }

  Backend& backend() { return io_; }
  const Backend& backend() const { return io_; }
  SlotTable<Slot>& table() { return table_; }
  const SlotTable<Slot>& table() const { return table_; }

  static std::uint64_t tag(Op op, const Slot& s) { return io::tag(Sockets::op(op), s); }

  // The slot a completion's tag names, or nullptr when it is for an
  // earlier use of the slot (the tag's generation is not the slot's).
  Slot* find(const Tag& t) { return table_.find(t); }

  // Runs batches until `owner.done()` (batch_loop.hpp).
  template <typename Owner>
  void run(Owner& owner) {
    io::run_batches(io_, owner);
  }

  // ---- A slot's socket.

  // `s` takes socket `fd`: nothing of an earlier socket is left in flight.
  void open(Slot& s, int fd) {
    assert(s.inflight.none() && s.zc_pending == 0);
    s.fd = fd;
    s.send_left = 0;
    s.enobufs_in_a_row = 0;
    s.recv_armed = s.recv_multishot = s.rearm_recv = s.recv_stopping = false;
    s.send_inflight = s.connecting = s.closing = s.send_is_message = false;
    s.send_retry = Link::Retry::none;
    s.polls = 0;
  }

  void connect(Slot& s, const net::Address& address) {
    assert(!s.connecting && !s.closing);
    io_.connect(s.fd, address, tag(Op::connect, s));
    s.connecting = true;
    s.inflight.add();
  }

  // The connect's result: 0 or -errno (a refused or unreachable peer; one
  // built wrongly is a bug).
  std::int32_t on_connect(Slot& s, const Completion& c) {
    assert(s.connecting);
    s.connecting = false;
    s.inflight.done();
    assert(c.res >= 0 || classify(c.res) != ErrnoClass::bug);
    return c.res;
  }

  // ---- Receiving.

  void arm_receive(Slot& s, bool multishot = true) {
    assert(!s.recv_armed && !s.closing);
    s.recv_multishot = io_.receive(s.fd, tag(Op::recv, s), multishot);
    s.recv_armed = true;
    s.recv_stopping = false;
    s.rearm_recv = false;  // whatever asked for a re-arm is answered
    s.inflight.add();
  }

  static bool rearm_due(const Slot& s) { return io::rearm_due(s); }

  // On the owner's tick: a send parked after writing nothing twice in a
  // row (on_send) is made again.
  void resume_parked_send(Slot& s) {
    if (s.send_retry != Link::Retry::parked || s.closing) return;
    s.send_retry = Link::Retry::again;  // a third nothing parks it again
    submit(s);
  }

  Received on_receive(Slot& s, const Completion& c) {
    if ((c.flags & completion_flags::more) == 0) {
      assert(s.recv_armed);
      s.recv_armed = false;
      s.recv_stopping = false;
      s.inflight.done();
    }
    Received r;
    r.res = c.res;
    if (c.res > 0) {
      s.enobufs_in_a_row = 0;
      const auto piece = io_.received(s.slot, c.flags, c.res);
      r.data = piece.data;
      r.len = piece.len;
      r.buffer_id = piece.buffer_id;
      return r;
    }
    if (c.res == 0) {
      r.kind = Received::Kind::eof;
      return r;
    }
    switch (receive_failed(s, c.res, config_.enobufs_in_a_row_max)) {
      case ReceiveFailure::rearm:
        r.kind = Received::Kind::rearm;
        mark_dirty(s);
        break;
      case ReceiveFailure::rearm_on_tick: r.kind = Received::Kind::rearm_on_tick; break;
      case ReceiveFailure::cancelled: r.kind = Received::Kind::cancelled; break;
      case ReceiveFailure::peer_gone: r.kind = Received::Kind::peer_gone; break;
    }
    if (s.closing) s.rearm_recv = false;
    return r;
  }

  // The next piece of the data that on_receive returned the first piece
  // of: a bundle's next buffer (io_uring's recv-bundle), each with its own
  // buffer_id and len. False once every piece has been handed out. The
  // owner takes every piece, as it would separate receives, before the
  // next completion.
  bool next_piece(Received& r) {
    typename Backend::Received piece{};
    if (!io_.next_received(piece)) return false;
    assert(r.kind == Received::Kind::data);
    r.data = piece.data;
    r.len = piece.len;
    r.buffer_id = piece.buffer_id;
    return true;
  }

  // A receive buffer the owner is done with (Received::buffer_id).
  void give_back(std::int32_t buffer_id) { io_.give_back(buffer_id); }

  // A receive completion no owner handles (its slot is gone): every buffer
  // it took goes back.
  void drop_receive(const Completion& c) {
    io_.give_back_flags(c.flags, c.res);
  }

  // Cancels a multishot receive (the owner pauses its input); a
  // single-shot one is simply not re-armed. The receive still completes
  // for itself (-ECANCELED).
  void stop_receiving(Slot& s) {
    if (!s.recv_armed || !s.recv_multishot || s.recv_stopping) return;
    s.recv_stopping = true;
    cancel(s, Op::recv);
  }

  // ---- A foreign socket's own operations (ForeignSockets).

  // A one-shot poll for input (or room to write); its completion's result
  // is the poll mask, or -errno.
  void poll(Slot& s, bool write) {
    static_assert(Sockets::foreign, "own sockets receive and send; only a foreign one is polled");
    assert(!poll_armed(s, write) && !s.closing);
    io_.poll(s.fd, write, io::tag(write ? Op::db_write : Op::db_read, s));
    s.polls |= poll_bit(write);
    s.inflight.add();
  }

  std::int32_t on_poll(Slot& s, bool write, const Completion& c) {
    assert(poll_armed(s, write));
    s.polls &= std::uint8_t(~poll_bit(write));
    s.inflight.done();
    return c.res;
  }

  // The polls armed are cancelled; each still completes (-ECANCELED).
  void stop_polling(Slot& s) {
    static_assert(Sockets::foreign, "only a foreign socket is polled");
    if (poll_armed(s, false)) cancel(s, Op::db_read);
    if (poll_armed(s, true)) cancel(s, Op::db_write);
  }

  // A single-shot receive of at most `len` bytes into the owner's `data`,
  // which stays untouched by the owner until it completes.
  void receive_into(Slot& s, char* data, std::size_t len) {
    static_assert(Sockets::foreign, "own sockets receive into the backend's buffers (arm_receive)");
    assert(!s.recv_armed && !s.closing && len > 0);
    io_.receive_into(s.fd, data, len, tag(Op::recv, s));
    s.recv_armed = true;
    s.recv_multishot = false;
    s.recv_stopping = false;
    s.inflight.add();
  }

  // Its result: the bytes received (0: the peer finished), or -errno.
  std::int32_t on_receive_into(Slot& s, const Completion& c) {
    assert(s.recv_armed);
    s.recv_armed = false;
    s.recv_stopping = false;
    s.inflight.done();
    return c.res;
  }

  // Closing a foreign slot: its socket is its library's, which closes it
  // (or has already); the slot goes back to the table.
  void forget(Slot& s) {
    static_assert(Sockets::foreign, "an own socket is closed (release)");
    assert(closed(s));
    s.fd = -1;
    s.closing = false;
    table_.release(s);
  }

  // ---- Sending: one send in flight per slot.

  // Sends what `msg`'s iovecs cover, `bytes` in all, by the configured send
  // mode. The msghdr, its iovecs and (with zc) the bytes they point at stay
  // untouched until the send is done (and with zc, until its notification).
  void send_message(Slot& s, msghdr* msg, std::uint64_t bytes) {
    assert(!s.send_inflight && !s.closing && bytes > 0 && msg->msg_iovlen > 0);
    s.send_is_message = true;
    s.send_left = bytes;
    s.send_msg = msg;
    submit(s);
  }

  // Sends `len` bytes at `data`, which stay untouched until the send is done.
  void send(Slot& s, const char* data, std::uint32_t len) {
    assert(!s.send_inflight && !s.closing && len > 0);
    s.send_is_message = false;
    s.send_left = len;
    s.send_data = data;
    submit(s);
  }

  Sent on_send(Slot& s, const Completion& c) {
    assert(s.send_inflight);
    s.send_inflight = false;
    s.inflight.done();
    if ((c.flags & completion_flags::more) != 0) {
      // A zero-copy send's notification is still to come, errors and
      // cancels included: it keeps the slot (and the bytes) until it arrives.
      assert(config_.send_mode == SendMode::zc && s.send_is_message);
      ++s.zc_pending;
      s.inflight.add();
    }
    if (c.res < 0) {
      if ((c.res == -EAGAIN || c.res == -EINTR) && !s.closing) {
        // Sockets are non-blocking, so a send io_uring handed to a worker
        // thread (it does so when a wake-up found no room) comes back -EAGAIN
        // instead of holding that thread while the peer reads nothing. Made
        // again at once, it waits for room in the poll; but once a peer has
        // half-closed, the kernel can wake it at once each time, with still
        // no room: the second in a row waits for the owner's tick, so such a
        // peer costs a send per tick, not a loop. It stays the send in
        // flight (nothing else is sent before it); the send timeout still
        // runs, since nothing was written.
        if (s.send_retry == Link::Retry::again) {
          s.send_retry = Link::Retry::parked;
          s.send_inflight = true;
        } else {
          s.send_retry = Link::Retry::again;
          submit(s);
        }
        return {Sent::Kind::again, c.res};
      }
      // EPIPE, ECONNRESET... (the peer is gone), or our own cancel; a send
      // built wrongly is a bug, never taken for a peer that left.
      assert(classify(c.res) != ErrnoClass::bug && "a send was refused as invalid");
      s.send_left = 0;
      return {Sent::Kind::failed, c.res};
    }
    s.send_retry = Link::Retry::none;  // progress ends a run of sends that wrote nothing
    const auto written = std::uint64_t(c.res);
    assert(written <= s.send_left);
    if (s.closing || written >= s.send_left) {
      s.send_left = 0;
      return {Sent::Kind::done, c.res};
    }
    // A short write: the rest, from exactly the next unsent byte. A
    // zero-copy resumption may go before the earlier part's notification:
    // it reads the same, unchanged bytes.
    s.send_left -= written;
    if (s.send_is_message) {
      advance_iovecs(*s.send_msg, std::size_t(written));
    } else {
      s.send_data += written;
    }
    submit(s);
    return {Sent::Kind::written, c.res};
  }

  // A zero-copy send's notification (completion_flags::notification): true
  // when the kernel copied the bytes after all.
  bool on_send_notification(Slot& s, const Completion& c) {
    // The kernel posts a notification after its send's result, never before.
    assert(s.zc_pending > 0);
    --s.zc_pending;
    s.inflight.done();
    return (std::uint32_t(c.res) & zero_copy_copied) != 0;
  }

  // ---- Shutting down and closing.

  void shutdown(Slot& s, int how) {
    assert(!s.closing);
    io_.shutdown(s.fd, how, tag(Op::shutdown, s));
    s.inflight.add();
  }

  // A closing slot whose zero-copy sends still owe notifications: those
  // come only once the kernel lets go of the bytes, and bytes queued for a
  // peer that reads nothing are let go only when the socket drops them,
  // which a close after the last notification never reaches. So the
  // connection is reset (RST), what its socket queues dropped, and the
  // notifications follow. Completes as a shutdown (on_shutdown).
  bool owes_zero_copy_notifications(const Slot& s) const {
    return config_.send_mode == SendMode::zc && (s.zc_pending > 0 || s.send_inflight);
  }
  void reset(Slot& s) {
    assert(s.closing);
    io_.reset(s.fd, tag(Op::shutdown, s));
    s.inflight.add();
  }

  // The shutdown's (or reset's) result: 0, or -errno (ENOTCONN: the peer
  // reset first).
  std::int32_t on_shutdown(Slot& s, const Completion& c) {
    s.inflight.done();
    assert(c.res >= 0 || classify(c.res) != ErrnoClass::bug);
    return c.res;
  }

  // Cancels every operation `s` has in flight, each cancel itself in
  // flight, so the slot outlives them all; the cancelled operations still
  // complete for themselves (-ECANCELED). From now on `s` is closing:
  // nothing new is submitted for it. Returns the cancels made.
  std::uint32_t cancel_all(Slot& s) {
    assert(!s.closing);
    s.closing = true;
    s.rearm_recv = false;
    std::uint32_t n = 0;
    if (s.recv_armed && !s.recv_stopping) s.recv_stopping = true, cancel(s, Op::recv), ++n;
    if (s.connecting) cancel(s, Op::connect), ++n;
    if (poll_armed(s, false)) cancel(s, Op::db_read), ++n;
    if (poll_armed(s, true)) cancel(s, Op::db_write), ++n;
    if (s.send_retry == Link::Retry::parked) {
      // Nothing of it is in the kernel: dropped here, as a cancel would.
      s.send_retry = Link::Retry::none;
      s.send_inflight = false;
      s.send_left = 0;
    }
    if (s.send_inflight) cancel(s, Op::send), ++n;
    return n;
  }

  // A cancel's own completion. io_uring can miss the operation it was aimed
  // at (-ENOENT, -EALREADY: a multishot receive caught between two rounds
  // of its retries), which then goes on: a paused connection's receive
  // would fill its held input, a closing slot would never be released. So
  // a cancel that found nothing is made again while what it was aimed at
  // is still armed and still to be stopped. Returns the cancels made.
  std::uint32_t on_cancel(Slot& s, const Completion& c) {
    s.inflight.done();
    if (c.res >= 0) return 0;
    std::uint32_t n = 0;
    if (s.recv_armed && s.recv_stopping) cancel(s, Op::recv), ++n;
    if (s.closing && s.connecting) cancel(s, Op::connect), ++n;
    if (s.closing && poll_armed(s, false)) cancel(s, Op::db_read), ++n;
    if (s.closing && poll_armed(s, true)) cancel(s, Op::db_write), ++n;
    if (s.closing && s.send_inflight) cancel(s, Op::send), ++n;
    return n;
  }

  static void pin(Slot& s) { io::pin(s); }
  static void unpin(Slot& s) { io::unpin(s); }
  static bool closed(const Slot& s) { return io::closed(s); }

  // Closes `s`'s socket once closed(s); the slot stays the owner's (the
  // client reopens it in place).
  void close(Slot& s) {
    static_assert(!Sockets::foreign, "a foreign socket is its library's to close (forget)");
    assert(closed(s) && s.zc_pending == 0);
    io_.close(s.fd, s.slot);
    s.fd = -1;
    s.closing = false;
  }

  // Closes `s`'s socket and gives the slot back to the table.
  void release(Slot& s) {
    close(s);
    table_.release(s);
  }

  // ---- The batch's dirty list: slots to look at after the batch.

  void mark_dirty(Slot& s) { dirty_.mark(s); }
  DirtyList& dirty() { return dirty_; }

  // Calls `work(slot)` for each slot marked in this batch, once each (a
  // slot marked again by the work is worked again).
  template <typename Work>
  void drain_dirty(Work&& work) {
    dirty_.drain(table_, work);
  }

 private:
  void cancel(Slot& s, Op op) {
    io_.cancel(tag(op, s), tag(Op::cancel, s));
    s.inflight.add();
  }

  void submit(Slot& s) {
    assert(s.send_retry != Link::Retry::parked);
    if constexpr (Sockets::foreign) {
      assert(!s.send_is_message);
      io_.send_from(s.fd, s.send_data, std::size_t(s.send_left), tag(Op::send, s));
    } else if (s.send_is_message) {
      io_.send_message(s.fd, s.send_msg, config_.send_mode, tag(Op::send, s), config_.zc_report_usage);
    } else {
      io_.send(s.fd, s.send_data, std::size_t(s.send_left), tag(Op::send, s));
    }
    s.send_inflight = true;
    s.inflight.add();
  }

  Config config_;
  BackendT io_;
  SlotTable<Slot> table_;
  DirtyList dirty_;
};

}  // namespace ringhttp::io
