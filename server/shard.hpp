#pragma once
// A shard: one thread pinned to one CPU, with its own io_uring, its own
// SO_REUSEPORT listener and its own connection table. Nothing a shard
// touches on the request path is shared with another shard; /metrics reads
// the other shards' counters, which their owners write without atomics'
// read-modify-write (see core/metrics/counter.hpp).

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <ctime>
#include <latch>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "core/io/batch_loop.hpp"
#include "core/io/completion.hpp"
#include "core/io/engine.hpp"
#include "core/io/user_data.hpp"
#include "core/tls/context.hpp"
#include "server/app/app.hpp"
#include "server/connection.hpp"
#include "server/counters.hpp"
#include "server/db/engine_driver.hpp"
#include "server/db/pool.hpp"
#include "server/http1/session.hpp"
#include "server/options.hpp"

namespace ringhttp::server {

// The send operation every connection of a shard uses, settled at start-up.
struct SendPath {
  SendMode mode = SendMode::sendmsg;
  bool zc_report_usage = false;  // zc notifications say whether the kernel copied (6.2)
};

// What main() sees of a shard, whichever backend it runs on: the shard
// itself (below) is a template over its backend (core/io/backend.hpp).
class ShardBase {
 public:
  virtual ~ShardBase();
  // Starts the thread; counts `ready` down when it serves (or failed: see error()).
  void start(std::latch& ready);
  void request_stop();  // from another thread
  void join();
  const std::string& error() const { return error_; }

 protected:
  // The wake eventfd's flags: the epoll backend reads it without blocking;
  // io_uring's read must not find it non-blocking (it would fail with
  // EAGAIN instead of waiting).
  explicit ShardBase(int eventfd_flags) : eventfd_flags_(eventfd_flags) {}
  virtual bool setup() = 0;
  virtual void run() = 0;

  int wake_fd_ = -1;
  std::thread thread_;
  std::string error_;

 private:
  int eventfd_flags_;
};

// A shard on the io_uring backend or the epoll one, as --backend says.
std::unique_ptr<ShardBase> make_shard(io::BackendKind backend, const Options& options, const AppConfig& app_config,
                                      const Cors& cors, int index, int listen_fd, const uring::Features& features,
                                      const SendPath& send, tls::ServerContext* tls, ShardCounters& counters,
                                      std::span<const ShardCounters* const> all_shards);

// What is left to the shard itself: its thread, listener and accepts, tick,
// wake and stop, and the dispatch of every completion to the engine and
// then to its connection's session (server/http1/session.hpp), whose I/O
// it does (ConnectionIo). Its database pool's sockets are a second engine
// over the same backend (server/db/engine_driver.hpp); the shard is the
// sink their results come back to (server/shard_db.ipp).
template <typename Backend>
class Shard final : public ShardBase, private db::Sink, private http1::ConnectionIo {
 public:
  // Shard-level operations (accept, tick, wake, the cancels they need)
  // carry this slot, which no connection can have.
  static constexpr std::uint32_t shard_slot = io::slot_max;
  // The receive buffers the backend provides (the session holds its
  // share of them: server/http1/session.hpp).
  static constexpr std::uint32_t recv_buffers = http1::Session::recv_buffers;
  static constexpr std::uint32_t recv_buffer_bytes = http1::Session::recv_buffer_bytes;
  static constexpr std::uint32_t tick_ms = 100;            // timeouts and Date refresh
  static constexpr std::uint32_t accept_backoff_ms = 100;  // after running out of descriptors or memory
  static constexpr std::uint8_t enobufs_in_a_row_max = 8;  // then wait for the tick
  // Accepted connections waiting for the slot of an idle connection that
  // was reclaimed for them (the table was full); more are refused.
  static constexpr std::size_t pending_accepts_max = 64;
  // With fixed-files: single-shot accepts kept armed, each with its own
  // buffer for the peer's address (a direct descriptor cannot be asked for
  // it afterwards, and a multishot accept would write every peer's address
  // into the one buffer). As many as the kernel then accepts per wake-up.
  static constexpr std::uint32_t direct_accepts = 8;

  Shard(const Options& options, const AppConfig& app_config, const Cors& cors, int index, int listen_fd,
        const uring::Features& features, const SendPath& send, tls::ServerContext* tls, ShardCounters& counters,
        std::span<const ShardCounters* const> all_shards);
  ~Shard() override;
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

