// A connection's output: one send in flight at a time, built from the
// queued responses as iovecs over bytes where they live (send_batch.hpp),
// resumed exactly after a short write, zero-copy notifications awaited
// before written bytes are reused; and the output blocks a busy connection
// borrows, with their queue of waiters.

#include "server/http1/session.hpp"

#include <cassert>
#include <cerrno>

#include "server/send_batch.hpp"

namespace ringhttp::server::http1 {

void Session::flush(Connection& conn) {
  // Responses already written (and waiting for a zero-copy notification
  // before they leave the queue) are not sent again: the batch starts after
  // them.
  if (conn.output == nullptr || conn.send_inflight || conn.state == ConnState::closing ||
      conn.state == ConnState::lingering) {
    return;
  }
  if (conn.tls.started()) return tls_flush(conn);
  if (conn.output->out.size() == conn.written_responses) return;
  send_pending(conn);
}

// Out of line: flush() is called after every completion that may have
// made room, and most find nothing to send.
void Session::send_pending(Connection& conn) {
  const std::uint64_t total = prepare_batch(conn);
  if (total == 0) return;  // the first unsent response waits for a database result
  // With zc every byte the iovecs point at stays as it is until the send's
  // notification (release_written waits for it).
  io_.send_message(conn, &conn.output->msg, total);
  conn.send_progress_ms = now_ms_;
  counters_.sends.add();
}

// The next batch of queued responses as the output block's msghdr (its
// iovecs), and what it retires once written; its bytes, 0 when the first
// unsent response waits for a database result. Both plain sends and TLS's
// encryption start here.
std::uint64_t Session::prepare_batch(Connection& conn) {
  OutputBlock& out = *conn.output;
  const auto [n, total, retires, stream_bytes] =
      build_send_batch(out.out, conn.written_responses, date_.line(), out.iov,
                       zero_copy_ ? std::span<char>() : std::span<char>(out.staging));
  if (total == 0) return 0;
  out.msg = msghdr{};
  out.msg.msg_iov = out.iov.data();
  out.msg.msg_iovlen = n;
  conn.send_retires = retires;
  conn.send_stream_bytes = stream_bytes;
  return total;
}

void Session::on_sent(Connection& conn, const io::Sent& sent) {
  if (sent.kind == io::Sent::Kind::failed) {
    // EPIPE, ECONNRESET, ... (the peer is gone), or our own cancel (the
    // slot was closing already: it is freed after the batch).
    abort(conn);
    return dirty_.mark(conn);
  }
  if (sent.kind == io::Sent::Kind::again) {
    // Nothing written, made again by the engine: no progress either.
    counters_.sends_again.add();
    if (conn.state == ConnState::closing) dirty_.mark(conn);
    return;
  }
  counters_.bytes_sent.add(std::uint64_t(sent.res));
  conn.last_activity_ms = now_ms_;
  if (conn.state == ConnState::closing) return dirty_.mark(conn);  // to be freed
  if (sent.kind == io::Sent::Kind::written) {
    // A short write: the engine sent the rest, from exactly the next unsent
    // byte.
    counters_.sends_short.add();
    counters_.sends.add();
    conn.send_progress_ms = now_ms_;
    return;
  }
  // HTTPS: the batch's next records go out first, if any are left.
  if (conn.tls.started() && !tls_on_sent(conn)) return;
  retire_sent(conn);
  after_output_progress(conn);
}

void Session::on_notification(Connection& conn, bool copied) {
  counters_.zc_notifications.add();
  if (copied) counters_.zc_copied.add();
  if (conn.state == ConnState::closing) return dirty_.mark(conn);  // to be freed
  release_written(conn);
  after_output_progress(conn);
}

// Room may have appeared in the queue: read again if reading waited for it,
// send what is queued, close if draining is done.
void Session::after_output_progress(Connection& conn) {
  if (conn.state == ConnState::open && conn.input_paused && can_take_more(conn)) resume_input(conn);
  flush(conn);
  maybe_finish_drain(conn);
  maybe_return_output(conn);
}

// ---------------------------------------------------------------------------
// Output blocks: lent while a connection has output to make or send.

bool Session::lend_output(Connection& conn) {
  if (!output_pool_.lend(conn)) return false;
  counters_.output_blocks_lent.set(output_pool_.lent());
  return true;
}

// Gives the block back whatever it holds: only for a connection that has
// nothing in flight any more (closing at zero), or nothing queued. The
// oldest waiter, if any, gets it at once; its input resumes after the
// batch's completions (after_batch).
void Session::return_output(Connection& conn) {
  if (conn.output == nullptr) return;
  Connection* granted = output_pool_.give_back(conn);
  counters_.output_blocks_lent.set(output_pool_.lent());
  if (granted == nullptr) return;
  granted->output_granted = true;
  dirty_.mark(*granted);
}

// A block goes back as soon as nothing refers to it: no request in
// progress (an open connection's parser keeps it in the block), no
// response queued or written and awaiting a zero-copy notification, no
// send in flight. Between requests an idle keep-alive connection holds none.
void Session::maybe_return_output(Connection& conn) {
  if (conn.output == nullptr || conn.state == ConnState::closing || conn.state == ConnState::free) return;
  if (conn.state == ConnState::open && conn.parser.in_message()) return;
  if (!conn.output->out.empty() || !conn.output->tls_box.empty() || conn.send_inflight || conn.zc_pending > 0) return;
  assert(conn.written_responses == 0);
  return_output(conn);
}

void Session::wait_for_output(Connection& conn) {
  output_pool_.wait(conn);
  conn.waiting_since_ms = now_ms_;
  counters_.output_block_waits.add();
}

// The batch is wholly written: its whole responses join the written ones at
// the front of the queue, and a stream left in progress moves on (its next
// chunk comes from the static pattern block, so no byte a pending
// notification covers is rewritten).
void Session::retire_sent(Connection& conn) {
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
void Session::release_written(Connection& conn) {
  if (conn.zc_pending > 0 || conn.written_responses == 0) return;
  assert(conn.output != nullptr);
  for (std::uint32_t i = 0; i < conn.written_responses; ++i) {
    if (conn.output->out.front().source == BodySource::metrics) conn.metrics_queued = false;
    conn.output->out.pop();
  }
  conn.written_responses = 0;
}

}  // namespace ringhttp::server::http1
