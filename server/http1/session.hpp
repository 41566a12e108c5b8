#pragma once
// The HTTP/1.1 session: what a shard's connections do between the engine
// under them and the app above them, compiled once whatever the backend.
// The shard hands it what happened to a connection (bytes received, a
// send done, the peer's FIN, a deadline on the tick) and it decides: parse,
// hold and spill, respond, pause or resume input, send, drain and linger,
// abort. It asks for I/O through ConnectionIo (the shard's engine), and
// never sees a ring, an epoll descriptor, a socket or a user_data.
//
// One concern per file: session.cpp (set-up, the tick, stop, the batch's
// after-work), input.cpp (receive, parse, held input), respond.cpp (a
// request becomes a queued response), output.cpp (sends and the output
// blocks), close.cpp (drain, linger, abort, release, deadlines), tls.cpp
// (HTTPS between the engine and the parser).

#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/http/date_cache.hpp"
#include "core/io/batch_loop.hpp"
#include "core/io/engine.hpp"
#include "core/io/slot_table.hpp"
#include "core/tls/context.hpp"
#include "server/app/app.hpp"
#include "server/connection.hpp"
#include "server/counters.hpp"
#include "server/db/pool.hpp"
#include "server/framing_cache.hpp"
#include "server/options.hpp"
#include "server/output_pool.hpp"

namespace ringhttp::server::http1 {

// The I/O a session asks for one of its connections: the shard's engine
// does it (server/shard.hpp), on whichever backend the shard runs.
class ConnectionIo {
 public:
  virtual void arm_receive(Connection& conn, bool multishot) = 0;
  // Cancels a multishot receive (input paused); a single-shot one is
  // simply not re-armed.
  virtual void stop_receiving(Connection& conn) = 0;
  // A provided receive buffer the session is done with.
  virtual void give_back(std::int32_t buffer_id) = 0;
  virtual void send_message(Connection& conn, msghdr* msg, std::uint64_t bytes) = 0;
  virtual void shutdown_write(Connection& conn) = 0;
  // Every operation in flight cancelled (and a connection whose zero-copy
  // sends owe notifications reset): the cancels made.
  virtual std::uint32_t cancel_all(Connection& conn) = 0;
  // Closing with nothing in flight (io::closed): the socket closed and the
  // slot given back.
  virtual void release(Connection& conn) = 0;

 protected:
  ~ConnectionIo() = default;
};

class Session {
 public:
  // Provided receive buffers per shard and their size. A request is far
  // smaller than a buffer; many in-flight receives share the pool.
  static constexpr std::uint32_t recv_buffers = 1024;
  static constexpr std::uint32_t recv_buffer_bytes = 4096;
  static constexpr std::uint32_t linger_ms = 1000;  // after our FIN, wait this long for the peer's
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
  // HTTPS: connections whose handshake is in progress. A handshake costs
  // a private-key operation and OpenSSL's buffers (about 40 KiB until it
  // ends): past this many, a newcomer is closed at once, counted
  // (ringhttp_tls_handshakes_failed_total{reason="refused"}), so a flood
  // of ClientHellos cannot take the shard's memory or starve its
  // established connections of CPU.
  static constexpr std::uint32_t tls_handshakes_max = 512;

  struct Config {
    const Options& options;
    const AppConfig& app_config;
    const Cors& cors;
    ShardCounters& counters;
    std::span<const ShardCounters* const> all_shards;  // for /metrics
    tls::ServerContext* tls;                           // HTTPS; null on plain HTTP
    bool zero_copy = false;                            // sends are zero-copy: nothing is staged
  };

  Session(const Config& config, io::SlotTable<Connection>& table, io::DirtyList& dirty, ConnectionIo& io);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // On the shard's thread, so that the memory is the shard's. Returns what
  // failed, or "".
  std::string init(std::uint64_t now_ms);
  App& app() { return *app_; }

  // ---- The shard's clock and its tick (session.cpp).
  void set_now(std::uint64_t now_ms) { now_ms_ = now_ms; }
  void on_tick();                     // the Date line, spill memory given back
  void tick(Connection& conn);        // a re-arm due, and every deadline
  bool stopping() const { return stopping_; }
  void begin_stop();                  // idle connections closed, busy ones drained

