#include "server/db/pool.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include "server/db/libpq_setup.hpp"

namespace ringhttp::server::db {
namespace {

// SQLSTATE classes that say "not now" rather than "not this query":
// connection exceptions, transaction rollbacks (serialization failures,
// deadlocks), insufficient resources, operator intervention (a shutdown or
// restart). Their queries are answered unavailable (503), the rest failed.
bool retryable(std::string_view sqlstate) {
  if (sqlstate.size() < 2) return false;
  const std::string_view cls = sqlstate.substr(0, 2);
  return cls == "08" || cls == "40" || cls == "53" || cls == "57";
}

// Which socket `fd` is: libpq may close one and open the next with the
// same number.
std::uint64_t inode_of(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 ? std::uint64_t(st.st_ino) : 0;
}

int fd_of(const Socket* s) { return s != nullptr ? s->fd : -1; }

}  // namespace

Pool::Pool(const PoolConfig& config, Driver& driver, Sink& sink, Counters& counters, const std::uint64_t& now_ms)
    : config_(config),
      driver_(driver),
      sink_(sink),
      counters_(counters),
      links_(config.links),
      per_link_max_((config.queue_max + config.links - 1) / config.links),
      now_ms_(now_ms) {
  assert(config.links > 0 && config.queue_max > 0);
  // The shard's queue is its connections' pipelines: each holds its share
  // of --db-queue (and, while preparing, the statements), so memory is
  // --db-queue's worth of queries and rows, however many connections.
  const std::size_t entries = per_link_max_ + statement_count;
  for (Link& l : links_) {
    l.queue = PipelineQueue(entries);
    l.out.resize(entries * wire::query_bytes_max);
    l.in.resize(input_bytes);
  }
}

Pool::~Pool() {
  // The shard's ring is gone by now (it is destroyed first), so no
  // operation can still reach these buffers.
  for (Link& l : links_) {
    if (l.pg != nullptr) PQfinish(l.pg);
  }
}

void Pool::start() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) connect(i);
}

Submit Pool::read_user(std::string_view id_digits, const Waiter& waiter) {
  assert(!id_digits.empty() && id_digits.size() < 21);
  return submit(Statement::user_by_id, id_digits, waiter);
}

Submit Pool::insert_user(std::string_view name, const Waiter& waiter) {
  assert(!name.empty() && name.size() <= name_bytes_max);
  assert(name.find('\0') == std::string_view::npos && "a text parameter ends at its first NUL");
  return submit(Statement::user_insert, name, waiter);
}

Submit Pool::submit(Statement statement, std::string_view param, const Waiter& waiter) {
  if (in_flight_ >= config_.queue_max) {
    counters_.refused_queue_full.add();
    return Submit::queue_full;
  }
  Link* best = nullptr;
  bool any_ready = false;
  for (Link& l : links_) {
    if (l.state != State::ready || l.broken) continue;
    any_ready = true;
    if (l.queue.size() < per_link_max_ && (best == nullptr || l.queue.size() < best->queue.size())) best = &l;
  }
  if (!any_ready) {
    counters_.refused_unavailable.add();
    return Submit::unavailable;
  }
  if (best == nullptr) {  // every ready connection's pipeline holds its share
    counters_.refused_queue_full.add();
    return Submit::queue_full;
  }
  Link& l = *best;
  if (l.own_protocol) {
    // Queued; the batch's queries leave together in send_queued().
    assert(l.out_len + wire::query_bytes_max <= l.out.size());
    l.out_len += wire::encode_query(l.out.data() + l.out_len, statements[std::size_t(statement)].name, param);
  } else {
    std::memcpy(param_, param.data(), param.size());
    param_[param.size()] = '\0';
    cork(l);
    if (!send_libpq(l, Kind::query, statement, param_)) {
      // The connection failed under us: closed after this batch, not here,
      // in the middle of a handler (closing it answers its other waiters).
      l.broken = true;
      counters_.refused_unavailable.add();
      return Submit::unavailable;
    }
  }
  l.queue.push(Kind::query, statement, waiter, now_ms_);
  ++in_flight_;
  counters_.queries.add();
  counters_.queries_in_flight.set(in_flight_);
  return Submit::accepted;
}

