#pragma once
// A worker: one thread pinned to one CPU, with its own io_uring (or epoll),
// its own provided receive buffers and its share of the connections.
// Workers share nothing while they run; their figures are merged after
// join. What a connection does is the load session's (session.hpp); the
// worker is its thread, its engine and the dispatch of every completion
// through the engine to the session.

#include <atomic>
#include <cstdint>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "client/load/connection.hpp"
#include "client/load/engine_link.hpp"
#include "client/load/request.hpp"
#include "client/load/session.hpp"
#include "client/options.hpp"
#include "core/io/batch_loop.hpp"
#include "core/io/engine.hpp"
#include "core/io/user_data.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::client {

// What the runner sees of a worker, whichever backend it runs on; the
// worker itself (below) is a template over its backend.
class WorkerBase {
 public:
  static constexpr std::uint64_t log_interval_ns = LoadSession::log_interval_ns;

  virtual ~WorkerBase();
  // Starts the thread; counts `ready` down once set up (or failed: see error()).
  void start(const Timeline& timeline, std::latch& ready);
  void join();
  // From another thread: stop sending and finish, as at the end of the run
  // (noticed within one tick).
  void request_stop() { stop_requested_.store(true, std::memory_order_relaxed); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  const std::string& error() const { return results_.error; }
  const std::string& gave_up() const { return results_.gave_up; }
  const WorkerStats& stats() const { return results_.stats; }
  // https: the protocol and cipher of this worker's first handshake (empty
  // before one completes).
  const std::string& tls_protocol() const { return results_.tls_protocol; }
  const std::string& tls_cipher() const { return results_.tls_cipher; }
  const LiveCounters& live() const { return results_.live; }

 protected:
  virtual bool setup() = 0;
  virtual void run() = 0;

  Timeline timeline_;
  WorkerResults results_;
  std::atomic<bool> finished_{false};
  std::atomic<bool> stop_requested_{false};
  std::thread thread_;
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
  static_assert(LoadSession::tls_held_bytes_max >= recv_buffer_bytes, "the rest of a receive fits");
  static constexpr std::uint8_t enobufs_in_a_row_max = 8;
  static constexpr unsigned long timer_slack_ns = 1;  // rate model: wake when asked

  Worker(const Options& options, const RequestBytes& request, const uring::Features& features, const WorkerPlan& plan);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

 private:
  bool setup() override;
  void run() override;
  // The batch loop's hooks (core/io/batch_loop.hpp).
  template <typename Io, typename Owner>
  friend void io::run_batches(Io& io, Owner& owner);
  bool done() const { return session_.done(); }
  std::optional<__kernel_timespec> wait_limit() const;  // the next due time: a tick, a phase's end, a paced send
  void on_wake();
  void dispatch(const io::Completion& c);
  void after_batch();
  void on_recv(Connection& conn, const io::Completion& c);
  typename Backend::Config backend_config() const;

  const Options& options_;
  const uring::Features features_;
  const WorkerPlan plan_;
  // Declared before the engine, so that it outlives the connections (their
  // HTTP/2 streams report their ends to it).
  LoadSession session_;
  // The connections' I/O: every slot acquired at start, renewed per socket.
  EngineLink<Backend> link_;
};

}  // namespace ringhttp::client
