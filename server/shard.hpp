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

#include "core/http/date_cache.hpp"
#include "core/uring/batch_loop.hpp"
#include "core/io/completion.hpp"
#include "core/io/engine.hpp"
#include "core/uring/user_data.hpp"
#include "core/tls/context.hpp"
#include "server/app/app.hpp"
#include "server/connection.hpp"
#include "server/counters.hpp"
#include "server/db/pool.hpp"
#include "server/framing_cache.hpp"
#include "server/options.hpp"
#include "server/output_pool.hpp"

namespace ringhttp::server {

// The send operation every connection of a shard uses, settled at start-up.
struct SendPath {
  SendMode mode = SendMode::sendmsg;
  bool zc_report_usage = false;  // zc notifications say whether the kernel copied (6.2)
};

// What main() and a connection's parser see of a shard, whichever backend
// it runs on: the shard itself (below) is a template over its backend
// (core/io/completion.hpp), so that no I/O operation is a virtual call.
class ShardBase {
 public:
  virtual ~ShardBase();
  // Starts the thread; counts `ready` down when it serves (or failed: see error()).
  void start(std::latch& ready);
  void request_stop();  // from another thread
  void join();
  const std::string& error() const { return error_; }

  // Parser callbacks, routed here by the connection.
  virtual void on_request_headers(Connection& conn, const http::RequestHead& head) = 0;
  virtual bool on_request(Connection& conn, const http::RequestHead& head) = 0;

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

// The shard is its database pool's driver (its sockets' operations on the
// shard's own ring) and the sink its results come back to
// (server/shard_db.ipp).
template <typename Backend>
class Shard final : public ShardBase, private db::Driver, private db::Sink {
 public:
  // Shard-level operations (accept, tick, wake, cancels they and the
  // database polls need) carry this slot, which no connection can have.
  static constexpr std::uint32_t shard_slot = uring::slot_max;
  // Provided receive buffers per shard and their size. A request is far
  // smaller than a buffer; many in-flight receives share the pool.
  static constexpr std::uint32_t recv_buffers = 1024;
  static constexpr std::uint32_t recv_buffer_bytes = 4096;
  static constexpr std::uint32_t tick_ms = 100;            // timeouts and Date refresh
  static constexpr std::uint32_t linger_ms = 1000;         // after our FIN, wait this long for the peer's
  static constexpr std::uint32_t accept_backoff_ms = 100;  // after running out of descriptors or memory
  static constexpr std::uint8_t enobufs_in_a_row_max = 8;  // then wait for the tick
  // Receive buffers all paused connections together may hold: the other
  // half of the pool stays for connections that are being served, however
  // many clients pipeline without reading.
  static constexpr std::uint32_t held_buffers_shard_max = recv_buffers / 2;
  // Blocks (of recv_buffer_bytes) that held input beyond a connection's
  // share is copied into: 16 MiB per shard, mapped once, touched only as far
  // as clients pipeline that far ahead, and given back to the kernel once
  // empty again. Four times the receive buffers: what arrives for paused
  // connections before their receives stop is bounded by the buffers the
  // kernel can fill (the ring's 1,024) per wave. Exhausted, the connection
  // that needs one more is closed (ringhttp_input_overflow_total).
  static constexpr std::uint32_t spill_blocks = 4 * recv_buffers;
  // Accepted connections waiting for the slot of an idle connection that
  // was reclaimed for them (the table was full); more are refused.
  static constexpr std::size_t pending_accepts_max = 64;
  // With fixed-files: single-shot accepts kept armed, each with its own
  // buffer for the peer's address (a direct descriptor cannot be asked for
  // it afterwards, and a multishot accept would write every peer's address
  // into the one buffer). As many as the kernel then accepts per wake-up.
  static constexpr std::uint32_t direct_accepts = 8;
  // HTTPS: connections whose handshake is in progress. A handshake costs
  // a private-key operation and OpenSSL's buffers (about 40 KiB until it
  // ends): past this many, a newcomer is closed at once, counted
  // (ringhttp_tls_handshakes_failed_total{reason="refused"}), so a flood
  // of ClientHellos cannot take the shard's memory or starve its
  // established connections of CPU.
  static constexpr std::uint32_t tls_handshakes_max = 512;

  Shard(const Options& options, const AppConfig& app_config, const Cors& cors, int index, int listen_fd,
        const uring::Features& features, const SendPath& send, tls::ServerContext* tls, ShardCounters& counters,
        std::span<const ShardCounters* const> all_shards);
  ~Shard() override;
  Shard(const Shard&) = delete;
  Shard& operator=(const Shard&) = delete;

  void on_request_headers(Connection& conn, const http::RequestHead& head) override;
  bool on_request(Connection& conn, const http::RequestHead& head) override;

 private:
  // tests/unit/shard_session_test.cpp: the shard over a fake backend,
  // driven one batch of completions at a time.
  friend struct ShardTestAccess;

  // shard.ipp: the thread's set-up, the batch loop, accept, tick, stop.
  bool setup() override;
  void run() override;
  // The batch loop's hooks (core/uring/batch_loop.hpp).
  template <typename Io, typename Owner>
  friend void uring::run_batches(Io& io, Owner& owner);
  bool done() const;
  std::optional<__kernel_timespec> wait_limit() const { return std::nullopt; }  // the tick wakes it
  void on_wake();
  void dispatch(const uring::Completion& c);
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