// Through libpq: one statement's Parse (a prepare) or Bind/Execute (a
// query), then its own Sync. libpq 15's PQpipelineSync also flushes: one
// write per query (corked by the caller). A flush that could not send
// everything leaves the rest for a write poll.
bool Pool::send_libpq(Link& link, Kind kind, Statement statement, const char* param) {
  if (!queue_statement(link.pg, kind, statement, param)) return false;
  if (kind == Kind::query) counters_.sends.add();  // PQpipelineSync's flush
  const int flushed = PQflush(link.pg);
  if (flushed < 0) return false;
  if (flushed == 1) {
    // Blocked: libpq may also have read input meanwhile (it reads to avoid
    // a deadlock), which no poll will report.
    link.want_write = true;
    link.needs_drain = true;
  }
  return true;
}

void Pool::connect(std::uint32_t index) {
  Link& l = links_[index];
  assert(l.state == State::down && l.pg == nullptr && l.socket == nullptr && l.closing_sockets == 0);
  l.pg = connect_start(config_.conninfo, config_.application_name);
  l.state = State::connecting;
  l.own_protocol = false;
  l.deadline_ms = now_ms_ + connect_timeout_ms;
  if (l.pg == nullptr || PQstatus(l.pg) == CONNECTION_BAD) {
    fail(index, &counters_.errors_connect);
    return;
  }
  l.connect_wants = PGRES_POLLING_WRITING;  // as PQconnectStart's contract says
  if (!set_socket(index, PQsocket(l.pg))) {
    fail(index, &counters_.errors_connect);
    return;
  }
  rearm(index);
}

void Pool::advance_connect(std::uint32_t index) {
  Link& l = links_[index];
  const PostgresPollingStatusType status = PQconnectPoll(l.pg);
  switch (status) {
    case PGRES_POLLING_FAILED: fail(index, &counters_.errors_connect); return;
    case PGRES_POLLING_OK:
      if (!set_socket(index, PQsocket(l.pg)) || !on_connected(l)) {
        fail(index, &counters_.errors_connect);
        return;
      }
      break;
    case PGRES_POLLING_READING:
    case PGRES_POLLING_WRITING:
      l.connect_wants = status;
      // libpq may have moved on to another socket (the next address, or a
      // retry without SSL).
      if (!set_socket(index, PQsocket(l.pg))) {
        fail(index, &counters_.errors_connect);
        return;
      }
      break;
    default: break;
  }
  rearm(index);
}

// Connected: pipeline mode, and the statements prepared, each with its Sync;
// the connection takes queries once both Syncs have come back.
bool Pool::on_connected(Link& link) {
  if (!enter_pipeline(link.pg)) return false;
  link.state = State::preparing;
  link.deadline_ms = now_ms_ + connect_timeout_ms;
  link.prepares_left = statement_count;
  for (std::size_t s = 0; s < statement_count; ++s) {
    if (!send_libpq(link, Kind::prepare, Statement(s), nullptr)) return false;
    link.queue.push(Kind::prepare, Statement(s), Waiter{}, now_ms_);
  }
  return true;
}

void Pool::on_released(std::uint32_t index) {
  assert(index < links_.size() && links_[index].closing_sockets > 0);
  --links_[index].closing_sockets;
}

void Pool::on_poll(std::uint32_t index, bool write, std::int32_t res) {
  assert(index < links_.size());
  Link& l = links_[index];
  if (res == -ECANCELED || l.own_protocol) return;  // polls end when the own protocol takes over
  // Any other error (-EBADF cannot happen: the socket is open while its
  // slot is not closing) shows itself in the libpq call below.
  switch (l.state) {
    case State::down: return;
    case State::connecting:
      if (write == (l.connect_wants == PGRES_POLLING_WRITING)) {
        advance_connect(index);
      } else {
        rearm(index);
      }
      return;
    case State::preparing:
    case State::ready:
      if (write) {
        on_writable(index);
      } else {
        on_readable(index);
      }
      return;
  }
}

void Pool::on_readable(std::uint32_t index) {
  Link& l = links_[index];
  if (PQconsumeInput(l.pg) != 1) {
    fail(index, l.state == State::ready ? &counters_.errors_lost : &counters_.errors_connect);
    return;
  }
  if (drain(index)) rearm(index);
}

