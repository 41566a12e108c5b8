// The load session's HTTP/2 side (--http2, --http2-prior-knowledge): the
// connection's HTTP/2 session takes the place of the response parser, and
// its streams the place of the pipelined batch. The socket, TLS, the send
// and the receive are as for HTTP/1.1 (session_*.cpp).
//
// Counting: a stream that ends alone (a response, a reset, a stream
// error) is counted alone; a connection that fails counts one error, and
// its streams in flight are finished as failures, as a failed HTTP/1.1
// batch is. A refused stream is not an error: its request is sent again,
// and timed from its first send.

#include "client/load/session.hpp"

#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <cassert>

namespace ringhttp::client {

void LoadSession::h2_open(Connection& conn) {
  H2Link& h2 = *conn.h2;
  assert(h2.free.size() == h2.streams.size() && conn.outstanding == 0);
  conn.send_offset = conn.send_end = conn.then_len = 0;
  http2::ClientSettings settings;
  settings.max_streams = options_.max_streams;
  // The preface and SETTINGS go out with the first requests.
  if (!h2.session.start(&h2, settings)) return fail(conn, ErrorClass::protocol);
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
}

// https: the server must choose h2 by ALPN; one that does not would be
// answered in a protocol it does not expect, so the run stops and says so.
bool LoadSession::h2_alpn_chosen(Connection& conn) {
  if (conn.tls.alpn() == "h2") return true;
  if (gave_up_.empty()) {
    std::string chose = "none";
    if (!conn.tls.alpn().empty()) {
      chose = '"';
      chose += conn.tls.alpn();
      chose += '"';
    }
    gave_up_ = "--http2: the server did not choose h2 by ALPN (it chose ";
    gave_up_ += chose;
    gave_up_ += "): it does not speak HTTP/2 over TLS here";
  }
  fail(conn, ErrorClass::protocol);
  begin_stop();
  return false;
}

void LoadSession::h2_receive(Connection& conn, const char* data, std::uint32_t len) {
  H2Link& h2 = *conn.h2;
  if (h2.broken || h2.leaving) return;  // nothing more is read: the GOAWAY is on its way out
  if (h2.session.receive(data, len) != http2::ClientSession::Status::ok) h2_break(conn);
  // New streams in the places freed, and the session's answers (SETTINGS
  // ACK, PING, WINDOW_UPDATE), once the batch's completions are all read:
  // one send for every response the batch brought this connection.
  dirty_->mark(conn);
}

// The server broke the protocol (a bad frame or header block): one
// protocol error, the streams in flight failed with it, and the session's
// GOAWAY with the error's code (RFC 9113 section 5.4.1) sent before the
// socket closes, within --timeout.
void LoadSession::h2_break(Connection& conn) {
  H2Link& h2 = *conn.h2;
  if (h2.broken) return;
  h2.broken = true;
  count_error(ErrorClass::protocol);
  finish_requests(conn.outstanding);
  conn.outstanding = 0;
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
}

// What the session has queued goes out: sent (h2c) or handed to TLS.
void LoadSession::h2_flush(Connection& conn) {
  if (tls_ != nullptr) return pump_tls(conn);
  if (!conn.send_inflight && h2_next_output(conn)) submit_send(conn);
}

// Opens a stream for every request due while the session allows, then
// sends what the session has queued: one send for all of it.
void LoadSession::h2_send(Connection& conn) {
  if (conn.state != ConnState::open) return;
  H2Link& h2 = *conn.h2;
  // --requests-per-connection: the socket's streams are spent, and the
  // last has ended. It says GOAWAY, as HTTP/1.1's last request says
  // Connection: close, and the slot opens a new one.
  const bool churn = options_.requests_per_connection > 0;
  if (churn && !h2.broken && !h2.leaving && conn.sent_on_socket >= conn.socket_quota && conn.outstanding == 0) {
    if (!h2.session.leave()) return fail(conn, ErrorClass::protocol);
    h2.leaving = true;
    conn.deadline_ns = now_ns_ + options_.timeout_ns;
  }
  // Broken or leaving: the socket ends once the GOAWAY is sent.
  if (h2.broken || h2.leaving) {
    h2_flush(conn);
    if (conn.state == ConnState::open && !conn.send_inflight) abort(conn);
    return;
  }
  // After the server's GOAWAY, the socket ends once its last stream does;
  // the slot opens a new one.
  if (h2.goaway && conn.outstanding == 0) return abort(conn);
  while (!stopping_ && h2.session.can_submit() && (!churn || conn.sent_on_socket < conn.socket_quota)) {
    StreamRequest next;
    if (!h2_retry_.empty()) {
      next = h2_retry_.back();
      h2_retry_.pop_back();
      ++requests_sent_;
      // Refused for longer than --timeout: it is late, not sent again.
      if (now_ns_ - next.sent_at_ns >= options_.timeout_ns) {
        count_error(ErrorClass::timeout);
        finish_requests(1);
        continue;
      }
    } else {
      if (!may_send_more()) break;
      if (options_.rate > 0) {
        const std::uint64_t due_ns = conn.pacing.next_ns();
        if (now_ns_ < due_ns) break;
        next.intended_ns = due_ns;
        conn.pacing.advance();
      }
      next.sent_at_ns = now_ns_;
      next.request = std::uint32_t(next_request_);
      next_request_ = (next_request_ + 1) % h2_requests_->distinct();
      ++requests_sent_;
    }
    if (!h2_submit(conn, next)) break;
    if (churn) ++conn.sent_on_socket;
  }
  h2_flush(conn);
}

bool LoadSession::h2_submit(Connection& conn, const StreamRequest& request) {
  H2Link& h2 = *conn.h2;
  StreamRequest* place = h2.take_place();
  assert(place != nullptr && "can_submit() keeps the streams within their places");
  *place = request;
  place->in_flight = true;
  const http2::ClientRequest r{
      .headers = h2_requests_->headers(request.request, h2_fields_),
      .body = h2_requests_->body(request.request),
      .expected_body = request_.expected_body(request.request),
      .check_body = options_.check_body,
  };
  if (!h2.session.submit(r, place)) {
    // The session takes no more streams (its 2^31 stream ids are spent):
    // the request goes back, and the socket ends as after a GOAWAY.
    place->in_flight = false;
    h2.free.push_back(std::uint32_t(place - h2.streams.data()));
    --requests_sent_;
    h2_retry_.push_back(request);
    h2.goaway = true;
    return false;
  }
  ++conn.outstanding;
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
  h2.oldest_sent_ns = std::min(h2.oldest_sent_ns, request.sent_at_ns);
  return true;
}

// The session's queued frames as the next range to send (or to hand to
// TLS); false when it has none. Called only with no range left in flight.
bool LoadSession::h2_next_output(Connection& conn) {
  H2Link& h2 = *conn.h2;
  const std::size_t n = h2.session.take_output(h2.out.get(), H2Link::out_bytes);
  // nghttp2 found a connection error in what it read: the GOAWAY it
  // queued for it is in this output.
  if (h2.session.broken()) h2_break(conn);
  if (n == 0) return false;
  conn.send_base = h2.out.get();
  conn.send_offset = 0;
  conn.send_end = std::uint32_t(n);
  return true;
}

// On the tick: a stream in flight past --timeout fails the connection, as
// a late HTTP/1.1 response does; so does a server that lets no stream open
// for --timeout while requests wait (SETTINGS_MAX_CONCURRENT_STREAMS 0).
void LoadSession::h2_check_deadlines(Connection& conn) {
  H2Link& h2 = *conn.h2;
  if (h2.broken || h2.leaving) {
    // Its error is counted; a GOAWAY that could not leave in time is dropped.
    if (now_ns_ >= conn.deadline_ns) abort(conn);
    return;
  }
  // A scan of the streams only when the oldest may be late; it finds the
  // late one, or the oldest still in flight for the next ticks.
  if (h2.oldest_sent_ns != UINT64_MAX && now_ns_ - h2.oldest_sent_ns >= options_.timeout_ns) {
    std::uint64_t oldest_ns = UINT64_MAX;
    for (const StreamRequest& s : h2.streams) {
      if (!s.in_flight) continue;
      if (now_ns_ - s.sent_at_ns >= options_.timeout_ns) return fail(conn, ErrorClass::timeout);
      oldest_ns = std::min(oldest_ns, s.sent_at_ns);
    }
    h2.oldest_sent_ns = oldest_ns;
  }
  const bool waiting = !stopping_ && (!h2_retry_.empty() || may_send_more()) &&
                       (options_.rate == 0 || conn.pacing.next_ns() <= now_ns_);
  if (conn.outstanding == 0 && waiting && !h2.goaway && !h2.session.can_submit() && now_ns_ >= conn.deadline_ns) {
    fail(conn, ErrorClass::timeout);
  }
}

// The server closed the connection. Streams it had not read (above its
// GOAWAY's last) are sent again; any other still open was cut off.
void LoadSession::h2_peer_closed(Connection& conn) {
  H2Link& h2 = *conn.h2;
  if (h2.broken) return abort(conn);
  h2.ending = true;
  h2.session.close();
  h2.ending = false;
  if (conn.outstanding > 0) return fail(conn, ErrorClass::closed);
  abort(conn);
}

void LoadSession::on_stream_done(Connection& conn, const StreamRequest& stream, const http2::StreamResult& r) {
  // A connection that failed, closed or broke counted its streams then,
  // and one that is ending counts those that end broken with itself.
  if (conn.state != ConnState::open || conn.h2->broken) return;
  if (r.end == http2::StreamEnd::broken && conn.h2->ending) return;
  assert(conn.outstanding > 0);
  --conn.outstanding;
  conn.deadline_ns = now_ns_ + options_.timeout_ns;
  const bool counted = measuring_ && !stopping_;
  switch (r.end) {
    case http2::StreamEnd::complete:
      finish_requests(1);
      batch_wait_.observe(now_ns_ - stream.sent_at_ns);
      if (!counted) return;
      record_latency(stream.sent_at_ns, stream.intended_ns);
      return count_response(r.head.status, r.head.body_matches);
    case http2::StreamEnd::refused:
      --requests_sent_;
      h2_retry_.push_back(stream);
      if (counted) ++stats_.h2.refused;
      return;
    case http2::StreamEnd::reset:
      finish_requests(1);
      if (counted) ++stats_.h2.resets[std::min<std::size_t>(r.error_code, h2_error_codes - 1)];
      return count_error(ErrorClass::reset);
    case http2::StreamEnd::broken:
      // A stream error this side found (a malformed response): the
      // session reset the stream, and the connection goes on.
      finish_requests(1);
      return count_error(ErrorClass::protocol);
  }
}

void LoadSession::on_goaway(Connection& conn, std::int32_t, std::uint32_t error_code) {
  if (conn.state != ConnState::open) return;
  if (measuring_ && !stopping_) ++stats_.h2.goaways;
  // NO_ERROR is a graceful close (a server's limit of requests per
  // connection): the streams it covers finish, the rest are sent again.
  if (error_code != NGHTTP2_NO_ERROR) count_error(ErrorClass::goaway);
}

}  // namespace ringhttp::client
