#pragma once
// The load session: what a worker's connections do between the engine
// under them and the run's figures, compiled once whatever the backend.
// The worker (worker.hpp) hands it what happened to a connection (a
// connect's result, bytes received, a send done, the tick) and it decides:
// open, handshake, send the next request or batch (paced in the open
// model), check each response, count it, fail, close, reconnect. It asks
// for I/O through LinkIo (the worker's engine), and never sees a ring, an
// epoll descriptor or a user_data.
//
// One concern per file: session.cpp (set-up, the batch's and the tick's
// work, stop, counting), session_connect.cpp (connect and the TLS
// handshake), session_receive.cpp (receive, TLS reads, responses checked),
// session_send.cpp (requests and batches, TLS writes), session_close.cpp
// (fail, abort, release), session_h2.cpp (HTTP/2's side of each).

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/load/batch_wait.hpp"
#include "client/load/connection.hpp"
#include "client/load/pacing.hpp"
#include "client/load/request.hpp"
#include "client/options.hpp"
#include "client/results/stats.hpp"
#include "core/io/batch_loop.hpp"
#include "core/io/completion.hpp"
#include "core/io/engine.hpp"
#include "core/io/slot_table.hpp"
#include "core/tls/context.hpp"

namespace ringhttp::client {

// When the run's phases begin, on the monotonic clock; shared by all workers
// so that they switch from warm-up to measurement at the same instant
// without talking to each other.
struct Timeline {
  std::uint64_t start_ns = 0;
  std::uint64_t measure_ns = 0;       // warm-up ends: every figure is reset
  std::uint64_t end_ns = UINT64_MAX;  // stop sending; responses after it are not counted
};

struct WorkerPlan {
  int index = 0;
  int cpu = 0;
  std::uint32_t connections = 0;
  std::uint32_t first_global_connection = 0;
  std::uint64_t requests = 0;  // -n: this worker's share; 0 for a timed run
  std::uint32_t first_address = 0;  // the target's address every connection tries first
};

// The I/O a load session asks for: the worker's engine and backend do it.
class LinkIo {
 public:
  // A new socket for the slot: its descriptor, or -errno.
  virtual int open_socket(const net::Address& address, Connection& conn) = 0;
  // The slot takes socket `fd` (a new generation) and connects it.
  virtual void connect(Connection& conn, int fd, const net::Address& address) = 0;
  virtual void arm_receive(Connection& conn) = 0;
  virtual void send(Connection& conn, const char* data, std::uint32_t len) = 0;
  virtual void cancel_all(Connection& conn) = 0;
  // Closing with nothing in flight (io::closed): the socket closed; the
  // slot stays the session's.
  virtual void close(Connection& conn) = 0;
  // On the tick: a send that wrote nothing twice in a row is made again.
  virtual void resume_parked_send(Connection& conn) = 0;
  // The backend's system-call counts, and its batch wait (--batch-wait).
  virtual io::SyscallCounts syscalls() const = 0;
  virtual void reset_syscalls() = 0;
  virtual bool can_batch_wait() const = 0;
  virtual void set_batch_wait(std::uint32_t us, std::uint32_t batch) = 0;

 protected:
  ~LinkIo() = default;
};

// What the runner reads of a worker, whichever backend it runs on: its
// figures, written by its thread and read after join (live_ while it runs).
struct WorkerResults {
  std::string tls_protocol;
  std::string tls_cipher;
  WorkerStats stats;
  LiveCounters live;
  std::string error;
  std::string gave_up;
};

class LoadSession {
 public:
  static constexpr std::uint64_t log_interval_ns = 1'000'000'000;  // --hdr-log, --threshold-interval: one a second
  // https: a connection's output area holds two full records, so that a
  // batch leaves in large sends, with room left for what reads append
  // while a send is in flight.
  static constexpr std::uint32_t tls_out_bytes = 2 * tls::wire_out_record_bytes;
  // https: received ciphertext held while the output area has no room for
  // what reading it writes: the rest of a receive, and what arrives until
  // the area's send is done. A server that sends more than this before
  // that send is done (a flood of key updates) fails the connection as a
  // tls error: the held bytes are bounded, and none is dropped silently.
  // Four of the worker's receive buffers (16 KiB each).
  static constexpr std::uint32_t tls_held_bytes_max = 4 * 16 * 1024;
  // The loop wakes at least this often to notice timeouts and the end.
  static constexpr std::uint64_t tick_ns = 10'000'000;
  static constexpr std::uint64_t connect_backoff_ns = 10'000'000;
  // After this many connects in a row fail without one succeeding, the
  // worker gives up (the server is gone) instead of spinning until -d.
  static constexpr std::uint32_t connect_failures_in_a_row_max = 200;
  // Cancelled operations must report before the ring is torn down; a kernel
  // that takes longer than this to cancel is not waited for.
  static constexpr std::uint64_t stop_drain_ns = 2'000'000'000;