void Pool::on_writable(std::uint32_t index) {
  Link& l = links_[index];
  const int flushed = PQflush(l.pg);
  if (flushed < 0) {
    fail(index, l.state == State::ready ? &counters_.errors_lost : &counters_.errors_connect);
    return;
  }
  l.want_write = flushed == 1;
  if (drain(index)) rearm(index);
}

// Every result libpq has whole, in pipeline order: a statement's result (or
// error), the end of its results (null), then its Sync's. False if the
// connection failed (and was closed).
bool Pool::drain(std::uint32_t index) {
  Link& l = links_[index];
  l.needs_drain = false;
  int nulls_in_a_row = 0;
  while (!l.queue.empty() && !l.own_protocol && PQisBusy(l.pg) == 0) {
    PGresult* r = PQgetResult(l.pg);
    if (r == nullptr) {
      // Between a statement's results and its Sync; twice running means
      // libpq has nothing more without input.
      if (++nulls_in_a_row == 2) break;
      continue;
    }
    nulls_in_a_row = 0;
    Entry& e = l.queue.front();
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      if (!e.completed) {
        // A Sync with no result before it: libpq and we disagree on the
        // pipeline. Nothing after it can be trusted.
        fail(index, &counters_.errors_lost);
        return false;
      }
      pop_and_answer(index);
      continue;
    }
    if (!e.completed) {
      e.completed = true;
      if (e.kind == Kind::prepare && status != PGRES_COMMAND_OK) {
        PQclear(r);
        fail(index, &counters_.errors_connect);
        return false;
      }
      if (e.kind == Kind::query) record(l, e, r);
    }
    PQclear(r);  // a second result for one statement: the first counts
  }
  counters_.queries_in_flight.set(in_flight_);
  if (!l.own_protocol && PQstatus(l.pg) == CONNECTION_BAD) {
    fail(index, l.state == State::ready ? &counters_.errors_lost : &counters_.errors_connect);
    return false;
  }
  return true;
}

// A libpq result, kept in the entry until its Sync's answer.
void Pool::record(Link& link, Entry& e, PGresult* r) {
  switch (PQresultStatus(r)) {
    case PGRES_TUPLES_OK:
      if (PQntuples(r) > 0) {
        if (PQnfields(r) < 2 || PQgetisnull(r, 0, 0) || PQgetisnull(r, 0, 1)) {
          e.error = Outcome::failed;
          return;
        }
        link.queue.keep_row(e, std::string_view(PQgetvalue(r, 0, 0), std::size_t(PQgetlength(r, 0, 0))),
                            std::string_view(PQgetvalue(r, 0, 1), std::size_t(PQgetlength(r, 0, 1))));
      }
      return;
    case PGRES_FATAL_ERROR: {
      counters_.errors_query.add();
      const char* sqlstate = PQresultErrorField(r, PG_DIAG_SQLSTATE);
      e.error = retryable(sqlstate != nullptr ? sqlstate : "") ? Outcome::unavailable : Outcome::failed;
      return;
    }
    case PGRES_PIPELINE_ABORTED: e.error = Outcome::unavailable; return;
    default: counters_.errors_query.add(); e.error = Outcome::failed; return;
  }
}

// The oldest statement's Sync was answered: its transaction is over. A
// query's waiter hears its result; the last prepare makes the connection
// ready.
void Pool::pop_and_answer(std::uint32_t index) {
  Link& l = links_[index];
  const Entry& e = l.queue.pop();
  if (e.kind == Kind::prepare) {
    if (--l.prepares_left == 0) {
      l.state = State::ready;
      l.backoff_ms = 0;
      ++up_;
      counters_.links_up.set(up_);
      // Without TLS (and with libpq's output sent), the pool speaks the
      // query protocol itself from now on; libpq keeps the connection only
      // to close it. Its input poll ends: receives take over.
      if (PQsslInUse(l.pg) == 0 && !l.want_write && !l.needs_drain) {
        l.own_protocol = true;
        driver_.stop_polling(*l.socket);
      }
    }
    return;
  }
  --in_flight_;
  sink_.on_result(e.waiter, l.queue.result(e));
}

// ---------------------------------------------------------------------------
// The own protocol (server/db/wire.hpp): one send of everything queued, one
// receive always armed.

