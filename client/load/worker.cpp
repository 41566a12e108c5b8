#include "client/load/worker.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "client/load/clock.hpp"
#include "client/tls_config.hpp"
#include "core/net/cpu.hpp"
#include "core/epoll/backend.hpp"
#include "core/uring/backend.hpp"
#include "core/uring/compat.hpp"
#include "core/uring/errno_class.hpp"
#include "core/uring/user_data.hpp"

namespace ringhttp::client {
namespace {

using uring::Op;

__kernel_timespec to_timespec(std::uint64_t ns) {
  return __kernel_timespec{static_cast<long long>(ns / 1'000'000'000), static_cast<long long>(ns % 1'000'000'000)};
}

}  // namespace

void Connection::on_response(const http::ResponseHead& head) { worker->on_response(*this, head); }

std::unique_ptr<WorkerBase> make_worker(const Options& options, const RequestBytes& request,
                                        const uring::Features& features, const WorkerPlan& plan) {
  if (options.backend == io::BackendKind::epoll) {
    return std::make_unique<Worker<epoll::Backend>>(options, request, features, plan);
  }
  return std::make_unique<Worker<uring::Backend>>(options, request, features, plan);
}

template <typename Backend>
Worker<Backend>::Worker(const Options& options, const RequestBytes& request, const uring::Features& features,
               const WorkerPlan& plan)
    : options_(options), request_(request), features_(features), plan_(plan),
      batch_wait_(options.batch_wait_auto ? std::nullopt : std::optional<std::uint32_t>(options.batch_wait_us)) {}

template <typename Backend>
Worker<Backend>::~Worker() {
  if (thread_.joinable()) thread_.join();
  for (std::uint32_t i = 0; i < engine_.table().constructed(); ++i) {
    Connection& conn = engine_.table()[i];
    if (conn.fd >= 0) engine_.backend().close(conn.fd, conn.slot);
    // HTTP/2: the streams still open end now, while this worker (which
    // their ends report to, and ignores for a socket no longer open) lives.
    conn.state = ConnState::idle;
    if (conn.h2 != nullptr) conn.h2->session.close();
  }
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
bool Worker<Backend>::setup() {
  if (const int rc = net::pin_this_thread(plan_.cpu); rc != 0) {
    error_ = "cannot pin worker " + std::to_string(plan_.index) + " to CPU " + std::to_string(plan_.cpu) + ": " +
             std::strerror(rc);
    return false;
  }
  // Paced sends wake on a timeout: the default 50 us timer slack would make
  // every request late by up to that much, which corrected latency counts.
  if (options_.rate > 0) ::prctl(PR_SET_TIMERSLACK, timer_slack_ns, 0, 0, 0);
  // Created here, on the thread that will be its only submitter.
  typename io::Engine<Backend, Connection>::Config engine_config;
  engine_config.slots = plan_.connections;
  engine_config.enobufs_in_a_row_max = enobufs_in_a_row_max;
  if (std::string e = engine_.init(backend_config(), engine_config); !e.empty()) {
    error_ = std::move(e);
    return false;
  }
  if (options_.target.scheme == Scheme::https) {
    std::string error;
    tls_ = tls::ClientContext::make(tls_config(options_), error);
    if (tls_ == nullptr) {
      error_ = "TLS: " + error;
      return false;
    }
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
    Connection& conn = *engine_.table().acquire();
    assert(conn.slot == i);
    conn.worker = this;
    conn.global_index = plan_.first_global_connection + i;
    conn.address_index = plan_.first_address;
    if (tls_ != nullptr) {
      // Not zeroed: pages the connection never writes to cost nothing.
      conn.tls_out = std::make_unique_for_overwrite<char[]>(tls_out_bytes);
      conn.wire.out = conn.tls_out.get();
      conn.wire.out_cap = tls_out_bytes;
    }
    if (h2_requests_ != nullptr) conn.h2 = std::make_unique<H2Link>(conn, options_.max_streams);
    // With -p, batches are paced (options checked that rate / pipeline is
    // whole): each slot of the schedule carries -p requests.
    if (options_.rate > 0)
      conn.pacing =
          Pacing(timeline_.start_ns, options_.rate / options_.pipeline, options_.connections, conn.global_index);
    connect(conn);
  }
  return true;
}

template <typename Backend>
void Worker<Backend>::run() { engine_.run(*this); }

template <typename Backend>
std::optional<__kernel_timespec> Worker<Backend>::wait_limit() const { return to_timespec(wait_ns()); }

template <typename Backend>
void Worker<Backend>::on_wake() {
  now_ns_ = monotonic_ns();
  // Before dispatch: responses seen in this batch belong to the interval
  // that holds now_ns_.
  while (interval_ && measuring_ && !stopping_ && now_ns_ >= interval_end_ns_) close_interval(interval_end_ns_);
}

template <typename Backend>
bool Worker<Backend>::done() const {
  if (!stopping_) return false;
  return open_sockets_ == 0 || now_ns_ >= stop_deadline_ns_;
}

template <typename Backend>
std::uint64_t Worker<Backend>::wait_ns() const {
  std::uint64_t target = next_tick_ns_;
  if (!measuring_) target = std::min(target, timeline_.measure_ns);
  if (!stopping_) target = std::min(target, timeline_.end_ns);
  // Only connections that may still send: a -n share that is all sent must
  // not keep a past due time here, or the loop would spin until it ends.
  if (options_.rate > 0 && !stopping_ && may_send_more()) target = std::min(target, schedule_.due_ns());
  return target > now_ns_ ? target - now_ns_ : 0;
}

template <typename Backend>
void Worker<Backend>::dispatch(const uring::Completion& c) {
  const uring::Tag t = uring::decode(c.user_data);
  Connection* found = engine_.find(t);
  // Impossible while sockets close only at zero in-flight operations; a
  // stale buffer still goes back so that the pool cannot leak.
  assert(found != nullptr && "a completion for an earlier socket of the slot");
  if (found == nullptr) {
    if (t.op == Op::recv) engine_.drop_receive(c);
    return;
  }
  Connection& conn = *found;
  switch (t.op) {
    case Op::connect: return on_connect(conn, c);
    case Op::recv: return on_recv(conn, c);
    case Op::send: return on_send(conn, c);
    case Op::cancel:
      engine_.on_cancel(conn, c);
      return maybe_release(conn);
    default: break;
  }
  assert(false && "unknown client completion");
}

template <typename Backend>
void Worker<Backend>::after_batch() {
  if (!measuring_ && now_ns_ >= timeline_.measure_ns) {
    // Warm-up is over: it ran the same loop, and now none of it counts.
    stats_.reset();  // keeps the intervals' reserved capacity
    engine_.backend().reset_syscalls();  // the worker's own thread: nobody else reads them
    if (interval_) interval_->reset();
    measuring_ = true;
  }
  if (!stopping_ && (now_ns_ >= timeline_.end_ns || stop_requested_.load(std::memory_order_relaxed))) begin_stop();
  // -n: every request of this worker's share is answered or failed.
  if (!stopping_ && plan_.requests > 0 && requests_done_ >= plan_.requests) begin_stop();
  engine_.drain_dirty([this](Connection& conn) {
    if (conn.h2 != nullptr) h2_send(conn);  // what the batch's responses freed (h2_receive)
    if (engine_.rearm_due(conn) && connected(conn)) arm_recv(conn);
    // A slot reconnects only while requests remain to be sent (-n).
    if (conn.state == ConnState::idle && !stopping_ && may_send_more() && now_ns_ >= conn.reconnect_at_ns) {
      connect(conn);
    }
  });
  // The open model: every slot due by now, in order, its connection sending
  // if it is free (one that is not sends as its answers arrive).
  if (options_.rate > 0) {
    while (!stopping_ && may_send_more() && schedule_.due_ns() <= now_ns_) {
      maybe_send(engine_.table()[schedule_.connection()]);
      schedule_.advance();
    }
  }
  if (now_ns_ >= next_tick_ns_) on_tick();
}

template <typename Backend>
void Worker<Backend>::mark_dirty(Connection& conn) { engine_.mark_dirty(conn); }

template <typename Backend>
void Worker<Backend>::on_tick() {
  next_tick_ns_ = now_ns_ + tick_ns;
  update_batch_wait();
  for (std::uint32_t i = 0; i < plan_.connections; ++i) {
    Connection& conn = engine_.table()[i];
    switch (conn.state) {
      case ConnState::idle:
        if (!stopping_ && may_send_more() && now_ns_ >= conn.reconnect_at_ns) connect(conn);
        break;
      case ConnState::connecting:
        if (now_ns_ >= conn.deadline_ns) fail(conn, ErrorClass::timeout);
        break;
      case ConnState::handshake:
      case ConnState::open:
        if (engine_.rearm_due(conn)) arm_recv(conn);
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
template <typename Backend>
void Worker<Backend>::update_batch_wait() {
  if (!engine_.backend().can_batch_wait()) return;
  const std::uint32_t us = batch_wait_.next();
  engine_.backend().set_batch_wait(us, BatchWait::batch);
  if (measuring_ && !stopping_) stats_.batch_wait_us_max = std::max(stats_.batch_wait_us_max, us);
}

template <typename Backend>
void Worker<Backend>::begin_stop() {
  if (stopping_) return;
  if (interval_ && measuring_) close_interval(std::min(now_ns_, timeline_.end_ns));
  stopping_ = true;
  stop_deadline_ns_ = now_ns_ + stop_drain_ns;
  if (measuring_) stats_.syscalls = engine_.backend().syscalls();  // the window's, not the stop's
  // Responses still on their way are neither counted nor failed: the run's
  // window has ended.
  for (std::uint32_t i = 0; i < plan_.connections; ++i) abort(engine_.table()[i]);
}

template <typename Backend>
bool Worker<Backend>::may_send_more() const { return plan_.requests == 0 || requests_sent_ < plan_.requests; }

template <typename Backend>
void Worker<Backend>::count_error(ErrorClass error) {
  if (!measuring_ || stopping_) return;
  ++stats_.errors[std::size_t(error)];
  live_.errors.add();
}

// ---------------------------------------------------------------------------
// Connecting.

template <typename Backend>
void Worker<Backend>::connect(Connection& conn) {
  assert(conn.state == ConnState::idle);
  if (options_.requests_per_connection > 0) {
    // The socket's quota: what it sends before its Connection: close. With
    // -n, only what no other socket was promised; none left: no socket.
    std::uint64_t quota = options_.requests_per_connection;
    if (plan_.requests > 0) quota = std::min(quota, plan_.requests - requests_reserved_);
    if (quota == 0) return;
    conn.socket_quota = std::uint32_t(quota);
    if (plan_.requests > 0) requests_reserved_ += quota;
  }
  const net::Address& address = options_.target.addresses[conn.address_index];
  const int fd = engine_.backend().open_socket(address.family(), conn.slot);
  if (fd < 0) {
    // Out of descriptors or memory: a connect error, retried after a pause.
    give_back_quota(conn);
    count_error(ErrorClass::connect);
    conn.connect_failed = true;
    conn.reconnect_at_ns = now_ns_ + connect_backoff_ns;
    return;
  }
  engine_.table().renew(conn);
  engine_.open(conn, fd);
  conn.state = ConnState::connecting;
  conn.deadline_ns = now_ns_ + options_.connect_timeout_ns;
  conn.outstanding = 0;
  conn.sent_on_socket = 0;
  conn.then_len = 0;
  conn.peer_closing = conn.unsolicited = false;
  ++open_sockets_;
  engine_.connect(conn, address);
}

template <typename Backend>
void Worker<Backend>::on_connect(Connection& conn, const io::Completion& c) {
  const std::int32_t res = engine_.on_connect(conn, c);
  if (conn.state != ConnState::connecting) return maybe_release(conn);
  if (res < 0) {
    // Refused, unreachable, or out of ports or descriptors: a connect error,
    // retried.
    conn.connect_failed = true;
    // The next attempt tries the target's next address.
    conn.address_index = std::uint32_t((conn.address_index + 1) % options_.target.addresses.size());
    if (++connect_failures_in_a_row_ >= connect_failures_in_a_row_max && gave_up_.empty()) {
      gave_up_ = std::to_string(connect_failures_in_a_row_) +
                 " connects in a row failed, the last with: " + std::strerror(-res);
      fail(conn, ErrorClass::connect);
      begin_stop();
      return;
    }
    return fail(conn, ErrorClass::connect);
  }
  if (tls_ == nullptr) {
    connect_failures_in_a_row_ = 0;
    conn.connect_failed = false;
    become_open(conn);
    arm_recv(conn);
    maybe_send(conn);
    return;
  }
  // https: the handshake first, within the connect's deadline; the first
  // request's clock starts after it.
  std::string error;
  if (!tls_->start(conn.tls, options_.target.host, error)) return handshake_failed(conn, error);
  conn.state = ConnState::handshake;
  arm_recv(conn);
  start_handshake(conn);
}

template <typename Backend>
void Worker<Backend>::become_open(Connection& conn) {
  conn.state = ConnState::open;
  if (conn.was_open && measuring_ && !stopping_) ++stats_.reconnects;
  conn.was_open = true;
  if (conn.h2 != nullptr) return h2_open(conn);
  http::ResponseParser::Config config = parser_config_;
  config.events = &conn;
  conn.parser.reset(config);
}

// The ClientHello goes out; reads drive the rest of the handshake.
template <typename Backend>
void Worker<Backend>::start_handshake(Connection& conn) {
  assert(conn.wire.out_len == 0 && conn.tls_held_len == 0);
  if (conn.tls.handshake(conn.wire) == tls::Session::Status::error) {
    return handshake_failed(conn, conn.tls.error_reason());
  }
  pump_tls(conn);
}

template <typename Backend>
void Worker<Backend>::handshake_done(Connection& conn) {
  // A connection is made once its handshake is done.
  connect_failures_in_a_row_ = 0;
  conn.connect_failed = false;
  if (measuring_ && !stopping_) {
    ++stats_.tls_handshakes;
    if (conn.tls.resumed()) ++stats_.tls_resumed;
  }
  if (tls_protocol_.empty()) {
    tls_protocol_ = conn.tls.protocol();
    tls_cipher_ = conn.tls.cipher();
  }
  if (conn.h2 != nullptr && !h2_alpn_chosen(conn)) return;
  become_open(conn);
  maybe_send(conn);  // the request leaves with the handshake's last flight
}

// A handshake that fails is a tls error, retried after the connect back-off;
// after as many failures in a row as failed connects would take, the worker
// gives up and the report says why.
template <typename Backend>
void Worker<Backend>::handshake_failed(Connection& conn, const std::string& reason) {
  conn.connect_failed = true;
  if (++connect_failures_in_a_row_ >= connect_failures_in_a_row_max && gave_up_.empty()) {
    gave_up_ = std::to_string(connect_failures_in_a_row_) + " TLS handshakes in a row failed, the last with: " +
               (reason.empty() ? std::string("the server closed the connection") : reason);
    fail(conn, ErrorClass::tls);
    begin_stop();
    return;
  }
  fail(conn, ErrorClass::tls);
}

// ---------------------------------------------------------------------------
// Receiving and checking responses.

template <typename Backend>
void Worker<Backend>::arm_recv(Connection& conn) {
  assert(connected(conn));
  engine_.arm_receive(conn);
}

template <typename Backend>
void Worker<Backend>::on_recv(Connection& conn, const io::Completion& c) {
  const io::Received r = engine_.on_receive(conn, c);
  switch (r.kind) {
    case io::Received::Kind::data:
      if (measuring_ && !stopping_) stats_.bytes_received += std::uint32_t(r.res);
      // A bundle's pieces (one buffer each) in order, as separate receives.
      for (io::Received piece = r;;) {
        if (connected(conn)) consume(conn, piece.data, piece.len);
        // Nothing points into the buffer any more: the parser and OpenSSL
        // copy what they keep (a record cut short), and so does the worker
        // for ciphertext the session could not read yet. It goes back at once.
        engine_.give_back(piece.buffer_id);
        if (!engine_.next_piece(piece)) break;
      }
      // A single-shot receive (a fallback) is re-armed after each delivery.
      if (connected(conn) && !conn.recv_armed) arm_recv(conn);
      break;
    case io::Received::Kind::eof:
      // Behind held ciphertext, the end waits until that is read.
      if (conn.tls_held_len > 0) {
        conn.tls_held_eof = true;
      } else {
        on_eof(conn);
      }
      break;
    // Not an end of stream when the buffer ring ran dry (-ENOBUFS): the
    // engine re-arms after the batch or on the tick.
    case io::Received::Kind::rearm:
    case io::Received::Kind::rearm_on_tick:
    case io::Received::Kind::cancelled: break;
    case io::Received::Kind::peer_gone:
      if (connected(conn)) fail(conn, ErrorClass::read);
      break;
  }
  maybe_release(conn);
}

template <typename Backend>
void Worker<Backend>::consume(Connection& conn, const char* data, std::uint32_t len) {
  if (tls_ == nullptr) return consume_plaintext(conn, data, len);
  // Ciphertext behind held ciphertext must wait for it.
  if (conn.tls_held_len > 0) return hold_ciphertext(conn, data, len);
  // Read in place, from the receive buffer.
  conn.wire.in = data;
  conn.wire.in_len = len;
  read_tls(conn);
  const char* rest = conn.wire.in;
  const std::size_t rest_len = conn.wire.in_len;
  conn.wire.in = nullptr;
  conn.wire.in_len = 0;
  if (!connected(conn)) return;
  pump_tls(conn);  // what reading wrote: handshake messages, a key update's answer, an alert
  // Reading stopped for room in the area: the rest waits for its send.
  if (rest_len > 0) hold_ciphertext(conn, rest, rest_len);
}

// https: reads the records `wire.in` holds (the handshake's first, while it
// lasts) and hands their plaintext to the parser, until the session wants
// more ciphertext or room in the output area, or the connection ends.
template <typename Backend>
void Worker<Backend>::read_tls(Connection& conn) {
  while (connected(conn)) {
    std::size_t n = 0;
    const tls::Session::Status status = conn.tls.read(conn.wire, plaintext_.data(), plaintext_.size(), n);
    // Open before the plaintext that may have come with the last flight.
    if (conn.state == ConnState::handshake && conn.tls.handshake_done()) handshake_done(conn);
    switch (status) {
      case tls::Session::Status::done: consume_plaintext(conn, plaintext_.data(), std::uint32_t(n)); break;
      case tls::Session::Status::want_io: return;
      case tls::Session::Status::closed: return on_peer_closed(conn);
      case tls::Session::Status::error:
        if (conn.state == ConnState::handshake) return handshake_failed(conn, conn.tls.error_reason());
        return fail(conn, ErrorClass::tls);
    }
  }
}

// https: keeps ciphertext the session cannot read yet, behind what is held
// already, until the output area's send is done (read_held). Copied, so
// that the receive buffer goes back to the pool at once.
template <typename Backend>
void Worker<Backend>::hold_ciphertext(Connection& conn, const char* data, std::size_t len) {
  // Only room makes the session stop with ciphertext left, and room comes
  // back when the send in flight is done.
  assert(conn.send_inflight);
  if (len > tls_held_bytes_max - conn.tls_held_len) return fail(conn, ErrorClass::tls);
  // Once per slot at most, and only for a server that writes much during
  // our reads (key updates): no connection that does not needs it.
  if (conn.tls_held == nullptr) conn.tls_held = std::make_unique_for_overwrite<char[]>(tls_held_bytes_max);
  std::memcpy(conn.tls_held.get() + conn.tls_held_len, data, len);
  conn.tls_held_len += std::uint32_t(len);
}

// https: the output area's send is done, so the held ciphertext has room to
// be read; what it still cannot read moves to the front for the next time.
template <typename Backend>
void Worker<Backend>::read_held(Connection& conn) {
  conn.wire.in = conn.tls_held.get();
  conn.wire.in_len = conn.tls_held_len;
  read_tls(conn);
  const std::size_t rest_len = conn.wire.in_len;
  std::memmove(conn.tls_held.get(), conn.wire.in, rest_len);
  conn.wire.in = nullptr;
  conn.wire.in_len = 0;
  if (!connected(conn)) return;  // the held bytes go with the socket (maybe_release)
  conn.tls_held_len = std::uint32_t(rest_len);
  if (rest_len == 0 && conn.tls_held_eof) {
    conn.tls_held_eof = false;
    on_eof(conn);
  }
}

template <typename Backend>
void Worker<Backend>::consume_plaintext(Connection& conn, const char* data, std::uint32_t len) {
  if (conn.h2 != nullptr) return h2_receive(conn, data, len);
  if (conn.parser.feed(data, len) != http::ResponseParser::Status::ok || conn.unsolicited) {
    return fail(conn, ErrorClass::parse);
  }
  if (conn.peer_closing) {
    // The server said it closes after that response: requests sent after it
    // will never be answered.
    if (conn.outstanding > 0) return fail(conn, ErrorClass::closed);
    return abort(conn);
  }
  maybe_send(conn);
}

// The peer's FIN, once everything received before it is read.
template <typename Backend>
void Worker<Backend>::on_eof(Connection& conn) {
  if (conn.state == ConnState::handshake) {
    handshake_failed(conn, "the server closed the connection in the handshake");
  } else if (conn.state == ConnState::open) {
    on_peer_closed(conn);
  }
}

template <typename Backend>
void Worker<Backend>::on_peer_closed(Connection& conn) {
  // The end of the stream completes a close-delimited response; anything
  // else still expected was cut off.
  if (conn.h2 != nullptr) return h2_peer_closed(conn);
  if (conn.parser.finish() != http::ResponseParser::Status::ok || conn.outstanding > 0) {
    return fail(conn, ErrorClass::closed);
  }
  abort(conn);
}

template <typename Backend>
void Worker<Backend>::on_response(Connection& conn, const http::ResponseHead& head) {
  if (conn.outstanding == 0) {
    conn.unsolicited = true;
    return;
  }
  --conn.outstanding;
  finish_requests(1);
  // The next response answers the next request of the batch: its own body.
  if (varying_bodies_) {
    if (++conn.expect_index == request_.distinct()) conn.expect_index = 0;
    if (conn.outstanding > 0) conn.parser.expect_body(request_.expected_body(conn.expect_index));
  }
  if (!head.keep_alive) conn.peer_closing = true;
  batch_wait_.observe(now_ns_ - conn.sent_at_ns);
  if (!measuring_ || stopping_) return;
  record_latency(conn.sent_at_ns, conn.intended_ns);
  count_response(head.status, head.body_matches);
}

// A complete response, in the window: counted by status, and checked.
template <typename Backend>
void Worker<Backend>::count_response(std::uint16_t status, bool body_matches) {
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

template <typename Backend>
void Worker<Backend>::record_latency(std::uint64_t sent_at_ns, std::uint64_t intended_ns) {
  const std::uint64_t latency_ns = now_ns_ - (options_.rate > 0 ? intended_ns : sent_at_ns);
  stats_.latency.record(latency_ns);
  if (options_.rate > 0) stats_.uncorrected.record(now_ns_ - sent_at_ns);
  if (interval_) interval_->record(latency_ns);
}

template <typename Backend>
void Worker<Backend>::close_interval(std::uint64_t end_ns) {
  // Once a second, not per request: the sparse copy may allocate.
  stats_.intervals.push_back({interval_index_, end_ns, interval_->sparse()});
  interval_->reset();
  ++interval_index_;
  interval_end_ns_ += log_interval_ns;
}

// ---------------------------------------------------------------------------
// Sending: one send per request, or per pipelined batch, from the shared bytes.

template <typename Backend>
void Worker<Backend>::maybe_send(Connection& conn) {
  if (conn.h2 != nullptr) return h2_send(conn);
  if (conn.state != ConnState::open || conn.send_inflight || conn.outstanding > 0 || stopping_) return;
  if (!may_send_more()) return;
  if (options_.rate > 0) {
    const std::uint64_t due_ns = conn.pacing.next_ns();
    if (now_ns_ < due_ns) return;
    conn.intended_ns = due_ns;
    conn.pacing.advance();
  }
  std::uint64_t count = options_.pipeline;
  if (plan_.requests > 0) count = std::min<std::uint64_t>(count, plan_.requests - requests_sent_);
  // --requests-per-connection: the socket's last request says Connection:
  // close, and nothing is sent after it.
  const bool churn = options_.requests_per_connection > 0;
  if (churn) {
    if (conn.sent_on_socket >= conn.socket_quota) return;
    count = std::min<std::uint64_t>(count, conn.socket_quota - conn.sent_on_socket);
    conn.sent_on_socket += std::uint32_t(count);
  }
  const bool closing = churn && conn.sent_on_socket == conn.socket_quota;
  requests_sent_ += count;
  conn.outstanding = std::uint32_t(count);
  conn.sent_at_ns = now_ns_;
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
  const std::string_view batch = request_.batch(next_request_, closing ? count - 1 : count);
  conn.send_base = batch.data();
  conn.send_offset = 0;
  conn.send_end = std::uint32_t(batch.size());
  conn.then_len = 0;
  if (closing) {
    const std::string_view last = request_.closing((next_request_ + count - 1) % request_.distinct());
    if (batch.empty()) {
      conn.send_base = last.data();
      conn.send_end = std::uint32_t(last.size());
    } else {
      conn.then_base = last.data();
      conn.then_len = std::uint32_t(last.size());
    }
  }
  if (varying_bodies_) {
    conn.expect_index = std::uint32_t(next_request_);
    conn.parser.expect_body(request_.expected_body(conn.expect_index));
  }
  // Once per send, not per request; without a placeholder distinct() is 1.
  next_request_ = (next_request_ + count) % request_.distinct();
  if (tls_ != nullptr) return pump_tls(conn);
  submit_send(conn);
}

// The batch's second range (a closing batch's last request), once the first
// is sent or handed to TLS; false when there is none.
template <typename Backend>
bool Worker<Backend>::next_send_range(Connection& conn) {
  if (conn.h2 != nullptr) return h2_next_output(conn);
  if (conn.then_len == 0) return false;
  conn.send_base = conn.then_base;
  conn.send_offset = 0;
  conn.send_end = conn.then_len;
  conn.then_len = 0;
  return true;
}

// https: encrypts the batch's plaintext into the output area as far as it
// has room, and sends the area. Nothing is encrypted while a send is in
// flight: it goes when that send is done, so that reads keep their room.
template <typename Backend>
void Worker<Backend>::pump_tls(Connection& conn) {
  if (conn.send_inflight || !connected(conn)) return;
  if (conn.state == ConnState::open) {
    while (true) {
      if (conn.send_offset == conn.send_end && !next_send_range(conn)) break;
      const std::size_t n =
          conn.tls.write(conn.wire, conn.send_base + conn.send_offset, conn.send_end - conn.send_offset);
      if (n == 0) break;
      conn.send_offset += std::uint32_t(n);
    }
  }
  flush_tls(conn);
}

// https: sends what the output area holds, one send at a time. What the
// session appends while it is in flight lies beyond the send's range.
template <typename Backend>
void Worker<Backend>::flush_tls(Connection& conn) {
  if (conn.send_inflight || conn.wire.out_len == 0) return;
  assert(connected(conn) && conn.tls_sending == 0);
  conn.tls_sending = std::uint32_t(conn.wire.out_len);
  engine_.send(conn, conn.wire.out, conn.tls_sending);
}

// https: the area's send is done: its bytes leave the area, and what was
// appended meanwhile moves to the front (small: reads' answers and alerts).
template <typename Backend>
void Worker<Backend>::tls_sent(Connection& conn) {
  assert(conn.tls_sending <= conn.wire.out_len);
  const std::size_t appended = conn.wire.out_len - conn.tls_sending;
  std::memmove(conn.wire.out, conn.wire.out + conn.tls_sending, appended);
  conn.wire.out_len = appended;
  conn.tls_sending = 0;
}

// Sends the rest of the batch's range; send_offset counts what was handed
// to a send (the engine resumes a short one).
template <typename Backend>
void Worker<Backend>::submit_send(Connection& conn) {
  assert(conn.send_offset < conn.send_end);
  engine_.send(conn, conn.send_base + conn.send_offset, conn.send_end - conn.send_offset);
  conn.send_offset = conn.send_end;
}

template <typename Backend>
void Worker<Backend>::on_send(Connection& conn, const io::Completion& c) {
  const io::Sent sent = engine_.on_send(conn, c);
  if (!connected(conn)) return maybe_release(conn);
  if (sent.kind == io::Sent::Kind::failed) return fail(conn, ErrorClass::write);
  if (tls_ != nullptr) {
    // The engine resumes a short send; once it is done, the area has room
    // again: for held ciphertext to be read, then for the rest of the batch.
    if (sent.kind == io::Sent::Kind::written) return;
    tls_sent(conn);
    if (conn.tls_held_len > 0) {
      read_held(conn);
    } else if (conn.state == ConnState::handshake) {
      // A flight that stopped for room with nothing left to read goes on
      // only when the session is called again (with no input, this costs
      // OpenSSL one look); our flights fit the area, so this is a guard.
      read_tls(conn);
    }
    pump_tls(conn);
    if (!conn.send_inflight) maybe_send(conn);
    return;
  }
  // Only one send is ever in flight per connection, so bytes cannot be
  // reordered; a short one was resumed by the engine.
  if (sent.kind == io::Sent::Kind::written) return;
  if (next_send_range(conn)) return submit_send(conn);
  maybe_send(conn);
}

// ---------------------------------------------------------------------------
// Failing and closing.

template <typename Backend>
void Worker<Backend>::fail(Connection& conn, ErrorClass error) {
  count_error(error);
  // Requests that will never be answered are done, as failures.
  finish_requests(conn.outstanding);
  conn.outstanding = 0;
  abort(conn);
}

template <typename Backend>
void Worker<Backend>::abort(Connection& conn) {
  if (conn.state == ConnState::idle || conn.state == ConnState::closing) return;
  conn.state = ConnState::closing;
  engine_.cancel_all(conn);
  maybe_release(conn);
}

// What a socket was promised and did not send goes back to the pool (-n
// with --requests-per-connection), for the slot's next socket or another's.
template <typename Backend>
void Worker<Backend>::give_back_quota(Connection& conn) {
  if (options_.requests_per_connection == 0 || plan_.requests == 0) return;
  assert(requests_reserved_ >= conn.socket_quota - conn.sent_on_socket);
  requests_reserved_ -= conn.socket_quota - conn.sent_on_socket;
  conn.socket_quota = conn.sent_on_socket = 0;
}

template <typename Backend>
void Worker<Backend>::maybe_release(Connection& conn) {
  if (conn.state != ConnState::closing || !engine_.closed(conn)) return;
  give_back_quota(conn);
  // The session and its bytes go with the socket; the buffers stay with
  // the slot.
  conn.tls.reset();
  conn.wire.out_len = 0;
  conn.tls_sending = 0;
  conn.tls_held_len = 0;
  conn.tls_held_eof = false;
  if (conn.h2 != nullptr) {
    conn.h2->session.close();  // its streams' ends are not counted: the socket is no longer open
    conn.h2->clear_streams();
  }
  engine_.close(conn);
  conn.state = ConnState::idle;
  conn.outstanding = 0;
  assert(open_sockets_ > 0);
  --open_sockets_;
  conn.reconnect_at_ns = now_ns_ + (conn.connect_failed ? connect_backoff_ns : 0);
  mark_dirty(conn);
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

}  // namespace ringhttp::client

#include "client/load/worker_h2.hpp"

namespace ringhttp::client {

template class Worker<uring::Backend>;
template class Worker<epoll::Backend>;

}  // namespace ringhttp::client