  LoadSession(const Options& options, const RequestBytes& request, const WorkerPlan& plan, WorkerResults& results);
  ~LoadSession();
  LoadSession(const LoadSession&) = delete;
  LoadSession& operator=(const LoadSession&) = delete;

  // On the worker's thread, once its engine is set up: every slot taken
  // and connecting. Returns what failed, or "".
  std::string start(const Timeline& timeline, io::SlotTable<Connection>& table, io::DirtyList& dirty, LinkIo& io);

  // ---- The worker's loop (session.cpp).
  bool done() const;
  std::uint64_t wait_ns() const;  // until the next due time: a tick, a phase's end, a paced send
  void on_wake(std::uint64_t now_ns);
  void before_dirty();               // after a batch's completions: phases, the stop
  void after_dirty(Connection& conn);  // each slot the batch touched
  void after_batch();                // the open model's due sends, the tick (then the slots they touched)
  bool stop_requested = false;       // set by the worker from the runner's request

  // ---- A connection's completions.
  void on_connected(Connection& conn, std::int32_t res);
  void count_received(std::int32_t bytes);
  // One piece of a receive (its buffer goes back after), then its end.
  void on_received_piece(Connection& conn, const char* data, std::uint32_t len);
  void after_receive(Connection& conn, io::Received::Kind kind);
  void on_sent(Connection& conn, const io::Sent& sent);
  // The worker is going: every connection ends (its sockets are closed).
  void end_connections();

  // ---- The parsers' callbacks (Connection and H2Link route them here).
  void on_response(Connection& conn, const http::ResponseHead& head);
  // HTTP/2: a stream of the connection ended (its place is free again),
  // and the server said GOAWAY.
  void on_stream_done(Connection& conn, const StreamRequest& stream, const http2::StreamResult& result);
  void on_goaway(Connection& conn, std::int32_t last_stream_id, std::uint32_t error_code);

 private:
  // session.cpp
  void on_tick();
  void begin_stop();
  void close_interval(std::uint64_t end_ns);
  void update_batch_wait();
  bool may_send_more() const;
  void count_error(ErrorClass error);
  void finish_requests(std::uint64_t n) { requests_done_ += n; }
  void record_latency(std::uint64_t sent_at_ns, std::uint64_t intended_ns);
  void count_response(std::uint16_t status, bool body_matches);
  // A socket that reads and may send: open, or in its TLS handshake.
  static bool connected(const Connection& conn) {
    return conn.state == ConnState::open || conn.state == ConnState::handshake;
  }

  // session_connect.cpp
  void connect(Connection& conn);
  void become_open(Connection& conn);
  void start_handshake(Connection& conn);
  void handshake_done(Connection& conn);
  void handshake_failed(Connection& conn, const std::string& reason);

  // session_receive.cpp
  void arm_recv(Connection& conn);
  void consume(Connection& conn, const char* data, std::uint32_t len);
  void consume_plaintext(Connection& conn, const char* data, std::uint32_t len);
  void read_tls(Connection& conn, const char*& in, std::size_t& in_len);
  void read_held(Connection& conn);
  void hold_ciphertext(Connection& conn, const char* data, std::size_t len);
  void on_eof(Connection& conn);
  void on_peer_closed(Connection& conn);

  // session_send.cpp
  void maybe_send(Connection& conn);
  void submit_send(Connection& conn);
  bool next_send_range(Connection& conn);
  void pump_tls(Connection& conn);
  void flush_tls(Connection& conn);

  // session_close.cpp
  void fail(Connection& conn, ErrorClass error);
  void abort(Connection& conn);
  void give_back_quota(Connection& conn);
  // Closes the socket once it is closing with nothing in flight. Called
  // from after_dirty alone: whatever closes a connection, or completes one
  // of its operations while it closes, marks it dirty.
  void maybe_release(Connection& conn);

