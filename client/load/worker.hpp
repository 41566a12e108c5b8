#pragma once
// A worker: one thread pinned to one CPU, with its own io_uring, its own
// provided receive buffers and its share of the connections. Workers share
// nothing while they run; their stats are merged after join.

#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/load/batch_wait.hpp"
#include "client/load/connection.hpp"
#include "client/load/pacing.hpp"
#include "client/load/request.hpp"
#include "client/options.hpp"
#include "client/results/stats.hpp"
#include "core/tls/context.hpp"
#include "core/io/engine.hpp"
#include "core/uring/batch_loop.hpp"
#include "core/uring/features.hpp"
#include "core/uring/user_data.hpp"

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

// What the runner sees of a worker, whichever backend it runs on; the
// worker itself (below) is a template over its backend, so that no I/O
// operation goes through a virtual call.
class WorkerBase {
 public:
  static constexpr std::uint64_t log_interval_ns = 1'000'000'000;  // --hdr-log, --threshold-interval: one a second

  virtual ~WorkerBase();
  // Starts the thread; counts `ready` down once set up (or failed: see error()).
  void start(const Timeline& timeline, std::latch& ready);
  void join();
  // From another thread: stop sending and finish, as at the end of the run
  // (noticed within one tick).
  void request_stop() { stop_requested_.store(true, std::memory_order_relaxed); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  const std::string& error() const { return error_; }
  const std::string& gave_up() const { return gave_up_; }
  const WorkerStats& stats() const { return stats_; }
  // https: the protocol and cipher of this worker's first handshake (empty
  // before one completes).
  const std::string& tls_protocol() const { return tls_protocol_; }
  const std::string& tls_cipher() const { return tls_cipher_; }
  const LiveCounters& live() const { return live_; }

  // A connection's parser saw a whole response.
  virtual void on_response(Connection& conn, const http::ResponseHead& head) = 0;
  // HTTP/2: a stream of the connection ended (its place is free again),
  // and the server said GOAWAY.
  virtual void on_stream_done(Connection& conn, const StreamRequest& stream, const http2::StreamResult& result) = 0;
  virtual void on_goaway(Connection& conn, std::int32_t last_stream_id, std::uint32_t error_code) = 0;

 protected:
  virtual bool setup() = 0;
  virtual void run() = 0;

  Timeline timeline_;
  std::string tls_protocol_;
  std::string tls_cipher_;
  WorkerStats stats_;
  LiveCounters live_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_requested_{false};
  std::thread thread_;
  std::string error_;
  std::string gave_up_;
};

// A worker on the io_uring backend (core/uring/backend.hpp) or the epoll
// one (core/epoll/backend.hpp), as --backend says.
std::unique_ptr<WorkerBase> make_worker(const Options& options, const RequestBytes& request,
                                        const uring::Features& features, const WorkerPlan& plan);

template <typename Backend>
class Worker final : public WorkerBase {
 public:
  // Receive buffers per worker. 16 KiB lets a large response arrive in few
  // completions; 512 of them cover many connections' bursts.
  static constexpr std::uint32_t recv_buffers = 512;
  static constexpr std::uint32_t recv_buffer_bytes = 16 * 1024;
  // https: a connection's output area holds two full records, so that a
  // batch leaves in large sends, with room left for what reads append
  // while a send is in flight.
  static constexpr std::uint32_t tls_out_bytes = 2 * tls::wire_out_record_bytes;
  // https: received ciphertext held while the output area has no room for
  // what reading it writes: the rest of a receive, and what arrives until
  // the area's send is done. A server that sends more than this before
  // that send is done (a flood of key updates) fails the connection as a
  // tls error: the held bytes are bounded, and none is dropped silently.
  static constexpr std::uint32_t tls_held_bytes_max = 4 * recv_buffer_bytes;
  static_assert(tls_held_bytes_max >= recv_buffer_bytes, "the rest of a receive fits");
  // The loop wakes at least this often to notice timeouts and the end.
  static constexpr std::uint64_t tick_ns = 10'000'000;
  static constexpr std::uint64_t connect_backoff_ns = 10'000'000;
  // After this many connects in a row fail without one succeeding, the
  // worker gives up (the server is gone) instead of spinning until -d.
  static constexpr std::uint32_t connect_failures_in_a_row_max = 200;
  // Cancelled operations must report before the ring is torn down; a kernel
  // that takes longer than this to cancel is not waited for.
  static constexpr std::uint64_t stop_drain_ns = 2'000'000'000;
  static constexpr std::uint8_t enobufs_in_a_row_max = 8;
  static constexpr unsigned long timer_slack_ns = 1;               // rate model: wake when asked