void Pool::send_now(std::uint32_t index) {
  Link& l = links_[index];
  if (l.out_len == 0 || l.state != State::ready || !l.own_protocol || l.socket->send_inflight) return;
  l.sending = l.out_len;
  counters_.sends.add();
  driver_.send(*l.socket, l.out.data(), l.sending);
}

void Pool::on_sent(std::uint32_t index, bool written) {
  assert(index < links_.size());
  Link& l = links_[index];
  if (!written) {
    fail(index, &counters_.errors_lost);
    return;
  }
  // Wholly written (the engine resumed any short write). Queries queued
  // meanwhile sit after the bytes the send was given: they go next.
  assert(l.sending > 0 && l.sending <= l.out_len);
  std::memmove(l.out.data(), l.out.data() + l.sending, l.out_len - l.sending);
  l.out_len -= l.sending;
  l.sending = 0;
  send_now(index);
}

void Pool::on_received(std::uint32_t index, std::int32_t res) {
  assert(index < links_.size());
  Link& l = links_[index];
  if (res <= 0) {  // the server closed, or the socket failed
    fail(index, &counters_.errors_lost);
    return;
  }
  l.in_len += std::size_t(res);
  std::size_t at = 0;
  while (true) {
    wire::Message m;
    std::size_t used = 0;
    const wire::Parse p =
        wire::next_message(std::string_view(l.in.data() + at, l.in_len - at), l.in.size() - 5, m, used);
    if (p == wire::Parse::incomplete) break;
    if (p == wire::Parse::invalid || !on_message(index, m)) {
      if (l.state != State::down) fail(index, &counters_.errors_lost);
      return;
    }
    at += used;
  }
  std::memmove(l.in.data(), l.in.data() + at, l.in_len - at);
  l.in_len -= at;
  counters_.queries_in_flight.set(in_flight_);
  rearm(index);
}

// One backend message, for the oldest query. False: the stream cannot be
// followed (or the server said it is leaving).
bool Pool::on_message(std::uint32_t index, const wire::Message& m) {
  Link& l = links_[index];
  switch (m.type) {
    case 'D': {  // DataRow
      if (l.queue.empty()) return false;
      Entry& e = l.queue.front();
      std::string_view id, name;
      if (!wire::data_row_two_columns(m.body, id, name)) {
        e.error = Outcome::failed;
      } else {
        l.queue.keep_row(e, id, name);
      }
      return true;
    }
    case 'C':  // CommandComplete
      if (l.queue.empty()) return false;
      l.queue.front().completed = true;
      return true;
    case 'E': {  // ErrorResponse: for the oldest query, or (none in flight) the server leaving
      if (l.queue.empty()) return false;
      Entry& e = l.queue.front();
      counters_.errors_query.add();
      e.error = retryable(wire::error_sqlstate(m.body)) ? Outcome::unavailable : Outcome::failed;
      e.completed = true;
      return true;
    }
    case 'Z':  // ReadyForQuery: the Sync's answer, the query's transaction over
      if (l.queue.empty()) return false;
      pop_and_answer(index);
      return true;
    case '1':  // ParseComplete
    case '2':  // BindComplete
    case '3':  // CloseComplete
    case 'n':  // NoData
    case 'T':  // RowDescription
    case 's':  // PortalSuspended
    case 'N':  // NoticeResponse
    case 'S':  // ParameterStatus
    case 'A':  // NotificationResponse
      return true;
    default: return false;
  }
}

// ---------------------------------------------------------------------------
// Failure, sockets, polls.

// Closes the connection: its queries are answered unavailable (a result
// whose Sync never came is not known to have committed), its operations
// cancelled (each completes into the engine, not here), and it is
// reconnected after the backoff once they all have, since its buffers are
// reused (never, once stopped).
void Pool::fail(std::uint32_t index, metrics::Counter* why) {
  Link& l = links_[index];
  if (why != nullptr) why->add();
  if (l.state == State::ready) {
    --up_;
    counters_.links_up.set(up_);
  }
  l.queue.clear([this](const Entry& e) {
    if (e.kind != Kind::query) return;
    --in_flight_;
    sink_.on_result(e.waiter, Result{e.statement, Outcome::unavailable, {}, {}});
  });
  counters_.queries_in_flight.set(in_flight_);
  set_socket(index, -1);
  if (l.pg != nullptr) PQfinish(l.pg);
  l.pg = nullptr;
  l.state = State::down;
  l.own_protocol = false;
  l.want_write = l.needs_drain = l.broken = l.corked = false;
  l.cork_works = true;
  l.out_len = l.sending = l.in_len = 0;
  l.backoff_ms = l.backoff_ms == 0 ? reconnect_backoff_min_ms : std::min(2 * l.backoff_ms, reconnect_backoff_max_ms);
  l.retry_at_ms = now_ms_ + l.backoff_ms;
}

