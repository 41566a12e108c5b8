#pragma once
// A shard's database connections (--db, --db-pool): libpq connections in
// non-blocking pipeline mode, owned by one shard and used by its thread
// only. Queries from any of the shard's HTTP connections go to the ready
// connection with the fewest in flight, each as its own prepared-statement
// execution followed by its own Sync (so each is its own transaction: one
// commit per INSERT), and their results come back in the order they were
// sent, matched to their waiters in FIFO order.
//
// Nothing here blocks or waits: the pool says which sockets it wants
// polled (Poller: the shard's io_uring, an epoll backend later), and is
// told when they are ready. Every state has a deadline: a connection
// attempt (connect_timeout_ms), each query (--db-timeout-ms: past it, its
// connection is closed and every query on it answered unavailable), a
// connection that is down (reconnected after a backoff that doubles from
// reconnect_backoff_min_ms to reconnect_backoff_max_ms). The shard's
// queue is bounded (--db-queue): a query past it is refused at once.
//
// Memory: every queue is allocated at construction. libpq itself
// allocates a PGresult per result (freed before the next), which no libpq
// API lets us avoid; nothing else is allocated per query.

#include <libpq-fe.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/db/counters.hpp"
#include "server/db/statements.hpp"

namespace ringhttp::server::db {

// Who waits for a query's result; opaque to the pool.
struct Waiter {
  std::uint64_t tag = 0;     // the waiting HTTP connection (its slot and generation)
  void* response = nullptr;  // what the result fills
};

enum class Outcome : std::uint8_t {
  row,          // a row: id and name
  no_row,       // the query returned none
  unavailable,  // no answer: the connection was lost or timed out, or the
                // database refused for a reason of availability (SQLSTATE
                // classes 08, 40, 53, 57): worth retrying
  failed,       // the database refused the query for another reason
};

struct Result {
  Statement statement;
  Outcome outcome;
  std::string_view id;    // the row's id as Postgres wrote it (digits)
  std::string_view name;  // the row's name; both valid only during on_result
};

enum class Submit : std::uint8_t {
  accepted,     // sent: the waiter hears from on_result, exactly once
  unavailable,  // no connection is ready (down, connecting, or just lost)
  queue_full,   // the shard has --db-queue queries in flight
};

// The I/O seam: one-shot readiness polls on a connection's socket, for
// reading or for writing, tagged with the connection's index and
// generation. A poll for an older generation may still complete after a
// reconnect: on_poll ignores it.
class Poller {
 public:
  virtual void poll(std::uint32_t link, std::uint32_t generation, int fd, bool write) = 0;
  virtual void cancel_poll(std::uint32_t link, std::uint32_t generation, bool write) = 0;

 protected:
  ~Poller() = default;
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
  std::uint32_t queue_max = 512;   // queries in flight over all of them
  std::uint32_t timeout_ms = 5'000;  // a query's deadline
};

class Pool {
 public:
  static constexpr std::uint32_t connect_timeout_ms = 5'000;  // connecting and preparing
  static constexpr std::uint32_t reconnect_backoff_min_ms = 100;
  static constexpr std::uint32_t reconnect_backoff_max_ms = 2'000;
  // A name arrives validated (1 to 100 characters, no U+0000): at most 4
  // bytes of UTF-8 each.
  static constexpr std::size_t name_bytes_max = 400;

  // `now_ms` is the shard's monotonic clock, read at each wake-up.
  Pool(const PoolConfig& config, Poller& poller, Sink& sink, Counters& counters, const std::uint64_t& now_ms);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  void start();  // every connection begins connecting
  // Sends a query for `waiter`; on_result answers it unless refused here.
  Submit read_user(std::string_view id_digits, const Waiter& waiter);
  Submit insert_user(std::string_view name, const Waiter& waiter);
  // A poll completed (res: the poll mask, or -errno).
  void on_poll(std::uint32_t link, std::uint32_t generation, bool write, std::int32_t res);
  // After a batch of completions: results libpq read while sending are
  // delivered, and polls re-armed.
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
  enum class Kind : std::uint8_t { prepare, query };

  struct Entry {
    Kind kind = Kind::query;
    Statement statement = Statement::user_by_id;
    bool answered = false;  // its result came; its Sync is still to come
    std::uint64_t sent_ms = 0;
    Waiter waiter;
  };

  struct Link {
    PGconn* pg = nullptr;
    int fd = -1;
    std::uint32_t generation = 0;
    State state = State::down;
    PostgresPollingStatusType connect_wants = PGRES_POLLING_WRITING;
    bool read_armed = false;
    bool write_armed = false;
    bool want_write = false;   // libpq has output it could not send yet
    bool needs_drain = false;  // libpq may hold results it read while sending
    bool broken = false;       // a send failed: closed after the batch
    bool corked = false;       // TCP_CORK set for this batch's queries
    bool cork_works = true;    // false on a Unix socket (or a kernel that refuses it)
    std::uint32_t prepares_left = 0;
    std::uint64_t deadline_ms = 0;  // connecting or preparing
    std::uint64_t retry_at_ms = 0;  // down
    std::uint32_t backoff_ms = 0;
    // The pipeline, oldest first: a ring of queue_max + statement_count.
    std::vector<Entry> fifo;
    std::size_t head = 0;
    std::size_t count = 0;
  };

  Submit submit(Statement statement, const char* param, const Waiter& waiter);
  bool send(Link& link, Kind kind, Statement statement, const char* param, const Waiter& waiter);
  void connect(std::uint32_t index);
  void advance_connect(std::uint32_t index);
  bool on_connected(Link& link);
  void on_readable(std::uint32_t index);
  void on_writable(std::uint32_t index);
  bool drain(std::uint32_t index);
  void answer(Entry& e, PGresult* r);
  void fail(std::uint32_t index, metrics::Counter* why);  // why: null when stopping
  void set_fd(std::uint32_t index, int fd);
  void rearm(std::uint32_t index);
  void cork(Link& link);
  void uncork(Link& link);
  Entry& front(Link& link) { return link.fifo[link.head]; }

  const PoolConfig config_;
  Poller& poller_;
  Sink& sink_;
  Counters& counters_;
  std::vector<Link> links_;
  std::uint32_t in_flight_ = 0;  // queries (not prepares) over all links
  std::uint32_t up_ = 0;
  bool stopped_ = false;
  const std::uint64_t& now_ms_;
  char name_[name_bytes_max + 1];
};

}  // namespace ringhttp::server::db
