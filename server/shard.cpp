#include "server/shard.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>

#include "core/net/cpu.hpp"
#include "core/uring/compat.hpp"
#include "core/uring/errno_class.hpp"
#include "core/uring/user_data.hpp"
#include "server/heads.hpp"
#include "server/send_batch.hpp"

namespace ringhttp::server {
namespace {

using uring::Op;

// Shard-level operations (accept, tick, wake, and cancels aimed at them)
// carry this slot, which no connection can have.
constexpr std::uint32_t shard_slot = uring::slot_max;

std::uint64_t monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1000 + std::uint64_t(ts.tv_nsec) / 1'000'000;
}

std::uint64_t tag(Op op, const Connection& conn) { return uring::encode({op, conn.slot, conn.generation}); }

char* append(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace

void Connection::on_request_headers(const http::RequestHead& head) { shard->on_request_headers(*this, head); }
bool Connection::on_request(const http::RequestHead& head) { return shard->on_request(*this, head); }

Shard::Shard(const Options& options, const AppConfig& app_config, const Cors& cors, int index, int listen_fd,
             const uring::Features& features, const SendPath& send, ShardCounters& counters,
             std::span<const ShardCounters* const> all_shards)
    : options_(options),
      app_config_(app_config),
      cors_(cors),
      index_(index),
      listen_fd_(listen_fd),
      features_(features),
      send_(send),
      counters_(counters),
      all_shards_(all_shards) {
  limits_.header_bytes_max = options.header_bytes_max;
  limits_.body_bytes_max = options.body_bytes_max;
}

Shard::~Shard() {
  if (thread_.joinable()) thread_.join();
  if (spill_ != nullptr) ::munmap(spill_, std::size_t(spill_blocks) * recv_buffer_bytes);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  ::close(listen_fd_);
}

void Shard::start(std::latch& ready) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  thread_ = std::thread([this, &ready] {
    const bool ok = setup();
    ready.count_down();
    if (ok) run();
  });
}

void Shard::request_stop() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void Shard::join() {
  if (thread_.joinable()) thread_.join();
}

bool Shard::setup() {
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
  if (const int rc = ring_.init(options_.ring_entries, features_, cpu); rc < 0) {
    error_ = std::string("io_uring setup: ") + std::strerror(-rc);
    return false;
  }
  if (std::string e = buffers_.init(ring_.get(), features_, recv_buffers, recv_buffer_bytes, options_.connections_max);
      !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  // The table is reserved whole but only touched slot by slot, so resident
  // memory follows the connections really open.
  if (std::string e = table_.init(options_.connections_max); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  // Likewise the output blocks: reserved whole, touched as lent, and the
  // warmest reused first.
  const std::uint32_t blocks = options_.output_blocks == 0 ? options_.connections_max
                                                           : std::min(options_.output_blocks, options_.connections_max);
  if (std::string e = output_blocks_.init(blocks); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  // Held rings: one per connection at most, so as many as the table (never
  // short), touched only as connections pause.
  if (std::string e = held_blocks_.init(options_.connections_max); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  void* spill = ::mmap(nullptr, std::size_t(spill_blocks) * recv_buffer_bytes, PROT_READ | PROT_WRITE,
                       MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (spill == MAP_FAILED) {
    error_ = std::string("spill blocks: ") + std::strerror(errno);
    return false;
  }
  spill_ = static_cast<char*>(spill);
  spill_free_.reserve(spill_blocks);
  for (std::uint32_t b = spill_blocks; b > 0; --b) spill_free_.push_back(b - 1);
  dirty_.reserve(options_.connections_max);
  pending_fds_.reserve(pending_accepts_max);
  app_ = std::make_unique<App>(app_config_, cors_, counters_);
  now_ms_ = monotonic_ms();
  wall_s_ = std::time(nullptr);
  date_.refresh(wall_s_);
  arm_wake();
  arm_tick();
  arm_accept();
  return true;
}

void Shard::run() {
  std::array<uring::Completion, uring::Ring::reap_batch_max> batch;
  while (!(stopping_ && open_count_ == 0 && !accept_armed_)) {
    const std::uint32_t n = ring_.submit_and_reap(batch);
    now_ms_ = monotonic_ms();
    for (std::uint32_t i = 0; i < n; ++i) dispatch(batch[i]);
    after_batch();
  }
}

void Shard::dispatch(const uring::Completion& c) {
  const uring::Tag t = uring::decode(c.user_data);
  if (t.slot == shard_slot) {
    switch (t.op) {
      case Op::accept: return on_accept(c.res, c.flags);
      case Op::tick: return on_tick();
      case Op::wake: return begin_stop();
      case Op::cancel: return;  // the cancelled operation reports for itself
      default: break;
    }
    assert(false && "unknown shard-level completion");
    return;
  }
  Connection* found = table_.find(t);
  if (found == nullptr || found->state == ConnState::free) {
    // Cannot happen while slots are freed only at zero in-flight operations;
    // counted so a test can prove it stays zero, and a buffer is not leaked.
    counters_.stale_completions.add();
    if (t.op == Op::recv) buffers_.give_back_flags(c.flags);
    return;
  }
  Connection& conn = *found;
  switch (t.op) {
    case Op::recv: return on_recv(conn, c.res, c.flags);
    case Op::send:
      // A zero-copy send completes twice under the same tag: its result,
      // then (when the result says IORING_CQE_F_MORE) its notification.
      if ((c.flags & IORING_CQE_F_NOTIF) != 0) return on_send_notification(conn, c.res);
      return on_send(conn, c.res, c.flags);
    case Op::shutdown: return on_shutdown(conn, c.res);
    case Op::cancel:
      conn.inflight.done();
      return maybe_release(conn);
    default: break;
  }
  assert(false && "unknown connection completion");
}

void Shard::after_batch() {
  // Cork: everything the batch's receives produced leaves now, one send per
  // connection.
  for (std::size_t i = 0; i < dirty_.size(); ++i) {
    Connection& conn = table_[dirty_[i]];
    conn.dirty = false;
    if (conn.state == ConnState::free) continue;
    // A paused connection is re-armed when it resumes (resume_input), not
    // here: a receive armed while paused would fill its held share.
    if (conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
    if (conn.output_granted) {
      conn.output_granted = false;
      if (conn.state == ConnState::open && conn.input_paused && can_take_more(conn)) resume_input(conn);
    }
    flush(conn);
    maybe_finish_drain(conn);
    maybe_return_output(conn);
  }
  dirty_.clear();
  open_pending();
}

// Connections accepted while the table was full take the slots their
// reclaimed predecessors freed. Done here, between batches, never inside a
// handler that may still hold a reference to the slot being freed.
void Shard::open_pending() {
  while (!pending_fds_.empty() && !table_.full()) {
    const int fd = pending_fds_.front();
    pending_fds_.erase(pending_fds_.begin());
    Connection* slot = allocate();
    assert(slot != nullptr);
    start_connection(*slot, fd);
  }
}

void Shard::mark_dirty(Connection& conn) {
  if (conn.dirty) return;
  conn.dirty = true;
  dirty_.push_back(conn.slot);
}

// ---------------------------------------------------------------------------
// Shard-level operations.

void Shard::arm_accept() {
  assert(!accept_armed_);
  io_uring_sqe* sqe = ring_.sqe();
  if (features_.multishot_accept) {
    io_uring_prep_multishot_accept(sqe, listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  } else {
    io_uring_prep_accept(sqe, listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  }
  sqe->user_data = uring::encode({Op::accept, shard_slot, 0});
  accept_armed_ = true;
}

void Shard::arm_tick() {
  tick_ts_.tv_sec = 0;
  tick_ts_.tv_nsec = long(tick_ms) * 1'000'000;
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_timeout(sqe, &tick_ts_, 0, 0);
  sqe->user_data = uring::encode({Op::tick, shard_slot, 0});
}

void Shard::arm_wake() {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_read(sqe, wake_fd_, &wake_value_, sizeof wake_value_, 0);
  sqe->user_data = uring::encode({Op::wake, shard_slot, 0});
}

void Shard::on_accept(std::int32_t res, std::uint32_t flags) {
  const bool still_armed = (flags & IORING_CQE_F_MORE) != 0;
  if (!still_armed) accept_armed_ = false;
  if (res >= 0) {
    if (stopping_) {
      ::close(res);
    } else {
      open_connection(res);
    }
  } else {
    switch (uring::classify(res)) {
      case uring::ErrnoClass::exhausted:
        // Out of descriptors or memory: existing connections go on being
        // served; accepting resumes on a later tick, when a close may have
        // freed some.
        if (res == -EMFILE || res == -ENFILE) {
          counters_.accept_errors_fd_limit.add();
        } else {
          counters_.accept_errors_memory.add();
        }
        accept_backoff_until_ms_ = now_ms_ + accept_backoff_ms;
        if (still_armed) {
          io_uring_sqe* sqe = ring_.sqe();
          io_uring_prep_cancel64(sqe, uring::encode({Op::accept, shard_slot, 0}), 0);
          sqe->user_data = uring::encode({Op::cancel, shard_slot, 0});
        }
        break;
      case uring::ErrnoClass::cancelled: break;
      case uring::ErrnoClass::bug: assert(!"accept on the listener was refused as invalid"); [[fallthrough]];
      default: counters_.accept_errors_other.add();  // a peer that reset before we took it, ...
    }
  }
  if (!accept_armed_ && !stopping_ && now_ms_ >= accept_backoff_until_ms_) arm_accept();
}

void Shard::on_tick() {
  if (spill_touched_ && spill_free_.size() == spill_blocks) {
    // Spill memory is lent for a flood, not kept after it.
    ::madvise(spill_, std::size_t(spill_blocks) * recv_buffer_bytes, MADV_DONTNEED);
    spill_touched_ = false;
  }
  wall_s_ = std::time(nullptr);
  date_.refresh(wall_s_);
  const std::uint64_t flushes = ring_.submit_full_flushes();
  counters_.sq_full_flushes.add(flushes - sq_full_flushes_seen_);
  sq_full_flushes_seen_ = flushes;
  if (!accept_armed_ && !stopping_ && now_ms_ >= accept_backoff_until_ms_) arm_accept();
  const bool past_stop_deadline = stopping_ && now_ms_ >= stop_deadline_ms_;
  for (std::uint32_t i = 0; i < table_.constructed(); ++i) {
    Connection& conn = table_[i];
    if (conn.state == ConnState::free) continue;
    if (past_stop_deadline) {
      abort(conn);
      continue;
    }
    // A paused connection is re-armed when it resumes (resume_input), not
    // here: a receive armed while paused would fill its held share.
    if (conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
    check_timeouts(conn);
  }
  arm_tick();
}

void Shard::begin_stop() {
  if (stopping_) return;
  stopping_ = true;
  stop_deadline_ms_ = now_ms_ + options_.shutdown_timeout_ms;
  if (accept_armed_) {
    io_uring_sqe* sqe = ring_.sqe();
    io_uring_prep_cancel64(sqe, uring::encode({Op::accept, shard_slot, 0}), 0);
    sqe->user_data = uring::encode({Op::cancel, shard_slot, 0});
  }
  for (const int fd : pending_fds_) ::close(fd);
  pending_fds_.clear();
  for (std::uint32_t i = 0; i < table_.constructed(); ++i) {
    Connection& conn = table_[i];
    if (conn.state != ConnState::open) continue;
    const bool idle = conn.output_empty() && !conn.send_inflight && !conn.parser.in_message();
    if (idle) {
      abort(conn);
    } else {
      // Let what is queued (a stream included) finish, then close.
      begin_drain(conn);
      mark_dirty(conn);
    }
  }
}

// ---------------------------------------------------------------------------
// Connections: accept, receive, parse.

Connection* Shard::allocate() {
  Connection* slot = table_.acquire();  // with a new generation
  if (slot == nullptr) return nullptr;
  Connection& conn = *slot;
  conn.shard = this;
  assert(conn.state == ConnState::free);
  assert(conn.inflight.none());
  return &conn;
}

void Shard::open_connection(int fd) {
  // While newcomers wait for reclaimed slots, a later one queues behind
  // them: a slot freed meanwhile is theirs (open_pending), first come first
  // served, or the one that waited longest would never get one.
  Connection* slot = pending_fds_.empty() ? allocate() : nullptr;
  if (slot == nullptr) {
    // The table is full: the oldest idle connection makes room (as nginx
    // reuses its idle keep-alive connections), so silent sockets cannot
    // lock newcomers out. Its slot is free once its cancels complete.
    if (pending_fds_.size() < pending_accepts_max && reclaim_idle()) {
      pending_fds_.push_back(fd);
      return;
    }
    counters_.accept_errors_table_full.add();
    ::close(fd);
    return;
  }
  start_connection(*slot, fd);
}

void Shard::start_connection(Connection& conn, int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  conn.fd = fd;
  // Multishot accept reports no address; one getpeername per connection
  // (not per request) gives the rate limiter its key.
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  conn.peer = ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0 ? client_key_of(peer) : ClientKey{};
  conn.state = ConnState::open;
  assert(conn.inflight.none() && conn.zc_notifications_pending == 0);
  conn.send_bytes_left = 0;
  conn.written_responses = 0;
  conn.recv_armed = conn.send_inflight = conn.input_paused = conn.peer_eof = false;
  conn.recv_multishot = conn.single_shot = false;
  conn.metrics_queued = conn.rearm_recv = false;
  conn.enobufs_in_a_row = 0;
  conn.last_activity_ms = now_ms_;
  conn.header_deadline_ms = 0;
  conn.body_start_ms = 0;
  conn.send_progress_ms = now_ms_;
  conn.requests_done = 0;
  conn.parser.reset(limits_, &conn);
  assert(conn.output == nullptr && !conn.waiting_output && !conn.parser.has_buffers());
  conn.output_granted = false;
  assert(conn.held == nullptr);
  conn.held_buffers = 0;
  ++open_count_;
  counters_.connections_accepted.add();
  assert(wants_receive(conn));
  arm_recv(conn);
}

// The one answer to "should a receive be armed now?": while the connection
// is open and its input not paused, and while it drains or lingers (what
// arrives then is read and discarded); never after the peer's FIN, and one
// receive at a time. A pending re-arm (-ENOBUFS) is the caller's to weigh.
bool Shard::wants_receive(const Connection& conn) const {
  if (conn.recv_armed || conn.peer_eof) return false;
  switch (conn.state) {
    case ConnState::open: return !conn.input_paused;
    case ConnState::draining:
    case ConnState::lingering: return true;
    case ConnState::free:
    case ConnState::closing: return false;
  }
  return false;
}

void Shard::arm_recv(Connection& conn) {
  assert(wants_receive(conn));
  assert(conn.state != ConnState::closing && conn.state != ConnState::free);
  io_uring_sqe* sqe = ring_.sqe();
  conn.recv_multishot = buffers_.prep_recv(sqe, conn.fd, conn.slot, !conn.single_shot);
  sqe->user_data = tag(Op::recv, conn);
  conn.recv_armed = true;
  conn.rearm_recv = false;  // whatever asked for a re-arm is answered
  conn.inflight.add();
}

void Shard::release_chunk(InputChunk chunk) {
  if (chunk.buffer_id >= spill_id_base) {
    spill_free_.push_back(std::uint32_t(chunk.buffer_id - spill_id_base));
    counters_.spill_blocks_used.set(spill_blocks - spill_free_.size());
    return;
  }
  buffers_.give_back(chunk.buffer_id);
}

// Copies a provided buffer's bytes into a spill block and gives the buffer
// back to the ring. False when every spill block is taken.
bool Shard::spill(InputChunk& chunk) {
  if (spill_free_.empty()) return false;
  assert(chunk.len <= recv_buffer_bytes);
  const std::uint32_t block = spill_free_.back();
  spill_free_.pop_back();
  spill_touched_ = true;
  counters_.spill_blocks_used.set(spill_blocks - spill_free_.size());
  char* to = spill_ + std::size_t(block) * recv_buffer_bytes;
  std::memcpy(to, chunk.data, chunk.len);
  buffers_.give_back(chunk.buffer_id);
  chunk = InputChunk{to, chunk.len, spill_id_base + std::int32_t(block)};
  return true;
}

void Shard::on_recv(Connection& conn, std::int32_t res, std::uint32_t flags) {
  if ((flags & IORING_CQE_F_MORE) == 0) {
    conn.recv_armed = false;
    conn.inflight.done();
  }
  if (res > 0) {
    counters_.bytes_received.add(std::uint64_t(res));
    conn.enobufs_in_a_row = 0;
    const uring::ReceiveBuffers::Received received = buffers_.received(conn.slot, flags);
    const InputChunk chunk{received.data, std::uint32_t(res), received.buffer_id};
    // Bytes alone are not activity: between requests only empty lines can
    // arrive without starting one, and a client trickling those must still
    // idle out. A request's start has its own deadline (header, then body);
    // a finished request or a send's progress counts as activity.
    if (conn.state != ConnState::open) {
      release_chunk(chunk);  // draining, lingering or closing: input is discarded
    } else if (conn.input_paused) {
      hold(conn, chunk, false);
    } else {
      consume(conn, chunk);
    }
  } else if (res == 0) {
    // The peer finished sending. Answer what is queued, then close; what
    // it sent before its FIN and is held while input is paused is parsed
    // and answered first (resume_input drains once it is all read).
    if (conn.state == ConnState::open && conn.input_paused) {
      conn.peer_eof = true;
    } else if (conn.state == ConnState::open && (!conn.output_empty() || conn.send_inflight)) {
      conn.peer_eof = true;
      begin_drain(conn);
      mark_dirty(conn);
    } else {
      abort(conn);
    }
  } else if (res == -ENOBUFS) {
    // Not an end of stream: the buffer ring ran dry. Re-arm once buffers
    // have been given back (after this batch), or on the tick if it repeats.
    counters_.recv_no_buffers.add();
    if (conn.enobufs_in_a_row < enobufs_in_a_row_max) {
      ++conn.enobufs_in_a_row;
      mark_dirty(conn);
    }
    conn.rearm_recv = !conn.recv_armed;
  } else {
    switch (uring::classify(res)) {
      case uring::ErrnoClass::cancelled: break;  // ours: input paused, or the connection closing
      case uring::ErrnoClass::retry:
        conn.rearm_recv = !conn.recv_armed;
        mark_dirty(conn);
        break;
      case uring::ErrnoClass::bug: assert(!"a receive was refused as invalid"); [[fallthrough]];
      default: abort(conn);  // ECONNRESET and friends: the peer is gone
    }
  }
  // Re-arm a receive that ended: a single-shot one after data, and a
  // multishot one cancelled to pause input if input has since resumed.
  const bool ended_normally = res > 0 || res == -ECANCELED;
  if (ended_normally && !conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
  maybe_release(conn);
}

void Shard::consume(Connection& conn, InputChunk chunk) {
  assert(conn.state == ConnState::open);
  assert(!conn.input_paused);
  if (conn.output == nullptr && !lend_output(conn)) {
    // Every block is lent: the chunk waits, input paused, and the
    // connection is handed the next block given back (in arrival order).
    hold(conn, chunk, true);
    if (conn.state == ConnState::open) {
      pause_input(conn);
      wait_for_output(conn);
    }
    return;
  }
  const bool was_in_header = conn.parser.in_header_section();
  const bool was_in_body = conn.parser.in_body();
  const std::uint64_t done_before = conn.requests_done;
  const http::RequestParser::Result result = conn.parser.feed(chunk.data, chunk.len);
  // A header section or a body that started during this feed starts its
  // timeout now.
  const bool new_request = conn.requests_done != done_before;
  if (conn.parser.in_header_section() && (!was_in_header || new_request)) {
    conn.header_deadline_ms = now_ms_ + options_.header_timeout_ms;
  }
  if (conn.parser.in_body() && (!was_in_body || new_request)) conn.body_start_ms = now_ms_;
  mark_dirty(conn);
  switch (result.status) {
    case http::RequestParser::Status::done: release_chunk(chunk); return;
    case http::RequestParser::Status::paused: {
      chunk.data += result.consumed;
      chunk.len -= std::uint32_t(result.consumed);
      if (conn.state != ConnState::open || chunk.len == 0) {
        release_chunk(chunk);
      } else {
        hold(conn, chunk, true);
      }
      if (conn.state == ConnState::open) pause_input(conn);
      return;
    }
    case http::RequestParser::Status::upgrade:
      // Upgrade and CONNECT are not served: what was answered goes out, then close.
      release_chunk(chunk);
      begin_drain(conn);
      return;
    case http::RequestParser::Status::error: {
      release_chunk(chunk);
      const http::ParseError error = conn.parser.error();
      counters_.parse_errors[std::size_t(error)].add();
      queue_error(conn, http::status_for(error));
      return;
    }
  }
}

void Shard::hold(Connection& conn, InputChunk chunk, bool at_front) {
  const auto is_provided = [](const InputChunk& c) {
    return c.buffer_id != uring::ReceiveBuffers::own_buffer && c.buffer_id < spill_id_base;
  };
  // Input held beyond the connection's share of provided buffers, or the
  // shard's, is copied out so the buffer serves other clients (the chunk
  // being parsed, put back at the front, included); beyond what the spill
  // blocks hold, or 64 chunks, the connection is closed.
  const bool over_share = conn.held_buffers >= Connection::held_buffers_max || held_buffers_ >= held_buffers_shard_max;
  const bool fits =
      (conn.held == nullptr || !conn.held->chunks.full()) && (!is_provided(chunk) || !over_share || spill(chunk));
  if (!fits) {
    counters_.input_overflow.add();
    release_chunk(chunk);
    abort(conn);
    return;
  }
  if (conn.held == nullptr) {
    // As many rings as slots, one per connection at most: never short.
    conn.held = held_blocks_.acquire();
    assert(conn.held != nullptr);
    conn.held->chunks.clear();
    counters_.held_rings_lent.set(++held_rings_lent_);
  }
  if (at_front) {
    conn.held->chunks.push_front(chunk);
  } else {
    conn.held->chunks.push_back(chunk);
  }
  if (is_provided(chunk)) {
    ++conn.held_buffers;
    ++held_buffers_;
    counters_.input_buffers_held.set(held_buffers_);
  }
}

// Takes the oldest held chunk; the ring goes back with the last one.
InputChunk Shard::unhold(Connection& conn) {
  assert(!conn.held_empty());
  const InputChunk chunk = conn.held->chunks.pop_front();
  if (conn.held->chunks.empty()) {
    held_blocks_.release(*conn.held);
    conn.held = nullptr;
    assert(held_rings_lent_ > 0);
    counters_.held_rings_lent.set(--held_rings_lent_);
  }
  if (chunk.buffer_id != uring::ReceiveBuffers::own_buffer && chunk.buffer_id < spill_id_base) {
    assert(conn.held_buffers > 0 && held_buffers_ > 0);
    --conn.held_buffers;
    --held_buffers_;
    counters_.input_buffers_held.set(held_buffers_);
  }
  return chunk;
}

void Shard::drop_held(Connection& conn) {
  while (!conn.held_empty()) release_chunk(unhold(conn));
  assert(conn.held == nullptr);
}

void Shard::pause_input(Connection& conn) {
  if (conn.input_paused) return;
  conn.input_paused = true;
  conn.single_shot = true;
  // A multishot receive would go on delivering: cancel it, so the socket's
  // buffer fills and TCP pushes back on the client. A single-shot receive is
  // simply not re-armed.
  if (conn.recv_armed && conn.recv_multishot) cancel_op(conn, Op::recv);
}

bool Shard::can_take_more(const Connection& conn) const {
  // Unsent output is what the send in flight has left (the queue behind it
  // is bounded by its length, and its bodies live elsewhere).
  const bool output_backlog = conn.send_inflight && conn.send_bytes_left >= options_.output_bytes_max;
  // The next request must find room for every response it may queue.
  const bool room = Connection::responses_max - conn.output_size() >= Connection::responses_per_request_max;
  return room && !conn.metrics_queued && !output_backlog && !conn.waiting_output;
}

void Shard::resume_input(Connection& conn) {
  assert(conn.input_paused);
  conn.input_paused = false;
  while (!conn.held_empty() && !conn.input_paused && conn.state == ConnState::open) consume(conn, unhold(conn));
  if (conn.state != ConnState::open || conn.input_paused) return;
  if (conn.peer_eof) {
    // Everything the peer sent before its FIN has been read: answer, close.
    begin_drain(conn);
    mark_dirty(conn);
  } else if (wants_receive(conn)) {
    arm_recv(conn);
  }
}

void Shard::on_request_headers(Connection& conn, const http::RequestHead& head) {
  if (!head.expect_continue || conn.state != ConnState::open) return;
  // The request was parsed only with room for this and its final response.
  assert(conn.output != nullptr && "a request is parsed only with a block lent");
  assert(conn.output->out.size() + Connection::responses_per_request_max <= Connection::responses_max);
  PendingResponse& r = conn.output->out.push();
  r.reset();
  r.head = heads::continue_100;
  r.status = 100;
  r.interim = true;
  counters_.responses[status_index(100)].add();
}

bool Shard::on_request(Connection& conn, const http::RequestHead& head) {
  ++conn.requests_done;
  counters_.requests.add();
  if (conn.state != ConnState::open) return true;
  assert(conn.output != nullptr && "a request is parsed only with a block lent");
  assert(!conn.output->out.full());
  PendingResponse& r = conn.output->out.push();
  r.reset();
  const std::string_view target = head.target;
  const size_t q = target.find('?');
  const Request request{head,
                        target.substr(0, q),
                        q == std::string_view::npos ? std::string_view() : target.substr(q + 1),
                        conn.peer,
                        now_ms_,
                        wall_s_};
  Reply reply(r, head.method == http::Method::head, conn.metrics_text, all_shards_);
  app_->handle(request, reply);
  if (r.source == BodySource::metrics) conn.metrics_queued = true;
  const bool keep_alive = head.keep_alive && !stopping_;
  const bool http10 = head.version_major == 1 && head.version_minor == 0;
  finish_response(conn, r, reply.content_length(), !keep_alive, http10 && keep_alive);
  conn.last_activity_ms = now_ms_;
  if (!keep_alive) {
    begin_drain(conn);
    return true;  // nothing after this request is parsed
  }
  return !can_take_more(conn);
}

void Shard::finish_response(Connection&, PendingResponse& r, std::uint64_t content_length, bool close,
                            bool http10_keep_alive) {
  r.close_after = close;
  counters_.responses[status_index(r.status)].add();
  if (r.no_content) {
    // A 204 carries no Content-Length (RFC 9110 section 8.6).
    assert(content_length == 0);
    r.tail = close               ? std::string_view("Connection: close\r\n\r\n")
             : http10_keep_alive ? std::string_view("Connection: keep-alive\r\n\r\n")
                                 : std::string_view("\r\n");
    return;
  }
  if (!close && !http10_keep_alive) {
    r.tail = framing_.keep_alive(content_length);
    if (!r.tail.empty()) return;
  }
  char* p = r.tail_bytes;
  p = append(p, "Content-Length: ");
  p = std::to_chars(p, r.tail_bytes + PendingResponse::tail_bytes_max, content_length).ptr;
  p = append(p, "\r\n");
  if (close) {
    p = append(p, "Connection: close\r\n");
  } else if (http10_keep_alive) {
    p = append(p, "Connection: keep-alive\r\n");
  }
  p = append(p, "\r\n");
  assert(p <= r.tail_bytes + PendingResponse::tail_bytes_max);
  r.tail = std::string_view(r.tail_bytes, std::size_t(p - r.tail_bytes));
}

void Shard::queue_error(Connection& conn, int status) {
  if (conn.output == nullptr && !lend_output(conn)) {
    // Not for a parse error or a request's deadline (a request in progress
    // holds its block); should a connection ever come here without one while
    // every block is lent, there is no room to say why.
    counters_.output_block_refusals.add();
    abort(conn);
    return;
  }
  if (conn.output->out.full()) {
    abort(conn);  // no room to say why; the peer is pipelining without reading
    return;
  }
  PendingResponse& r = conn.output->out.push();
  r.reset();
  const heads::ErrorResponse e = heads::error_response(status);
  r.status = std::uint16_t(status);
  r.head = e.head;
  r.body = e.body;
  r.source = BodySource::fixed;
  finish_response(conn, r, e.body.size(), true, false);
  begin_drain(conn);
  mark_dirty(conn);
}

// ---------------------------------------------------------------------------
// Output: one send per connection in flight, built from where bytes live.

void Shard::flush(Connection& conn) {
  // Responses already written (and waiting for a zero-copy notification
  // before they leave the queue) are not sent again: the batch starts after
  // them.
  if (conn.output == nullptr || conn.send_inflight || conn.output->out.size() == conn.written_responses ||
      conn.state == ConnState::closing || conn.state == ConnState::lingering) {
    return;
  }
  const auto [n, total, retires, stream_bytes] =
      build_send_batch(conn.output->out, conn.written_responses, date_.line(), conn.output->iov);
  assert(total > 0);
  conn.output->msg = msghdr{};
  conn.output->msg.msg_iov = conn.output->iov.data();
  conn.output->msg.msg_iovlen = n;
  conn.send_bytes_left = total;
  conn.send_retires = retires;
  conn.send_stream_bytes = stream_bytes;
  submit_send(conn);
}

// One send of what the block's msghdr cursor still covers, by the shard's send path.
void Shard::submit_send(Connection& conn) {
  assert(!conn.send_inflight);
  assert(conn.output->msg.msg_iovlen > 0);
  io_uring_sqe* sqe = ring_.sqe();
  switch (send_.mode) {
    case SendMode::writev:
      // writev takes no MSG_NOSIGNAL: a write to a socket whose peer has
      // gone raises SIGPIPE, which server/main.cpp ignores process-wide, so
      // it fails with -EPIPE as a sendmsg would. The offset must be 0: a
      // socket has no file position (sock_write_iter refuses any other).
      io_uring_prep_writev(sqe, conn.fd, conn.output->msg.msg_iov, unsigned(conn.output->msg.msg_iovlen), 0);
      break;
    case SendMode::sendmsg: io_uring_prep_sendmsg(sqe, conn.fd, &conn.output->msg, MSG_NOSIGNAL); break;
    case SendMode::zc:
      // The kernel pins the pages instead of copying them: every byte the
      // iovecs point at must stay as it is until this send's notification
      // (release_written waits for it); the msghdr and iovecs themselves are
      // consumed with the SQE (IORING_FEAT_SUBMIT_STABLE, 5.5) and left
      // alone until the result anyway.
      io_uring_prep_sendmsg_zc(sqe, conn.fd, &conn.output->msg, MSG_NOSIGNAL);
      if (send_.zc_report_usage) sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
      break;
  }
  sqe->user_data = tag(Op::send, conn);
  conn.send_inflight = true;
  conn.send_progress_ms = now_ms_;  // a new batch, or the rest of a short write
  conn.inflight.add();
  counters_.sends.add();
}

void Shard::on_send(Connection& conn, std::int32_t res, std::uint32_t flags) {
  assert(conn.send_inflight);
  conn.send_inflight = false;
  conn.inflight.done();
  if ((flags & IORING_CQE_F_MORE) != 0) {
    // A zero-copy send's notification is still to come, errors and cancels
    // included: it keeps the slot (and the batch's bytes) until it arrives.
    assert(send_.mode == SendMode::zc);
    ++conn.zc_notifications_pending;
    conn.inflight.add();
  }
  if (res < 0) {
    // EPIPE, ECONNRESET, ... (the peer is gone), or our own cancel; a send we
    // built wrongly is a bug, never taken for a peer that left.
    assert(uring::classify(res) != uring::ErrnoClass::bug && "a send was refused as invalid");
    abort(conn);
    maybe_release(conn);
    return;
  }
  counters_.bytes_sent.add(std::uint64_t(res));
  conn.last_activity_ms = now_ms_;
  if (conn.state == ConnState::closing) return maybe_release(conn);
  if (std::uint64_t(res) < conn.send_bytes_left) {
    // Short write: resume from exactly the next unsent byte.
    counters_.sends_short.add();
    advance_iovecs(conn.output->msg, std::size_t(res));
    conn.send_bytes_left -= std::uint64_t(res);
    // A zero-copy resumption may go before the earlier part's notification:
    // it reads the same, unchanged bytes, and the cursor moved only within
    // iovecs the kernel consumed with the earlier SQE.
    submit_send(conn);
    return;
  }
  conn.send_bytes_left = 0;
  retire_sent(conn);
  after_output_progress(conn);
}

void Shard::on_send_notification(Connection& conn, std::int32_t res) {
  // The kernel posts a notification after its send's result, never before.
  assert(conn.zc_notifications_pending > 0);
  --conn.zc_notifications_pending;
  conn.inflight.done();
  counters_.zc_notifications.add();
  if ((std::uint32_t(res) & IORING_NOTIF_USAGE_ZC_COPIED) != 0) counters_.zc_copied.add();
  if (conn.state == ConnState::closing) return maybe_release(conn);
  release_written(conn);
  after_output_progress(conn);
}

// Room may have appeared in the queue: read again if reading waited for it,
// send what is queued, close if draining is done.
void Shard::after_output_progress(Connection& conn) {
  if (conn.state == ConnState::open && conn.input_paused && can_take_more(conn)) resume_input(conn);
  flush(conn);
  maybe_finish_drain(conn);
  maybe_return_output(conn);
}

// ---------------------------------------------------------------------------
// Output blocks: lent while a connection has output to make or send.

bool Shard::lend_output(Connection& conn) {
  assert(conn.output == nullptr);
  OutputBlock* block = output_blocks_.acquire();
  if (block == nullptr) return false;
  block->out.clear();
  conn.output = block;
  conn.parser.lend_buffers(&block->request);
  ++output_blocks_lent_;
  counters_.output_blocks_lent.set(output_blocks_lent_);
  return true;
}

// Gives the block back whatever it holds: only for a connection that has
// nothing in flight any more (closing at zero), or nothing queued.
void Shard::return_output(Connection& conn) {
  if (conn.output == nullptr) return;
  conn.parser.take_buffers();
  output_blocks_.release(*conn.output);
  conn.output = nullptr;
  assert(output_blocks_lent_ > 0);
  --output_blocks_lent_;
  counters_.output_blocks_lent.set(output_blocks_lent_);
  grant_output();
}

// A block goes back as soon as nothing refers to it: no request in
// progress (an open connection's parser keeps it in the block), no
// response queued or written and awaiting a zero-copy notification, no
// send in flight. Between requests an idle keep-alive connection holds none.
void Shard::maybe_return_output(Connection& conn) {
  if (conn.output == nullptr || conn.state == ConnState::closing || conn.state == ConnState::free) return;
  if (conn.state == ConnState::open && conn.parser.in_message()) return;
  if (!conn.output->out.empty() || conn.send_inflight || conn.zc_notifications_pending > 0) return;
  assert(conn.written_responses == 0);
  return_output(conn);
}

void Shard::wait_for_output(Connection& conn) {
  assert(!conn.waiting_output && conn.output == nullptr);
  conn.waiting_output = true;
  conn.waiting_since_ms = now_ms_;
  counters_.output_block_waits.add();
  conn.wait_next = no_slot;
  conn.wait_prev = wait_tail_;
  if (wait_tail_ == no_slot) {
    wait_head_ = conn.slot;
  } else {
    table_[wait_tail_].wait_next = conn.slot;
  }
  wait_tail_ = conn.slot;
}

void Shard::stop_waiting_for_output(Connection& conn) {
  if (!conn.waiting_output) return;
  conn.waiting_output = false;
  if (conn.wait_prev == no_slot) {
    wait_head_ = conn.wait_next;
  } else {
    table_[conn.wait_prev].wait_next = conn.wait_next;
  }
  if (conn.wait_next == no_slot) {
    wait_tail_ = conn.wait_prev;
  } else {
    table_[conn.wait_next].wait_prev = conn.wait_prev;
  }
  conn.wait_prev = conn.wait_next = no_slot;
}

// The oldest waiter gets the block just given back, before any newcomer can
// take it; its input resumes after the batch's completions (after_batch).
void Shard::grant_output() {
  if (wait_head_ == no_slot) return;
  Connection& conn = table_[wait_head_];
  stop_waiting_for_output(conn);
  const bool lent = lend_output(conn);
  assert(lent && "a block was just given back");
  (void)lent;
  conn.output_granted = true;
  mark_dirty(conn);
}

// The batch is wholly written: its whole responses join the written ones at
// the front of the queue, and a stream left in progress moves on (its next
// chunk comes from the static pattern block, so no byte a pending
// notification covers is rewritten).
void Shard::retire_sent(Connection& conn) {
  conn.written_responses += conn.send_retires;
  assert(conn.output != nullptr);
  assert(conn.written_responses <= conn.output->out.size());
  if (conn.send_stream_bytes > 0) {
    PendingResponse& r = conn.output->out.at(conn.written_responses);
    assert(r.source == BodySource::stream);
    r.head_sent = true;
    r.stream_offset += conn.send_stream_bytes;
    r.stream_remaining -= conn.send_stream_bytes;
  }
  conn.send_retires = 0;
  conn.send_stream_bytes = 0;
  release_written(conn);
}

// Written responses leave the queue (their slots, tail bytes, scratch bodies
// and the metrics text become reusable) only when no zero-copy notification
// is pending, so the kernel can no longer read them. Counting all pending
// notifications rather than matching each to its batch makes that hold
// whatever order notifications arrive in; in the other send modes none is
// ever pending and responses leave as soon as they are written.
void Shard::release_written(Connection& conn) {
  if (conn.zc_notifications_pending > 0 || conn.written_responses == 0) return;
  assert(conn.output != nullptr);
  for (std::uint32_t i = 0; i < conn.written_responses; ++i) {
    if (conn.output->out.front().source == BodySource::metrics) conn.metrics_queued = false;
    conn.output->out.pop();
  }
  conn.written_responses = 0;
}

// ---------------------------------------------------------------------------
// Closing: graceful (drain, FIN, linger) and abortive (cancel everything).

void Shard::begin_drain(Connection& conn) {
  if (conn.state != ConnState::open) return;
  conn.state = ConnState::draining;
  drop_held(conn);  // held input will never be parsed now
  conn.input_paused = false;
}

void Shard::maybe_finish_drain(Connection& conn) {
  if (conn.state != ConnState::draining || conn.send_inflight || !conn.output_empty()) return;
  if (conn.peer_eof) {
    abort(conn);
    return;
  }
  // Half-close, then keep reading (and discarding) until the peer closes:
  // closing at once with unread input would send a reset that can destroy
  // the response before the peer reads it.
  conn.state = ConnState::lingering;
  conn.linger_deadline_ms = now_ms_ + linger_ms;
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_shutdown(sqe, conn.fd, SHUT_WR);
  sqe->user_data = tag(Op::shutdown, conn);
  conn.inflight.add();
  if (!conn.rearm_recv && wants_receive(conn)) arm_recv(conn);
}

void Shard::on_shutdown(Connection& conn, std::int32_t res) {
  conn.inflight.done();
  if (res < 0) {
    // ENOTCONN: the peer reset first. Nothing else is expected.
    assert(uring::classify(res) != uring::ErrnoClass::bug && "shutdown was refused as invalid");
    abort(conn);
  }
  maybe_release(conn);
}

void Shard::cancel_op(Connection& conn, Op op) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_cancel64(sqe, tag(op, conn), 0);
  sqe->user_data = tag(Op::cancel, conn);
  conn.inflight.add();
}

void Shard::abort(Connection& conn) {
  if (conn.state == ConnState::closing || conn.state == ConnState::free) return;
  conn.state = ConnState::closing;
  conn.rearm_recv = false;
  if (conn.recv_armed) {
    cancel_op(conn, Op::recv);
    counters_.cancellations.add();
  }
  if (conn.send_inflight) {
    cancel_op(conn, Op::send);
    counters_.cancellations.add();
  }
  maybe_release(conn);
}

void Shard::maybe_release(Connection& conn) {
  // inflight counts pending zero-copy notifications: their bytes may still
  // be read by the kernel until then, and some live in this slot.
  if (conn.state != ConnState::closing || !conn.inflight.none()) return;
  assert(conn.zc_notifications_pending == 0);
  ::close(conn.fd);
  drop_held(conn);
  conn.written_responses = 0;
  stop_waiting_for_output(conn);
  return_output(conn);
  conn.fd = -1;
  conn.state = ConnState::free;
  conn.metrics_queued = false;
  assert(open_count_ > 0);
  --open_count_;
  counters_.connections_closed.add();
  table_.release(conn);
}

// Every state has a deadline. Lingering: the peer's FIN within linger_ms.
// Open or draining with output unsent: progress within --send-timeout-ms
// (a peer that stops reading, half-closed or not, cannot hold its slot).
// Open: a header section within --header-timeout-ms of its first byte, a
// body at --body-min-rate after --body-timeout-ms, and otherwise another
// request within --idle-timeout-ms.
void Shard::check_timeouts(Connection& conn) {
  switch (conn.state) {
    case ConnState::lingering:
      if (now_ms_ >= conn.linger_deadline_ms) abort(conn);
      return;
    case ConnState::open:
    case ConnState::draining: break;
    default: return;
  }
  if (conn.send_inflight && now_ms_ - conn.send_progress_ms >= options_.send_timeout_ms) {
    counters_.timeouts_send.add();
    abort(conn);
    return;
  }
  if (conn.state != ConnState::open) return;
  if (conn.waiting_output) {
    // Every block stayed lent for as long as a header section may take: the
    // request cannot be answered in time, and there is no block to say so.
    if (now_ms_ - conn.waiting_since_ms >= options_.header_timeout_ms) {
      counters_.output_block_refusals.add();
      abort(conn);
    }
    return;
  }
  if (conn.parser.in_header_section() && !conn.input_paused) {
    if (now_ms_ >= conn.header_deadline_ms) {
      // Slowloris protection: a header section must arrive in time.
      counters_.timeouts_header.add();
      queue_error(conn, 408);
    }
    return;
  }
  if (conn.parser.in_body() && !conn.input_paused) {
    // A body may take longer the more of it arrives, but not forever: one
    // trickled a byte at a time is cut (Apache's RequestReadTimeout body=).
    const std::uint64_t allowed_ms =
        options_.body_timeout_ms + conn.parser.body_bytes() * 1000 / options_.body_min_rate;
    if (now_ms_ - conn.body_start_ms >= allowed_ms) {
      counters_.timeouts_body.add();
      queue_error(conn, 408);
    }
    return;
  }
  // Idle means nothing to do either way: a connection with output unsent
  // (a slow reader of a long response) is the send timeout's to judge.
  const bool output_pending = conn.send_inflight || !conn.output_empty();
  if (!output_pending && now_ms_ - conn.last_activity_ms >= options_.idle_timeout_ms) {
    counters_.timeouts_idle.add();
    abort(conn);
  }
}

// The oldest open connection with nothing in progress (no request begun,
// nothing queued or being sent) is closed to make room. A scan of the
// table: it runs only when the table is full, once per newcomer.
bool Shard::reclaim_idle() {
  Connection* oldest = nullptr;
  for (std::uint32_t i = 0; i < table_.constructed(); ++i) {
    Connection& c = table_[i];
    const bool idle = c.state == ConnState::open && !c.parser.in_message() && c.output_empty() && !c.send_inflight &&
                      c.held_empty();
    if (idle && (oldest == nullptr || c.last_activity_ms < oldest->last_activity_ms)) oldest = &c;
  }
  if (oldest == nullptr) return false;
  counters_.connections_reclaimed.add();
  abort(*oldest);
  return true;
}

}  // namespace ringhttp::server
