// The load session's set-up, its part of the worker's loop (the batch's
// after-work, the tick, the stop), and the counting every response and
// error goes through.

#include "client/load/session.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "client/load/clock.hpp"
#include "client/tls_config.hpp"

namespace ringhttp::client {

LoadSession::LoadSession(const Options& options, const RequestBytes& request, const WorkerPlan& plan,
                         WorkerResults& results)
    : options_(options),
      request_(request),
      plan_(plan),
      stats_(results.stats),
      live_(results.live),
      gave_up_(results.gave_up),
      tls_protocol_(results.tls_protocol),
      tls_cipher_(results.tls_cipher),
      batch_wait_(options.batch_wait_auto ? std::nullopt : std::optional<std::uint32_t>(options.batch_wait_us)) {}

LoadSession::~LoadSession() = default;

void LoadSession::end_connections() {
  for (std::uint32_t i = 0; table_ != nullptr && i < table_->constructed(); ++i) {
    Connection& conn = (*table_)[i];
    // HTTP/2: the streams still open end now, while this session (which
    // their ends report to, and ignores for a socket no longer open) lives.
    conn.state = ConnState::idle;
    if (conn.h2 != nullptr) conn.h2->session.close();
  }
}

std::string LoadSession::start(const Timeline& timeline, io::SlotTable<Connection>& table, io::DirtyList& dirty,
                               LinkIo& io) {
  timeline_ = timeline;
  table_ = &table;
  dirty_ = &dirty;
  io_ = &io;
  if (options_.target.scheme == Scheme::https) {
    std::string error;
    tls_ = tls::ClientContext::make(tls_config(options_), error);
    if (tls_ == nullptr) return "TLS: " + error;
    plaintext_.resize(tls::record_plaintext_bytes_max);
  }
  parser_config_.expected_body = request_.expected_body(0);  // set again for each send
  h2_requests_ = request_.h2();
  if (h2_requests_ != nullptr) {
    h2_fields_.resize(h2_requests_->fields_max());
    h2_retry_.reserve(std::size_t(plan_.connections) * options_.max_streams);
  }
  // Workers start at different points of a run's distinct requests, so that
  // they do not send the same ones at the same time.
  next_request_ = std::size_t(std::uint64_t(plan_.index) * request_.distinct() / options_.threads);
  varying_bodies_ = options_.check_body && request_.distinct() > 1;
  parser_config_.check_body = options_.check_body;
  parser_config_.head_request = request_.head_request();
  now_ns_ = monotonic_ns();
  next_tick_ns_ = now_ns_ + tick_ns;
  measuring_ = now_ns_ >= timeline_.measure_ns;  // no warm-up: connect errors count from the start
  if (options_.keeps_intervals()) {
    interval_.emplace();
    interval_end_ns_ = timeline_.measure_ns + log_interval_ns;
    // One sparse interval a second; reserved so that a timed run adds none.
    if (timeline_.end_ns != UINT64_MAX) {
      stats_.intervals.reserve((timeline_.end_ns - timeline_.measure_ns) / log_interval_ns + 2);
    }
  }
  if (options_.rate > 0) {
    schedule_ = ScheduleCursor(timeline_.start_ns, options_.rate / options_.pipeline, options_.connections,
                               plan_.first_global_connection, plan_.connections);
  }
  for (std::uint32_t i = 0; i < plan_.connections; ++i) {
    // Every slot is taken at once and kept: a reconnect renews it in place.
    Connection& conn = *table.acquire();
    assert(conn.slot == i);
    conn.session = this;
    conn.global_index = plan_.first_global_connection + i;
    conn.address_index = plan_.first_address;
    if (tls_ != nullptr) {
      // Not zeroed: pages the connection never writes to cost nothing.
      conn.tls_out = std::make_unique_for_overwrite<char[]>(tls_out_bytes);
      conn.tls_box.lend(conn.tls_out.get(), tls_out_bytes);
    }
    if (h2_requests_ != nullptr) conn.h2 = std::make_unique<H2Link>(conn, options_.max_streams);
    // With -p, batches are paced (options checked that rate / pipeline is
    // whole): each slot of the schedule carries -p requests.
    if (options_.rate > 0)
      conn.pacing =
          Pacing(timeline_.start_ns, options_.rate / options_.pipeline, options_.connections, conn.global_index);
    connect(conn);
  }
  return {};
}

void LoadSession::on_wake(std::uint64_t now_ns) {
  now_ns_ = now_ns;
  // Before dispatch: responses seen in this batch belong to the interval
  // that holds now_ns_.
  while (interval_ && measuring_ && !stopping_ && now_ns_ >= interval_end_ns_) close_interval(interval_end_ns_);
}

bool LoadSession::done() const {
  if (!stopping_) return false;
  return open_sockets_ == 0 || now_ns_ >= stop_deadline_ns_;
}

std::uint64_t LoadSession::wait_ns() const {
  std::uint64_t target = next_tick_ns_;
  if (!measuring_) target = std::min(target, timeline_.measure_ns);
  if (!stopping_) target = std::min(target, timeline_.end_ns);
  // Only connections that may still send: a -n share that is all sent must
  // not keep a past due time here, or the loop would spin until it ends.
  if (options_.rate > 0 && !stopping_ && may_send_more()) target = std::min(target, schedule_.due_ns());
  return target > now_ns_ ? target - now_ns_ : 0;
}

void LoadSession::before_dirty() {
  if (!measuring_ && now_ns_ >= timeline_.measure_ns) {
    // Warm-up is over: it ran the same loop, and now none of it counts.
    stats_.reset();        // keeps the intervals' reserved capacity
    io_->reset_syscalls();  // the worker's own thread: nobody else reads them
    if (interval_) interval_->reset();
    measuring_ = true;
  }
  if (!stopping_ && (now_ns_ >= timeline_.end_ns || stop_requested)) begin_stop();
  // -n: every request of this worker's share is answered or failed.
  if (!stopping_ && plan_.requests > 0 && requests_done_ >= plan_.requests) begin_stop();
}

void LoadSession::after_dirty(Connection& conn) {
  // Closed once nothing is in flight; marked again then, for its reconnect.
  if (conn.state == ConnState::closing) return maybe_release(conn);
  if (conn.h2 != nullptr) h2_send(conn);  // what the batch's responses freed (h2_receive)
  if (io::rearm_due(conn) && connected(conn)) arm_recv(conn);
  // A slot reconnects only while requests remain to be sent (-n).
  if (conn.state == ConnState::idle && !stopping_ && may_send_more() && now_ns_ >= conn.reconnect_at_ns) {
    connect(conn);
  }
}

void LoadSession::after_batch() {
  // The open model: every slot due by now, in order, its connection sending
  // if it is free (one that is not sends as its answers arrive).
  if (options_.rate > 0) {
    while (!stopping_ && may_send_more() && schedule_.due_ns() <= now_ns_) {
      maybe_send((*table_)[schedule_.connection()]);
      schedule_.advance();
    }
  }
  if (now_ns_ >= next_tick_ns_) on_tick();
}

void LoadSession::on_tick() {
  next_tick_ns_ = now_ns_ + tick_ns;
  update_batch_wait();
  for (std::uint32_t i = 0; i < plan_.connections; ++i) {
    Connection& conn = (*table_)[i];
    switch (conn.state) {
      case ConnState::idle:
        if (!stopping_ && may_send_more() && now_ns_ >= conn.reconnect_at_ns) connect(conn);
        break;
      case ConnState::connecting:
        if (now_ns_ >= conn.deadline_ns) fail(conn, ErrorClass::timeout);
        break;
      case ConnState::handshake:
      case ConnState::open:
        if (io::rearm_due(conn)) arm_recv(conn);
        io_->resume_parked_send(conn);
        if (conn.h2 != nullptr && conn.state == ConnState::open) {
          h2_check_deadlines(conn);
          break;
        }
        // A handshake has the connect's deadline; requests their own.
        if ((conn.state == ConnState::handshake || conn.outstanding > 0) && now_ns_ >= conn.deadline_ns) {
          fail(conn, ErrorClass::timeout);
        }
        break;
      case ConnState::closing: break;
    }
  }
}

// The waits' window until the next tick (client/load/batch_wait.hpp), and
// the longest of the measured window, which the report states.
void LoadSession::update_batch_wait() {
  if (!io_->can_batch_wait()) return;
  const std::uint32_t us = batch_wait_.next();
  io_->set_batch_wait(us, BatchWait::batch);
  if (measuring_ && !stopping_) stats_.batch_wait_us_max = std::max(stats_.batch_wait_us_max, us);
}

void LoadSession::begin_stop() {
  if (stopping_) return;
  if (interval_ && measuring_) close_interval(std::min(now_ns_, timeline_.end_ns));
  stopping_ = true;
  stop_deadline_ns_ = now_ns_ + stop_drain_ns;
  if (measuring_) stats_.syscalls = io_->syscalls();  // the window's, not the stop's
  // Responses still on their way are neither counted nor failed: the run's
  // window has ended.
  for (std::uint32_t i = 0; i < plan_.connections; ++i) abort((*table_)[i]);
}

}  // namespace ringhttp::client
