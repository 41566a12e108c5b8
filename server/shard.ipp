// The shard itself: its start-up, the batch loop (reap, dispatch, then
// after-batch work for the connections the batch touched), accept, the
// tick and the stop. A connection's completions go through the engine to
// the HTTP/1.1 session (server/http1/), which decides what follows;
// shard_db.ipp holds the database pool's operations. The shard is a
// template over its backend: these files hold its definitions, and
// shard_uring.cpp and shard_epoll.cpp instantiate it, one backend each.

#pragma once

#include "server/shard.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <new>

#include "core/net/cpu.hpp"
#include "core/uring/compat.hpp"
#include "core/io/errno_class.hpp"
#include "core/io/user_data.hpp"

namespace ringhttp::server {
namespace shard_detail {

inline std::uint64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000 + std::uint64_t(ts.tv_nsec) / 1'000'000;
}

}  // namespace shard_detail

using io::Op;
using shard_detail::monotonic_ms;

template <typename Backend>
Shard<Backend>::Shard(const Options& options, const AppConfig& app_config, const Cors& cors, int index, int listen_fd,
                      const uring::Features& features, const SendPath& send, tls::ServerContext* tls,
                      ShardCounters& counters, std::span<const ShardCounters* const> all_shards)
    : ShardBase(Backend::kind == io::BackendKind::epoll ? EFD_NONBLOCK : 0),
      options_(options),
      app_config_(app_config),
      cors_(cors),
      index_(index),
      listen_fd_(listen_fd),
      features_(features),
      send_(send),
      tls_(tls),
      counters_(counters),
      all_shards_(all_shards),
      session_({options, app_config, cors, counters, all_shards, tls, send.mode == SendMode::zc}, engine_.table(),
               engine_.dirty(), *this) {}

template <typename Backend>
Shard<Backend>::~Shard() {
  if (thread_.joinable()) thread_.join();
  counters_.syscalls.store(nullptr, std::memory_order_release);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  ::close(listen_fd_);
}

template <typename Backend>
void Shard<Backend>::cancel_accept() {
  for (std::uint32_t i = 0; i < direct_accepts; ++i) {
    if ((accepts_armed_ & (1u << i)) == 0) continue;
    io().cancel(io::encode({Op::accept, shard_slot, i}), io::encode({Op::cancel, shard_slot, 0}));
  }
}

