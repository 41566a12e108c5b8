#pragma once
// A shard's database connections (--db, --db-pool), owned by one shard and
// used by its thread only. Queries from any of the shard's HTTP connections
// go to the ready connection with the fewest in flight, each as a
// prepared-statement execution followed by its own Sync (so each is its own
// transaction: one commit per INSERT), pipelined, and their results come
// back in the order they were sent, matched to their waiters in FIFO order.
// A result is delivered at its Sync's answer (ReadyForQuery), once its
// transaction has committed, never before.
//
// libpq connects (server/db/libpq_setup.hpp), authenticates (whatever the
// server asks: trust, SCRAM, TLS...) and prepares the statements,
// non-blocking, in pipeline mode.
// Then, on a connection without TLS, the pool speaks the few messages of the
// extended query protocol itself (server/db/wire.hpp) over the same socket:
// a batch's queries leave in one send and results arrive by receives, both
// on the shard's ring (Driver), with no system call of their own and no
// allocation. libpq 15 would write each query as it is queued
// (PQpipelineSync flushes) and allocate a PGresult per result. Over TLS the
// queries stay with libpq: its socket is polled on the ring and corked while
// a batch queues its queries, so that batch still leaves in one segment.
//
// Nothing here blocks or waits: the pool asks its Driver for operations on
// a connection's socket and is told when they complete. Every state has a
// deadline: a connection attempt (connect_timeout_ms), each query
// (--db-timeout-ms: past it, its connection is closed and every query on it
// answered unavailable), a connection that is down (reconnected after a
// backoff that doubles from reconnect_backoff_min_ms to
// reconnect_backoff_max_ms). The shard's queue is bounded (--db-queue): a
// query past it is refused at once. Every buffer is allocated at
// construction; a connection's are reused only once no operation of any
// earlier use of them is in flight.

#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/io/engine.hpp"
#include "server/db/counters.hpp"
#include "server/db/pipeline_queue.hpp"
#include "server/db/result.hpp"
#include "server/db/statements.hpp"
#include "server/db/wire.hpp"

namespace ringhttp::server::db {

enum class Submit : std::uint8_t {
  accepted,     // sent: the waiter hears from on_result, exactly once
  unavailable,  // no connection is ready (down, connecting, or just lost)
  queue_full,   // the shard has --db-queue queries in flight
};

// A database connection's socket, as the shard's engine keeps it: one
// engine slot per socket libpq opens (core/io/engine.hpp's foreign
// sockets), with its operations in flight, its send cursor and its
// cancel-all; released once the last completes.
struct Socket : io::Link {
  std::uint32_t link = 0;   // the pool's connection it is a socket of
  std::uint64_t inode = 0;  // tells a new socket from one with the same number
  bool in_use = false;      // handed out, not yet released
};

// The I/O seam (server/db/engine_driver.hpp over the shard's backend;
// tests/unit/db_pool_test.cpp over a fake one). Every operation completes
// for the pool once, by on_poll, on_sent or on_received, unless its socket
// was closed first: then the engine takes its completion, and on_released
// says when the last has come.
class Driver {
 public:
  // A slot for socket `fd` of connection `link`, or nullptr when none is free.
  virtual Socket* open(std::uint32_t link, int fd) = 0;
  virtual void poll(Socket& s, bool write) = 0;
  virtual void stop_polling(Socket& s) = 0;  // the polls armed are cancelled
  // `len` bytes at `data`, untouched until on_sent; a short write is resumed by the engine.
  virtual void send(Socket& s, const char* data, std::size_t len) = 0;
  virtual void receive_into(Socket& s, char* data, std::size_t len) = 0;
  // Every operation of `s` cancelled, its socket left to libpq. True when
  // the slot was released at once (nothing was in flight); otherwise
  // on_released follows its last completion.
  virtual bool close(Socket& s) = 0;

 protected:
  ~Driver() = default;
};

class Sink {
 public:
  virtual void on_result(const Waiter& waiter, const Result& result) = 0;

 protected:
  ~Sink() = default;
};

struct PoolConfig {
  std::string conninfo;          // a libpq connection string or URL
  std::string application_name;  // unless the connection string names one
  std::uint32_t links = 2;       // connections
  std::uint32_t queue_max = 512;     // queries in flight over all of them, an equal share on each
  std::uint32_t timeout_ms = 5'000;  // a query's deadline
};

class Pool {
 public:
  static constexpr std::uint32_t connect_timeout_ms = 5'000;  // connecting and preparing
  static constexpr std::uint32_t reconnect_backoff_min_ms = 100;
  static constexpr std::uint32_t reconnect_backoff_max_ms = 2'000;
  // A name arrives validated (1 to 100 characters, no U+0000): at most 4
  // bytes of UTF-8 each.
  static constexpr std::size_t name_bytes_max = wire::param_bytes_max;
  // Received bytes held per connection: whole backend messages up to this
  // size are parsed; a larger one closes the connection.
  static constexpr std::size_t input_bytes = 64 * 1024;

