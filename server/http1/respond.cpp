// A parsed request becomes a response in the connection's queue: the
// application fills it (app/), this file frames it (status line, Date,
// Content-Length or a cached tail, Connection) and queues errors, which
// end the connection gracefully (begin_drain).

#include "server/http1/session.hpp"

#include <cassert>
#include <charconv>
#include <cstring>

#include "server/heads.hpp"

namespace ringhttp::server::http1 {
namespace respond_detail {

inline char* append(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

}  // namespace respond_detail

using respond_detail::append;

void Session::on_request_headers(Connection& conn, const http::RequestHead& head) {
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

bool Session::on_request(Connection& conn, const http::RequestHead& head) {
  ++conn.requests_done;
  counters_.requests.add();
  if (conn.state != ConnState::open) return true;
  assert(conn.output != nullptr && "a request is parsed only with a block lent");
  assert(!conn.output->out.full());
  PendingResponse& r = conn.output->out.push();
  r.reset();
  const Request request{head,
                        head.path,
                        head.query,
                        conn.peer,
                        now_ms_,
                        wall_s_,
                        db::Waiter{io::encode({io::Op::none, conn.slot, conn.generation}), &r}};
  Reply reply(r, head.method == http::Method::head, conn.output->metrics_text, all_shards_);
  app_->handle(request, reply);
  if (r.source == BodySource::metrics) conn.metrics_queued = true;
  const bool keep_alive = head.keep_alive && !stopping_;
  const bool http10 = head.version_major == 1 && head.version_minor == 0;
  if (r.source == BodySource::deferred) {
    // A query is in flight for it: the slot stays until its result comes
    // (on_result), however the connection ends meanwhile.
    io::pin(conn);
    r.close_after = !keep_alive;
    r.http10_keep_alive = http10 && keep_alive;
  } else {
    finish_response(r, reply.content_length(), !keep_alive, http10 && keep_alive);
  }
  conn.last_activity_ms = now_ms_;
  if (!keep_alive) {
    begin_drain(conn);
    return true;  // nothing after this request is parsed
  }
  return !can_take_more(conn);
}

void Session::finish_response(PendingResponse& r, std::uint64_t content_length, bool close, bool http10_keep_alive) {
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

void Session::queue_error(Connection& conn, int status) {
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
  finish_response(r, e.body.size(), true, false);
  begin_drain(conn);
  dirty_.mark(conn);
}

}  // namespace ringhttp::server::http1
