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

// The operations the pool asks for on a connection's socket.
enum class Io : std::uint8_t { poll_read, poll_write, send, recv };

// The I/O seam: one-shot operations on a connection's socket, tagged with
// the connection's index and generation; the driver reports each
// completion to on_io(), exactly once, cancelled ones included. The shard
// drives them on its io_uring; an epoll backend would do the same calls.
class Driver {
 public:
  virtual void poll(std::uint32_t link, std::uint32_t generation, int fd, bool write) = 0;
  virtual void send(std::uint32_t link, std::uint32_t generation, int fd, const char* data, std::size_t len) = 0;
  virtual void recv(std::uint32_t link, std::uint32_t generation, int fd, char* data, std::size_t len) = 0;
  virtual void cancel(std::uint32_t link, std::uint32_t generation, Io io) = 0;

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
  // An operation completed (res: a poll's mask, bytes, or -errno).
  void on_io(std::uint32_t link, std::uint32_t generation, Io io, std::int32_t res);
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
    int fd = -1;
    std::uint32_t generation = 0;
    State state = State::down;
    PostgresPollingStatusType connect_wants = PGRES_POLLING_WRITING;
    bool own_protocol = false;  // queries through wire.hpp, not libpq (a ready connection without TLS)
    bool read_armed = false;    // operations of this generation in flight
    bool write_armed = false;
    bool send_armed = false;
    bool recv_armed = false;
    std::uint32_t ops = 0;      // operations in flight of any generation: buffers wait for 0
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
  void on_sent(std::uint32_t index, std::int32_t res);
  void on_received(std::uint32_t index, std::int32_t res);
  bool on_message(std::uint32_t index, const wire::Message& m);
  void send_now(std::uint32_t index);
  void fail(std::uint32_t index, metrics::Counter* why);  // why: null when stopping
  void set_fd(std::uint32_t index, int fd);
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