  // ---- A connection's life.
  bool refuses_handshake() const { return tls_ != nullptr && tls_handshakes_ >= tls_handshakes_max; }
  // A connection the engine has opened: it starts reading (or its TLS
  // handshake).
  void start(Connection& conn, const ClientKey& peer);
  // One piece of received bytes, then the end of the receive that brought
  // them (or its failure) (input.cpp).
  void on_received_piece(Connection& conn, InputChunk chunk);
  void after_receive(Connection& conn, io::Received::Kind kind, std::int32_t res);
  // A send's completion, a zero-copy notification, a shutdown's (output.cpp,
  // close.cpp).
  void on_sent(Connection& conn, const io::Sent& sent);
  void on_notification(Connection& conn, bool copied);
  void on_shutdown(Connection& conn, std::int32_t res);
  // After every completion of the batch: one send per connection.
  void after_batch(Connection& conn);
  // A database result for a response that waited for it (its pin taken
  // away by the shard).
  void on_db_result(Connection& conn, PendingResponse& r, const db::Result& result);
  // Closes at once: every operation cancelled; the slot is freed after
  // the batch, once nothing of it is in flight (maybe_release).
  void abort(Connection& conn);
  // The table is full: finds a slot for one more newcomer, `promised` being
  // the newcomers already waiting for one. A closing slot none of them is
  // promised is theirs (it is freed after this batch); otherwise the oldest
  // idle connection is closed to make room. False: no slot will come free.
  bool make_room(std::size_t promised);

  // ---- The parser's callbacks (Connection routes them here).
  void on_request_headers(Connection& conn, const http::RequestHead& head);
  bool on_request(Connection& conn, const http::RequestHead& head);

 private:
  // input.cpp
  bool wants_receive(const Connection& conn) const;
  void arm_recv(Connection& conn);
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

  // respond.cpp
  void finish_response(PendingResponse& r, std::uint64_t content_length, bool close, bool http10_keep_alive);
  void queue_error(Connection& conn, int status);

  // output.cpp
  bool lend_output(Connection& conn);
  void return_output(Connection& conn);
  void maybe_return_output(Connection& conn);
  void wait_for_output(Connection& conn);
  void flush(Connection& conn);
  [[gnu::noinline]] void send_pending(Connection& conn);
  std::uint64_t prepare_batch(Connection& conn);
  void after_output_progress(Connection& conn);
  void retire_sent(Connection& conn);
  void release_written(Connection& conn);

  // tls.cpp
  void tls_start(Connection& conn);
  void tls_consume(Connection& conn, InputChunk chunk);
  bool hold_decrypted(Connection& conn, const char* data, std::uint32_t len);
  void tls_handshake_done(Connection& conn);
  void tls_failed(Connection& conn);
  void tls_flush(Connection& conn);
  bool tls_on_sent(Connection& conn);
  bool tls_close_notify(Connection& conn);
  void tls_release(Connection& conn, std::size_t reason = tls_closed);

  // close.cpp
  void begin_drain(Connection& conn);
  void maybe_finish_drain(Connection& conn);
  void check_timeouts(Connection& conn);
  // Frees the slot once it is closing with nothing in flight. Called from
  // after_batch alone: whatever closes a slot, or completes one of its
  // operations while it closes, marks it dirty.
  void maybe_release(Connection& conn);

  const Options& options_;
  const AppConfig& app_config_;
  const Cors& cors_;
  ShardCounters& counters_;
  const std::span<const ShardCounters* const> all_shards_;
  tls::ServerContext* const tls_;
  const bool zero_copy_;
  http::RequestParser::Limits limits_;
  io::SlotTable<Connection>& table_;
  io::DirtyList& dirty_;
  ConnectionIo& io_;

  // Output blocks, lent to busy connections; those that found none wait in
  // arrival order.
  OutputPool output_pool_;
  // Rings of held input, lent to paused connections (as many as slots).
  io::SlotTable<HeldBlock> held_blocks_;
  std::uint32_t held_rings_lent_ = 0;
  std::uint32_t held_buffers_ = 0;  // provided buffers held by paused connections
  char* spill_ = nullptr;           // spill_blocks x recv_buffer_bytes
  bool spill_touched_ = false;      // pages of spill_ resident since the last give-back
  std::vector<std::uint32_t> spill_free_;
  // HTTPS: a record's plaintext, read here and parsed at once (what the
  // parser leaves is copied to spill blocks and held).
  std::unique_ptr<char[]> tls_plain_;
  std::uint32_t tls_handshakes_ = 0;  // in progress now

  std::unique_ptr<App> app_;  // built on the shard's thread, so its memory is the shard's
  http::DateCache date_;
  FramingCache framing_;
  std::uint64_t now_ms_ = 0;
  std::int64_t wall_s_ = 0;  // Unix time, refreshed with the Date line
  bool stopping_ = false;
};

}  // namespace ringhttp::server::http1