template <typename Backend>
bool Shard<Backend>::setup() {
  const int cpu = options_.cpus[std::size_t(index_)];
  if (const int rc = net::pin_this_thread(cpu); rc != 0) {
    error_ = "cannot pin shard " + std::to_string(index_) + " to CPU " + std::to_string(cpu) + ": " + std::strerror(rc);
    return false;
  }
  if (wake_fd_ < 0) {
    error_ = std::string("eventfd: ") + std::strerror(errno);
    return false;
  }
  // The ring is created here, on the thread that will be its only submitter
  // (SINGLE_ISSUER, DEFER_TASKRUN), and its SQPOLL thread, if any, is bound
  // to this shard's CPU.
  typename Backend::Config config;
  if constexpr (Backend::kind == io::BackendKind::uring) {
    config.entries = options_.ring_entries;
    config.features = features_;
    config.cpu = cpu;
  }
  config.recv_buffers = recv_buffers;
  config.recv_buffer_bytes = recv_buffer_bytes;
  config.slots = options_.connections_max;
  if constexpr (Backend::kind == io::BackendKind::uring) {
    // With fixed-files, the direct descriptors accepts may hold: every
    // connection, those waiting for a reclaimed slot, and a batch of
    // accepts whose connections are refused and closed after it.
    config.accepted_max = options_.connections_max + std::uint32_t(pending_accepts_max) + io::reap_batch_max;
  }
  // The table is reserved whole but only touched slot by slot, so resident
  // memory follows the connections really open.
  typename io::Engine<Backend, Connection>::Config engine_config;
  engine_config.slots = options_.connections_max;
  engine_config.enobufs_in_a_row_max = enobufs_in_a_row_max;
  engine_config.send_mode = send_.mode;
  engine_config.zc_report_usage = send_.zc_report_usage;
  if (std::string e = engine_.init(config, engine_config); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  counters_.syscalls.store(&io().syscalls(), std::memory_order_release);
  now_ms_ = monotonic_ms();
  if (std::string e = session_.init(now_ms_); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  pending_.reserve(pending_accepts_max);
  if (std::string e = start_database(); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  arm_wake();
  arm_tick();
  arm_accept();
  return true;
}

template <typename Backend>
void Shard<Backend>::run() { engine_.run(*this); }

template <typename Backend>
bool Shard<Backend>::done() const { return stopping_ && open_count_ == 0 && accepts_armed_ == 0; }

template <typename Backend>
void Shard<Backend>::on_wake() {
  now_ms_ = monotonic_ms();
  session_.set_now(now_ms_);
}

template <typename Backend>
void Shard<Backend>::dispatch(const io::Completion& c) {
  const io::Tag t = io::decode(c.user_data);
  if (io::is_db(t.op)) [[unlikely]] {
    // The slot names the database connection's socket, in the pool's engine.
    if (t.op == Op::db_cancel && c.res == 0) counters_.operations_cancelled.add();
    if (!db_io_.on_completion(c)) counters_.stale_completions.add();
    return;
  }
  if (t.slot == shard_slot) {
    switch (t.op) {
      case Op::accept: return on_accept(c.res, c.flags, t.generation);
      case Op::tick: return on_tick();
      case Op::wake: return begin_stop();
      case Op::cancel:  // the cancelled operation reports for itself
        if (c.res == 0) counters_.operations_cancelled.add();
        return;
      default: break;
    }
    assert(false && "unknown shard-level completion");
    return;
  }
  Connection* found = engine_.find(t);
  if (found == nullptr || found->state == ConnState::free) {
    // Cannot happen while slots are freed only at zero in-flight operations;
    // counted so a test can prove it stays zero, and a buffer is not leaked.
    counters_.stale_completions.add();
    if (t.op == Op::recv) engine_.drop_receive(c);
    return;
  }
  Connection& conn = *found;
  // A closing slot's completions bring it nearer its release, which the
  // session makes after the batch (the one place a slot is freed): each
  // handler marks such a slot dirty.
  switch (t.op) {
    case Op::recv: return on_recv(conn, c);
    case Op::send:
      // A zero-copy send completes twice under the same tag: its result,
      // then (when the result's flags say `more`) its notification.
      if ((c.flags & io::completion_flags::notification) != 0) {
        return session_.on_notification(conn, engine_.on_send_notification(conn, c));
      }
      return session_.on_sent(conn, engine_.on_send(conn, c));
    case Op::shutdown: return session_.on_shutdown(conn, engine_.on_shutdown(conn, c));
    case Op::cancel:
      // 0: the backend found the operation and stopped it (io_uring's
      // ASYNC_CANCEL, or epoll taking back what was waiting); -ENOENT or
      // -EALREADY: it had completed or was running.
      if (c.res == 0) counters_.operations_cancelled.add();
      counters_.cancellations.add(engine_.on_cancel(conn, c));
      if (conn.state == ConnState::closing) mark_dirty(conn);
      return;
    default: break;
  }
  assert(false && "unknown connection completion");
}

template <typename Backend>
void Shard<Backend>::after_batch() {
  // Results libpq read while sending are delivered first: they mark their
  // connections for the flush below.
  if (db_) db_->after_batch();
  // Cork: everything the batch's receives produced leaves now, one send per
  // connection.
  engine_.drain_dirty([this](Connection& conn) { session_.after_batch(conn); });
  open_pending();
  if (db_) db_->send_queued();
}

// Connections accepted while the table was full take the slots their
// reclaimed predecessors freed. Done here, between batches, never inside a
// handler that may still hold a reference to the slot being freed.
template <typename Backend>
void Shard<Backend>::open_pending() {
  while (!pending_.empty() && !engine_.table().full()) {
    const Accepted accepted = pending_.front();
    pending_.erase(pending_.begin());
    Connection* slot = allocate();
    assert(slot != nullptr);
    start_connection(*slot, accepted);
  }
}

template <typename Backend>
void Shard<Backend>::mark_dirty(Connection& conn) { engine_.mark_dirty(conn); }

// ---------------------------------------------------------------------------
// Shard-level operations.

// Arms what is not armed: the one accept (multishot when the features
// allow), or with fixed-files each of direct_accepts single-shot accepts
// with its peer buffer, as many as the file table has room for.
template <typename Backend>
void Shard<Backend>::arm_accept() {
  if (!features_.fixed_files) {
    assert(accepts_armed_ == 0);
    io().accept(listen_fd_, io::encode({Op::accept, shard_slot, 0}), features_.multishot_accept);
    accepts_armed_ = 1;
    return;
  }
  // Each armed accept may fill a slot of the file table, as may each
  // connection and each one waiting for a reclaimed slot. An accept that
  // found the table full would take a connection and drop it: instead,
  // once it is full, newcomers wait in the listen queue, as they do when
  // accept(2) meets RLIMIT_NOFILE (which also bounds the table), counted
  // alike, and accepting is tried again after the same backoff.
  std::uint32_t room = 0;
  if constexpr (Backend::kind == io::BackendKind::uring) {
    const std::uint32_t held = open_count_ + std::uint32_t(pending_.size()) + std::uint32_t(std::popcount(accepts_armed_));
    room = io().direct_table() > held ? io().direct_table() - held : 0;
  }
  if (room == 0 && accepts_armed_ == 0) {
    counters_.accept_errors_fd_limit.add();
    accept_backoff_until_ms_ = now_ms_ + accept_backoff_ms;
    return;
  }
  for (std::uint32_t i = 0; i < direct_accepts && room > 0; ++i) {
    if ((accepts_armed_ & (1u << i)) != 0) continue;
    --room;
    AcceptPeer& peer = accept_peers_[i];
    peer.length = sizeof peer.address;
    io().accept(listen_fd_, io::encode({Op::accept, shard_slot, i}), false,
                reinterpret_cast<sockaddr*>(&peer.address), &peer.length);
    accepts_armed_ |= 1u << i;
  }
}

template <typename Backend>
void Shard<Backend>::arm_tick() {
  tick_ts_.tv_sec = 0;
  tick_ts_.tv_nsec = long(tick_ms) * 1'000'000;
  io().timeout(&tick_ts_, io::encode({Op::tick, shard_slot, 0}));
}

template <typename Backend>
void Shard<Backend>::arm_wake() {
  io().read(wake_fd_, &wake_value_, sizeof wake_value_, io::encode({Op::wake, shard_slot, 0}));
}

template <typename Backend>
void Shard<Backend>::on_accept(std::int32_t res, std::uint32_t flags, std::uint32_t which) {
  assert(which < direct_accepts && (accepts_armed_ & (1u << which)) != 0);
  const bool still_armed = (flags & io::completion_flags::more) != 0;
  if (!still_armed) accepts_armed_ &= ~(1u << which);
  if (res >= 0) {
    Accepted accepted{res};
    if (features_.fixed_files) {
      accepted.peer_known = true;
      accepted.peer = client_key_of(accept_peers_[which].address);
    }
    if (stopping_) {
      io().close_accepted(res);
    } else {
      open_connection(accepted);
    }
  } else {
    switch (io::classify(res)) {
      case io::ErrnoClass::exhausted:
        // Out of descriptors or memory: existing connections go on being
        // served; accepting resumes on a later tick, when a close may have
        // freed some.
        if (res == -EMFILE || res == -ENFILE) {
          counters_.accept_errors_fd_limit.add();
        } else {
          counters_.accept_errors_memory.add();
        }
        accept_backoff_until_ms_ = now_ms_ + accept_backoff_ms;
        if (accepts_armed_ != 0) cancel_accept();
        break;
      case io::ErrnoClass::cancelled: break;
      case io::ErrnoClass::bug: assert(!"accept on the listener was refused as invalid"); [[fallthrough]];
      default: counters_.accept_errors_other.add();  // a peer that reset before we took it, ...
    }
  }
  if (!stopping_ && now_ms_ >= accept_backoff_until_ms_ && !accepts_full()) arm_accept();
}

template <typename Backend>
void Shard<Backend>::on_tick() {
  session_.on_tick();
  const std::uint64_t flushes = io().sq_full_flushes();
  counters_.sq_full_flushes.add(flushes - sq_full_flushes_seen_);
  sq_full_flushes_seen_ = flushes;
  if (!stopping_ && now_ms_ >= accept_backoff_until_ms_ && !accepts_full()) arm_accept();
  const bool past_stop_deadline = stopping_ && now_ms_ >= stop_deadline_ms_;
  for (std::uint32_t i = 0; i < engine_.table().constructed(); ++i) {
    Connection& conn = engine_.table()[i];
    if (conn.state == ConnState::free) continue;
    if (past_stop_deadline) {
      session_.abort(conn);
      continue;
    }
    engine_.resume_parked_send(conn);
    session_.tick(conn);
  }
  if (db_) {
    // Past the stop deadline, queries still unanswered are answered 503 so
    // that the connections waiting for them (aborted above) are freed.
    if (past_stop_deadline) db_->stop();
    db_->on_tick();
    db_io_.on_tick();
  }
  arm_tick();
}

template <typename Backend>
void Shard<Backend>::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  stop_deadline_ms_ = now_ms_ + options_.shutdown_timeout_ms;
  if (accepts_armed_ != 0) cancel_accept();
  for (const Accepted& accepted : pending_) io().close_accepted(accepted.fd);
  pending_.clear();
  session_.begin_stop();
}

// ---------------------------------------------------------------------------
// Connections: accept, receive, parse.

template <typename Backend>
Connection* Shard<Backend>::allocate() {
  Connection* slot = engine_.table().acquire();  // with a new generation
  if (slot == nullptr) return nullptr;
  Connection& conn = *slot;
  assert(conn.state == ConnState::free);
  assert(conn.inflight.none());
  return &conn;
}

template <typename Backend>
void Shard<Backend>::open_connection(const Accepted& accepted) {
  // While newcomers wait for reclaimed slots, a later one queues behind
  // them: a slot freed meanwhile is theirs (open_pending), first come first
  // served, or the one that waited longest would never get one.
  if (session_.refuses_handshake()) {
    counters_.tls_handshake_failures[tls_refused].add();
    io().close_accepted(accepted.fd);
    return;
  }
  Connection* slot = pending_.empty() ? allocate() : nullptr;
  if (slot == nullptr) {
    // The table is full: a slot closing already, or else the oldest idle
    // connection, makes room (as nginx reuses its idle keep-alive
    // connections), so silent sockets cannot lock newcomers out. The slot
    // is free once its cancels complete.
    if (pending_.size() < pending_accepts_max && session_.make_room(pending_.size())) {
      pending_.push_back(accepted);
      return;
    }
    counters_.accept_errors_table_full.add();
    io().close_accepted(accepted.fd);
    return;
  }
  start_connection(*slot, accepted);
}

template <typename Backend>
void Shard<Backend>::start_connection(Connection& conn, const Accepted& accepted) {
  // TCP_NODELAY comes from the listener (net::listen_reuseport): Linux
  // copies it to every socket accepted there.
  engine_.open(conn, accepted.fd);
  ClientKey peer;
  if (accepted.peer_known) {
    peer = accepted.peer;
  } else {
    // Multishot accept reports no address; one getpeername per connection
    // (not per request) gives the rate limiter its key.
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    if (::getpeername(accepted.fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      peer = client_key_of(address);
    }
  }
  ++open_count_;
  session_.start(conn, peer);
}

template <typename Backend>
void Shard<Backend>::on_recv(Connection& conn, const io::Completion& c) {
  const io::Received r = engine_.on_receive(conn, c);
  if (r.kind == io::Received::Kind::data) {
    counters_.bytes_received.add(std::uint32_t(r.res));
    // A bundle's pieces, one buffer each, are taken in order as separate
    // receives would be: a piece may pause input, and the next is held.
    io::Received piece = r;
    std::uint32_t pieces = 0;
    do {
      session_.on_received_piece(conn, InputChunk{piece.data, piece.len, piece.buffer_id});
      ++pieces;
    } while (engine_.next_piece(piece));
    if (pieces > 1) counters_.recv_bundles.add();
  }
  session_.after_receive(conn, r.kind, r.res);
}

template <typename Backend>
std::uint32_t Shard<Backend>::cancel_all(Connection& conn) {
  const std::uint32_t cancels = engine_.cancel_all(conn);
  if (engine_.owes_zero_copy_notifications(conn)) engine_.reset(conn);
  return cancels;
}

template <typename Backend>
void Shard<Backend>::release(Connection& conn) {
  assert(open_count_ > 0);
  --open_count_;
  engine_.release(conn);
}

}  // namespace ringhttp::server