  // session_h2.cpp: HTTP/2's side of opening, receiving, sending and
  // timing out.
  void h2_open(Connection& conn);
  bool h2_alpn_chosen(Connection& conn);
  void h2_receive(Connection& conn, const char* data, std::uint32_t len);
  void h2_break(Connection& conn);
  void h2_flush(Connection& conn);
  void h2_send(Connection& conn);
  bool h2_submit(Connection& conn, const StreamRequest& request);
  bool h2_next_output(Connection& conn);
  void h2_check_deadlines(Connection& conn);
  void h2_peer_closed(Connection& conn);

  const Options& options_;
  const RequestBytes& request_;
  const WorkerPlan plan_;
  WorkerStats& stats_;
  LiveCounters& live_;
  std::string& gave_up_;
  std::string& tls_protocol_;
  std::string& tls_cipher_;
  Timeline timeline_;
  io::SlotTable<Connection>* table_ = nullptr;
  io::DirtyList* dirty_ = nullptr;
  LinkIo* io_ = nullptr;
  http::ResponseParser::Config parser_config_{};

  // https: this worker's TLS settings and the session it resumes (one per
  // worker: nothing shared while the run goes), and where records decrypt to.
  std::unique_ptr<tls::ClientContext> tls_;
  std::vector<char> plaintext_;
  // HTTP/2: the run's requests as fields, and where a request's field
  // pointers are written for its submit (nghttp2 copies them).
  const H2Requests* h2_requests_ = nullptr;
  std::vector<nghttp2_nv> h2_fields_;
  // HTTP/2: requests a server refused (REFUSED_STREAM, or above its
  // GOAWAY's last stream), sent again before any new one by whichever
  // connection opens a stream next, with their first send's times. Each
  // was in flight, so the worker's streams bound them (reserved at start).
  std::vector<StreamRequest> h2_retry_;

  ScheduleCursor schedule_;  // the open model: the next due slot of this worker's connections
  BatchWait batch_wait_;     // --batch-wait: the window of the waits, renewed each tick

  std::uint64_t now_ns_ = 0;
  std::uint64_t next_tick_ns_ = 0;
  bool measuring_ = false;
  bool stopping_ = false;
  std::uint64_t stop_deadline_ns_ = 0;
  std::uint32_t open_sockets_ = 0;
  std::uint64_t requests_sent_ = 0;  // -n: requests handed to sends
  // -n with --requests-per-connection: requests promised to open sockets'
  // quotas, so that no socket opens for requests others will send.
  std::uint64_t requests_reserved_ = 0;
  std::size_t next_request_ = 0;     // the next of the run's distinct requests to send
  bool varying_bodies_ = false;      // each response has its own expected body (a placeholder in it)
  std::uint64_t requests_done_ = 0;  // -n: answered or failed
  std::uint32_t connect_failures_in_a_row_ = 0;
  std::optional<Histogram> interval_;  // --hdr-log, --threshold-interval: the current interval's latency
  std::uint64_t interval_index_ = 0;
  std::uint64_t interval_end_ns_ = UINT64_MAX;
};

// Counting, on every response's path: defined here, so that each
// caller's file inlines it.

inline bool LoadSession::may_send_more() const { return plan_.requests == 0 || requests_sent_ < plan_.requests; }

inline void LoadSession::count_error(ErrorClass error) {
  if (!measuring_ || stopping_) return;
  ++stats_.errors[std::size_t(error)];
  live_.errors.add();
}

inline void LoadSession::record_latency(std::uint64_t sent_at_ns, std::uint64_t intended_ns) {
  const std::uint64_t latency_ns = now_ns_ - (options_.rate > 0 ? intended_ns : sent_at_ns);
  stats_.latency.record(latency_ns);
  if (options_.rate > 0) stats_.uncorrected.record(now_ns_ - sent_at_ns);
  if (interval_) interval_->record(latency_ns);
}

// A complete response, in the window: counted by status, and checked.
inline void LoadSession::count_response(std::uint16_t status, bool body_matches) {
  ++stats_.responses;
  live_.responses.add();
  if (status >= 100 && status < 100 * (status_classes + 1)) ++stats_.statuses[status / 100 - 1];
  const bool status_ok = options_.expect_status.empty()
                             ? status >= 200 && status < 300
                             : std::find(options_.expect_status.begin(), options_.expect_status.end(), status) !=
                                   options_.expect_status.end();
  if (!status_ok) count_error(ErrorClass::status);
  if (!body_matches) count_error(ErrorClass::body);
}

}  // namespace ringhttp::client