 private:
  // tests/unit/shard_session_test.cpp: the shard over a fake backend,
  // driven one batch of completions at a time.
  friend struct ShardTestAccess;

  // shard.ipp: the thread's set-up, the batch loop, accept, tick, stop.
  bool setup() override;
  void run() override;
  // The batch loop's hooks (core/io/batch_loop.hpp).
  template <typename Io, typename Owner>
  friend void io::run_batches(Io& io, Owner& owner);
  bool done() const;
  std::optional<__kernel_timespec> wait_limit() const { return std::nullopt; }  // the tick wakes it
  void on_wake();
  void dispatch(const io::Completion& c);
  void after_batch();
  void mark_dirty(Connection& conn);  // after_batch flushes it, once per batch
  Backend& io() { return engine_.backend(); }  // for the shard's own operations, not a connection's
  void arm_accept();
  bool accepts_full() const {
    return accepts_armed_ == (features_.fixed_files ? (1u << direct_accepts) - 1 : 1u);
  }
  void arm_tick();
  void arm_wake();
  void cancel_accept();
  void on_accept(std::int32_t res, std::uint32_t flags, std::uint32_t which);
  void on_tick();
  void begin_stop();
  Connection* allocate();
  // An accepted socket, and its peer's address when the accept gave it.
  struct Accepted {
    int fd = -1;
    bool peer_known = false;
    ClientKey peer;
  };
  void open_connection(const Accepted& accepted);
  void start_connection(Connection& conn, const Accepted& accepted);
  void open_pending();

  // A connection's completions, through the engine to its session.
  void on_recv(Connection& conn, const io::Completion& c);

  // The session's I/O (http1::ConnectionIo), by the engine.
  void arm_receive(Connection& conn, bool multishot) override { engine_.arm_receive(conn, multishot); }
  void stop_receiving(Connection& conn) override { engine_.stop_receiving(conn); }
  void give_back(std::int32_t buffer_id) override { engine_.give_back(buffer_id); }
  void send_message(Connection& conn, msghdr* msg, std::uint64_t bytes) override {
    engine_.send_message(conn, msg, bytes);
  }
  void shutdown_write(Connection& conn) override { engine_.shutdown(conn, SHUT_WR); }
  std::uint32_t cancel_all(Connection& conn) override;
  void release(Connection& conn) override;

  // shard_db.ipp: the database pool, and its results.
  void on_result(const db::Waiter& waiter, const db::Result& result) override;
  std::string start_database();

  const Options& options_;
  const AppConfig& app_config_;
  const Cors& cors_;
  const int index_;
  const int listen_fd_;
  const uring::Features features_;
  const SendPath send_;
  tls::ServerContext* const tls_;  // HTTPS; null on plain HTTP
  ShardCounters& counters_;
  const std::span<const ShardCounters* const> all_shards_;

  // Declared before the ring so that it is destroyed after it: operations
  // the ring still holds may point into the pool's buffers.
  std::unique_ptr<db::Pool> db_;  // with --db only; built on the shard's thread
  // The connections' I/O: the slot table (mapped once; slots constructed on
  // first use), operations in flight, sends, the batch's dirty list.
  io::Engine<Backend, Connection> engine_;
  // The database connections' sockets: a second engine over the same
  // backend (declared after engine_, which owns it).
  db::EngineDriver<Backend> db_io_{engine_.backend()};
  // Every connection's HTTP/1.1 logic, and what it lends them.
  http1::Session session_;
  std::uint32_t open_count_ = 0;
  std::vector<Accepted> pending_;  // accepted, waiting for a reclaimed slot
  std::uint64_t now_ms_ = 0;
  __kernel_timespec tick_ts_{};
  std::uint64_t wake_value_ = 0;
  // The accepts armed on the listener, one bit each: bit 0 alone, or with
  // fixed-files one per direct_accepts, whose peer buffer is accept_peers_.
  std::uint32_t accepts_armed_ = 0;
  struct AcceptPeer {
    sockaddr_storage address;
    socklen_t length;
  };
  std::array<AcceptPeer, direct_accepts> accept_peers_{};
  std::uint64_t accept_backoff_until_ms_ = 0;
  bool stopping_ = false;
  std::uint64_t stop_deadline_ms_ = 0;
  std::uint64_t sq_full_flushes_seen_ = 0;
};

}  // namespace ringhttp::server