  // `now_ms` is the shard's monotonic clock, read at each wake-up.
  Pool(const PoolConfig& config, Driver& driver, Sink& sink, Counters& counters, const std::uint64_t& now_ms);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void start();  // every connection begins connecting
  // Queues a query for `waiter`; on_result answers it unless refused here.
  Submit read_user(std::string_view id_digits, const Waiter& waiter);
  Submit insert_user(std::string_view name, const Waiter& waiter);
  // An operation of connection `link`'s socket completed (the driver's).
  void on_poll(std::uint32_t link, bool write, std::int32_t res);  // a poll mask, or -errno
  void on_sent(std::uint32_t link, bool written);  // wholly written, or failed
  void on_received(std::uint32_t link, std::int32_t res);  // bytes, 0 (the server closed), or -errno
  // A socket the link closed has no operation left: its buffers are free.
  void on_released(std::uint32_t link);
  // After a batch of completions: results libpq read while sending are
  // delivered, and connections that failed under a send closed.
  void after_batch();
  // At the very end of a batch (queries may be queued until then, by input
  // resumed after the batch): what the batch queued leaves now.
  void send_queued();
  void on_tick();  // deadlines and reconnects
  // Every waiter answered unavailable, every connection closed.
  void stop();
  std::uint32_t in_flight() const { return in_flight_; }

 private:
  enum class State : std::uint8_t { down, connecting, preparing, ready };
  using Kind = PipelineQueue::Kind;
  using Entry = PipelineQueue::Entry;

  struct Link {
    PGconn* pg = nullptr;
    Socket* socket = nullptr;  // libpq's current socket, while it has one
    // Sockets closed whose operations are still in flight, any of which may
    // write into `in` or read from `out`: the link reconnects at 0.
    std::uint32_t closing_sockets = 0;
    State state = State::down;
    PostgresPollingStatusType connect_wants = PGRES_POLLING_WRITING;
    bool own_protocol = false;  // queries through wire.hpp, not libpq (a ready connection without TLS)
    bool want_write = false;    // libpq has output it could not send yet
    bool needs_drain = false;   // libpq may hold results it read while sending
    bool broken = false;        // a send failed: closed after the batch
    bool corked = false;        // TCP_CORK set for this batch's libpq queries
    bool cork_works = true;     // false on a Unix socket (or a kernel that refuses it)
    std::uint32_t prepares_left = 0;
    std::uint64_t deadline_ms = 0;  // connecting or preparing
    std::uint64_t retry_at_ms = 0;  // down
    std::uint32_t backoff_ms = 0;
    // The pipeline, oldest first: its share of queue_max (plus the
    // statements while preparing), each entry with its row storage.
    PipelineQueue queue;
    // Own protocol: queries queued or being sent ([0, sending) is the
    // send in flight), and bytes received and not yet parsed.
    std::vector<char> out;
    std::size_t out_len = 0;
    std::size_t sending = 0;
    std::vector<char> in;
    std::size_t in_len = 0;
  };

  Submit submit(Statement statement, std::string_view param, const Waiter& waiter);
  bool send_libpq(Link& link, Kind kind, Statement statement, const char* param);
  void connect(std::uint32_t index);
  void advance_connect(std::uint32_t index);
  bool on_connected(Link& link);
  void on_readable(std::uint32_t index);
  void on_writable(std::uint32_t index);
  bool drain(std::uint32_t index);
  void record(Link& link, Entry& e, PGresult* r);
  void pop_and_answer(std::uint32_t index);
  bool on_message(std::uint32_t index, const wire::Message& m);
  void send_now(std::uint32_t index);
  void fail(std::uint32_t index, metrics::Counter* why);  // why: null when stopping
  bool set_socket(std::uint32_t index, int fd);
  void rearm(std::uint32_t index);
  void cork(Link& link);
  void uncork(Link& link);

  const PoolConfig config_;
  Driver& driver_;
  Sink& sink_;
  Counters& counters_;
  std::vector<Link> links_;
  const std::size_t per_link_max_;  // queries one connection's pipeline holds: its share of queue_max
  std::uint32_t in_flight_ = 0;  // queries (not prepares) over all links
  std::uint32_t up_ = 0;
  bool stopped_ = false;
  const std::uint64_t& now_ms_;
  char param_[name_bytes_max + 1];
};

}  // namespace ringhttp::server::db