  // shard_input.ipp: receive, parse, hold input while paused.
  bool wants_receive(const Connection& conn) const;
  void arm_recv(Connection& conn);
  void on_recv(Connection& conn, const io::Completion& c);
  void on_received_piece(Connection& conn, InputChunk chunk);
  void consume(Connection& conn, InputChunk chunk);
  struct Parsed {
    bool paused = false;
    std::uint32_t consumed = 0;  // when paused: what the parser took; the rest is the caller's to hold
  };
  Parsed parse(Connection& conn, const char* data, std::uint32_t len);
  void hold(Connection& conn, InputChunk chunk, bool at_front);
  InputChunk unhold(Connection& conn);
  bool spill(InputChunk& chunk);
  char* take_spill_block(std::int32_t& buffer_id);
  bool join_last_held(Connection& conn, const InputChunk& chunk);
  void drop_held(Connection& conn);
  void release_chunk(InputChunk chunk);
  [[gnu::noinline]] void release_spilled(InputChunk chunk);
  void pause_input(Connection& conn);
  void resume_input(Connection& conn);
  bool can_take_more(const Connection& conn) const;

  // shard_respond.ipp: a parsed request becomes a queued response.
  void finish_response(Connection& conn, PendingResponse& r, std::uint64_t content_length, bool close,
                       bool http10_keep_alive);
  void queue_error(Connection& conn, int status);

  // shard_output.ipp: sends, and the output blocks busy connections borrow.
  bool lend_output(Connection& conn);
  void return_output(Connection& conn);
  void maybe_return_output(Connection& conn);
  void wait_for_output(Connection& conn);
  void flush(Connection& conn);
  [[gnu::noinline]] void send_pending(Connection& conn);
  std::uint64_t prepare_batch(Connection& conn);
  void on_send(Connection& conn, const io::Completion& c);
  void on_send_notification(Connection& conn, const io::Completion& c);
  void after_output_progress(Connection& conn);
  void retire_sent(Connection& conn);
  void release_written(Connection& conn);

  // shard_tls.ipp: HTTPS between the engine and the HTTP session.
  void tls_start(Connection& conn);
  void tls_consume(Connection& conn, InputChunk chunk);
  bool hold_decrypted(Connection& conn, const char* data, std::uint32_t len);
  void tls_handshake_done(Connection& conn);
  void tls_failed(Connection& conn);
  void tls_flush(Connection& conn);
  bool tls_on_sent(Connection& conn);
  bool tls_close_notify(Connection& conn);
  void tls_release(Connection& conn, std::size_t reason = tls_closed);

  // shard_db.ipp: the database pool's operations and results.
  void poll(std::uint32_t link, std::uint32_t generation, int fd, bool write) override;
  void send(std::uint32_t link, std::uint32_t generation, int fd, const char* data, std::size_t len) override;
  void recv(std::uint32_t link, std::uint32_t generation, int fd, char* data, std::size_t len) override;
  void cancel(std::uint32_t link, std::uint32_t generation, db::Io io) override;
  void on_result(const db::Waiter& waiter, const db::Result& result) override;
  void start_database();

  // shard_close.ipp: drain, linger, cancel, release; deadlines; reclaim.
  void begin_drain(Connection& conn);
  void maybe_finish_drain(Connection& conn);
  void on_shutdown(Connection& conn, const io::Completion& c);
  void abort(Connection& conn);
  void maybe_release(Connection& conn);
  void check_timeouts(Connection& conn);
  bool reclaim_idle();

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
  http::RequestParser::Limits limits_;

  // Declared before the ring so that it is destroyed after it: operations
  // the ring still holds may point into the pool's buffers.
  std::unique_ptr<db::Pool> db_;  // with --db only; built on the shard's thread
  // The connections' I/O: the slot table (mapped once; slots constructed on
  // first use), operations in flight, sends, the batch's dirty list.
  io::Engine<Backend, Connection> engine_;
  // Output blocks, lent to busy connections; those that found none wait in
  // arrival order.
  OutputPool output_pool_{engine_.table()};
  // Rings of held input, lent to paused connections (as many as slots).
  uring::SlotTable<HeldBlock> held_blocks_;
  std::uint32_t held_rings_lent_ = 0;
  std::uint32_t open_count_ = 0;
  std::uint32_t held_buffers_ = 0;   // provided buffers held by paused connections
  char* spill_ = nullptr;            // spill_blocks x recv_buffer_bytes
  bool spill_touched_ = false;       // pages of spill_ resident since the last give-back
  std::vector<std::uint32_t> spill_free_;
  std::vector<Accepted> pending_;    // accepted, waiting for a reclaimed slot
  // HTTPS: a record's plaintext, read here and parsed at once (what the
  // parser leaves is copied to spill blocks and held).
  std::unique_ptr<char[]> tls_plain_;
  std::uint32_t tls_handshakes_ = 0;  // in progress now

  std::unique_ptr<App> app_;  // built on the shard's thread, so its memory is the shard's
  http::DateCache date_;
  FramingCache framing_;
  std::uint64_t now_ms_ = 0;
  std::int64_t wall_s_ = 0;  // Unix time, refreshed with the Date line
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