// libpq's socket now (or none, -1). A new one takes a new slot; the old
// one's operations are cancelled (libpq has closed it, or is about to),
// and its slot is released after their last completion. False when no
// slot is free (the shard's table holds sockets_per_link per connection).
bool Pool::set_socket(std::uint32_t index, int fd) {
  Link& l = links_[index];
  const std::uint64_t inode = fd >= 0 ? inode_of(fd) : 0;
  if (l.socket != nullptr && l.socket->fd == fd && l.socket->inode == inode) return true;
  if (l.socket != nullptr) {
    if (!driver_.close(*l.socket)) ++l.closing_sockets;
    l.socket = nullptr;
  }
  if (fd < 0) return true;
  l.socket = driver_.open(index, fd);
  if (l.socket == nullptr) return false;
  l.socket->inode = inode;
  return true;
}

void Pool::rearm(std::uint32_t index) {
  Link& l = links_[index];
  if (l.state == State::down || l.socket == nullptr) return;
  Socket& s = *l.socket;
  if (l.own_protocol) {
    if (!s.recv_armed) {
      assert(l.in_len < l.in.size());
      driver_.receive_into(s, l.in.data() + l.in_len, l.in.size() - l.in_len);
    }
    return;
  }
  const bool connecting = l.state == State::connecting;
  // Once connected, always readable-polled: a server that closes (a
  // restart, an administrator) is seen at once, not at the next query.
  const bool want_read = connecting ? l.connect_wants == PGRES_POLLING_READING : true;
  const bool want_write = connecting ? l.connect_wants == PGRES_POLLING_WRITING : l.want_write;
  if (want_read && !io::poll_armed(s, false)) driver_.poll(s, false);
  if (want_write && !io::poll_armed(s, true)) driver_.poll(s, true);
}

// Through libpq (TLS), each query is a write as it is queued. Corked, those
// writes only fill the socket buffer, and the batch's queries leave in one
// segment when it is uncorked after the batch: one wake-up of the database
// per batch, not per query.
void Pool::cork(Link& link) {
  if (link.corked || !link.cork_works) return;
  if (set_cork(fd_of(link.socket), true)) {
    link.corked = true;
  } else {
    link.cork_works = false;  // a Unix socket: its writes are not segmented anyway
  }
}

void Pool::uncork(Link& link) {
  if (!link.corked) return;
  set_cork(fd_of(link.socket), false);  // pushes what is queued
  link.corked = false;
}

void Pool::after_batch() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    Link& l = links_[i];
    if (l.broken) {
      fail(i, &counters_.errors_lost);
    } else if (l.needs_drain && l.state != State::down && !l.own_protocol) {
      if (drain(i)) rearm(i);
    }
  }
}

void Pool::send_queued() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    uncork(links_[i]);
    send_now(i);
  }
}

void Pool::on_tick() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    Link& l = links_[i];
    switch (l.state) {
      case State::down:
        // A socket's buffers are reused only when every operation of its
        // earlier use has completed (cancels are quick).
        if (!stopped_ && l.closing_sockets == 0 && now_ms_ >= l.retry_at_ms) connect(i);
        break;
      case State::connecting:
      case State::preparing:
        if (now_ms_ >= l.deadline_ms) fail(i, &counters_.errors_timeout);
        break;
      case State::ready:
        if (!l.queue.empty() && now_ms_ - l.queue.front().sent_ms >= config_.timeout_ms) {
          fail(i, &counters_.errors_timeout);
        }
        break;
    }
  }
}

void Pool::stop() {
  stopped_ = true;
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    if (links_[i].state != State::down) fail(i, nullptr);
  }
}

}  // namespace ringhttp::server::db