  Worker(const Options& options, const RequestBytes& request, const uring::Features& features, const WorkerPlan& plan);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void on_response(Connection& conn, const http::ResponseHead& head) override;
  void on_stream_done(Connection& conn, const StreamRequest& stream, const http2::StreamResult& result) override;
  void on_goaway(Connection& conn, std::int32_t last_stream_id, std::uint32_t error_code) override;

 private:
  bool setup() override;
  void run() override;
  // The batch loop's hooks (core/uring/batch_loop.hpp).
  template <typename Io, typename Owner>
  friend void uring::run_batches(Io& io, Owner& owner);
  bool done() const;
  std::optional<__kernel_timespec> wait_limit() const;  // the next due time: a tick, a phase's end, a paced send
  void on_wake();
  void dispatch(const uring::Completion& c);
  void after_batch();
  void on_tick();
  void begin_stop();
  void close_interval(std::uint64_t end_ns);
  void mark_dirty(Connection& conn);
  std::uint64_t wait_ns() const;
  typename Backend::Config backend_config() const;

  void connect(Connection& conn);
  void on_connect(Connection& conn, const io::Completion& c);
  void arm_recv(Connection& conn);
  void on_recv(Connection& conn, const io::Completion& c);
  void consume(Connection& conn, const char* data, std::uint32_t len);
  void consume_plaintext(Connection& conn, const char* data, std::uint32_t len);
  void on_eof(Connection& conn);
  void become_open(Connection& conn);
  void start_handshake(Connection& conn);
  void handshake_done(Connection& conn);
  void handshake_failed(Connection& conn, const std::string& reason);
  void read_tls(Connection& conn);
  void read_held(Connection& conn);
  void hold_ciphertext(Connection& conn, const char* data, std::size_t len);
  void pump_tls(Connection& conn);
  void flush_tls(Connection& conn);
  void tls_sent(Connection& conn);
  bool next_send_range(Connection& conn);
  // A socket that reads and may send: open, or in its TLS handshake.
  static bool connected(const Connection& conn) {
    return conn.state == ConnState::open || conn.state == ConnState::handshake;
  }
  void on_peer_closed(Connection& conn);
  void maybe_send(Connection& conn);
  void submit_send(Connection& conn);
  void on_send(Connection& conn, const io::Completion& c);
  void fail(Connection& conn, ErrorClass error);
  void abort(Connection& conn);
  void maybe_release(Connection& conn);
  void give_back_quota(Connection& conn);
  void count_error(ErrorClass error);
  void finish_requests(std::uint64_t n) { requests_done_ += n; }
  bool may_send_more() const;
  // HTTP/2 (worker_h2.cpp): the session's side of opening, receiving,
  // sending and timing out.
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
  void record_latency(std::uint64_t sent_at_ns, std::uint64_t intended_ns);
  void update_batch_wait();
  void count_response(std::uint16_t status, bool body_matches);

  const Options& options_;
  const RequestBytes& request_;
  const uring::Features features_;
  const WorkerPlan plan_;
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

  // The connections' I/O: every slot acquired at start, renewed per socket.
  io::Engine<Backend, Connection> engine_;
  ScheduleCursor schedule_;  // the open model: the next due slot of this worker's connections

  BatchWait batch_wait_;  // --batch-wait: the window of the waits, renewed each tick

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

}  // namespace ringhttp::client
