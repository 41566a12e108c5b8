#include "client/load/worker.hpp"

#include <sys/prctl.h>

#include <cassert>
#include <cstring>

#include "client/load/clock.hpp"
#include "core/epoll/backend.hpp"
#include "core/net/cpu.hpp"
#include "core/uring/backend.hpp"

namespace ringhttp::client {
namespace {

using io::Op;

__kernel_timespec to_timespec(std::uint64_t ns) {
  return __kernel_timespec{static_cast<long long>(ns / 1'000'000'000), static_cast<long long>(ns % 1'000'000'000)};
}

}  // namespace

std::unique_ptr<WorkerBase> make_worker(const Options& options, const RequestBytes& request,
                                        const uring::Features& features, const WorkerPlan& plan) {
  if (options.backend == io::BackendKind::epoll) {
    return std::make_unique<Worker<epoll::Backend>>(options, request, features, plan);
  }
  return std::make_unique<Worker<uring::Backend>>(options, request, features, plan);
}

WorkerBase::~WorkerBase() {
  if (thread_.joinable()) thread_.join();
}

void WorkerBase::start(const Timeline& timeline, std::latch& ready) {
  timeline_ = timeline;
  thread_ = std::thread([this, &ready] {
    const bool ok = setup();
    ready.count_down();
    if (ok) run();
    finished_.store(true, std::memory_order_release);
  });
}

void WorkerBase::join() {
  if (thread_.joinable()) thread_.join();
}

template <typename Backend>
Worker<Backend>::Worker(const Options& options, const RequestBytes& request, const uring::Features& features,
                        const WorkerPlan& plan)
    : options_(options), features_(features), plan_(plan), session_(options, request, plan, results_) {}

template <typename Backend>
Worker<Backend>::~Worker() {
  if (thread_.joinable()) thread_.join();
  for (std::uint32_t i = 0; i < link_.engine.table().constructed(); ++i) {
    Connection& conn = link_.engine.table()[i];
    if (conn.fd >= 0) link_.engine.backend().close(conn.fd, conn.slot);
  }
  session_.end_connections();
}

template <typename Backend>
bool Worker<Backend>::setup() {
  if (const int rc = net::pin_this_thread(plan_.cpu); rc != 0) {
    results_.error = "cannot pin worker " + std::to_string(plan_.index) + " to CPU " + std::to_string(plan_.cpu) +
                     ": " + std::strerror(rc);
    return false;
  }
  // Paced sends wake on a timeout: the default 50 us timer slack would make
  // every request late by up to that much, which corrected latency counts.
  if (options_.rate > 0) ::prctl(PR_SET_TIMERSLACK, timer_slack_ns, 0, 0, 0);
  // Created here, on the thread that will be its only submitter.
  typename io::Engine<Backend, Connection>::Config engine_config;
  engine_config.slots = plan_.connections;
  engine_config.enobufs_in_a_row_max = enobufs_in_a_row_max;
  if (std::string e = link_.engine.init(backend_config(), engine_config); !e.empty()) {
    results_.error = std::move(e);
    return false;
  }
  if (std::string e = session_.start(timeline_, link_.engine.table(), link_.engine.dirty(), link_); !e.empty()) {
    results_.error = std::move(e);
    return false;
  }
  return true;
}

template <typename Backend>
void Worker<Backend>::run() { link_.engine.run(*this); }

template <typename Backend>
std::optional<__kernel_timespec> Worker<Backend>::wait_limit() const { return to_timespec(session_.wait_ns()); }

template <typename Backend>
void Worker<Backend>::on_wake() { session_.on_wake(monotonic_ns()); }

template <typename Backend>
void Worker<Backend>::dispatch(const io::Completion& c) {
  const io::Tag t = io::decode(c.user_data);
  Connection* found = link_.engine.find(t);
  // Impossible while sockets close only at zero in-flight operations; a
  // stale buffer still goes back so that the pool cannot leak.
  assert(found != nullptr && "a completion for an earlier socket of the slot");
  if (found == nullptr) {
    if (t.op == Op::recv) link_.engine.drop_receive(c);
    return;
  }
  Connection& conn = *found;
  switch (t.op) {
    case Op::connect: return session_.on_connected(conn, link_.engine.on_connect(conn, c));
    case Op::recv: return on_recv(conn, c);
    case Op::send: return session_.on_sent(conn, link_.engine.on_send(conn, c));
    case Op::cancel:
      link_.engine.on_cancel(conn, c);
      if (conn.state == ConnState::closing) link_.engine.mark_dirty(conn);  // the session closes it after the batch
      return;
    default: break;
  }
  assert(false && "unknown client completion");
}

template <typename Backend>
void Worker<Backend>::on_recv(Connection& conn, const io::Completion& c) {
  const io::Received r = link_.engine.on_receive(conn, c);
  if (r.kind == io::Received::Kind::data) {
    session_.count_received(r.res);
    // A bundle's pieces (one buffer each) in order, as separate receives;
    // each buffer goes back once the session has read it.
    io::Received piece = r;
    do {
      session_.on_received_piece(conn, piece.data, piece.len);
      link_.engine.give_back(piece.buffer_id);
    } while (link_.engine.next_piece(piece));
  }
  session_.after_receive(conn, r.kind);
}

template <typename Backend>
void Worker<Backend>::after_batch() {
  session_.stop_requested = stop_requested_.load(std::memory_order_relaxed);
  session_.before_dirty();
  const auto work = [this](Connection& conn) { session_.after_dirty(conn); };
  link_.engine.drain_dirty(work);
  session_.after_batch();
  link_.engine.drain_dirty(work);  // what the tick and the paced sends closed
}

template <typename Backend>
typename Backend::Config Worker<Backend>::backend_config() const {
  typename Backend::Config config;
  if constexpr (Backend::kind == io::BackendKind::uring) {
    config.entries = options_.ring_entries;
    config.features = features_;
    config.cpu = plan_.cpu;
  }
  config.recv_buffers = recv_buffers;
  config.recv_buffer_bytes = recv_buffer_bytes;
  config.slots = plan_.connections;
  return config;
}

template class Worker<uring::Backend>;
template class Worker<epoll::Backend>;

}  // namespace ringhttp::client
