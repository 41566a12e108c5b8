#include "server/db/pool.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::server::db {
namespace {

// SQLSTATE classes that say "not now" rather than "not this query":
// connection exceptions, transaction rollbacks (serialization failures,
// deadlocks), insufficient resources, operator intervention (a shutdown or
// restart). Their queries are answered unavailable (503), the rest failed.
bool retryable(const char* sqlstate) {
  if (sqlstate == nullptr || std::strlen(sqlstate) < 2) return false;
  const std::string_view cls(sqlstate, 2);
  return cls == "08" || cls == "40" || cls == "53" || cls == "57";
}

}  // namespace

Pool::Pool(const PoolConfig& config, Poller& poller, Sink& sink, Counters& counters, const std::uint64_t& now_ms)
    : config_(config), poller_(poller), sink_(sink), counters_(counters), links_(config.links), now_ms_(now_ms) {
  assert(config.links > 0 && config.queue_max > 0);
  for (Link& l : links_) l.fifo.resize(config.queue_max + statement_count);
}

Pool::~Pool() {
  for (Link& l : links_) {
    if (l.pg != nullptr) PQfinish(l.pg);
  }
}

void Pool::start() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) connect(i);
}

Submit Pool::read_user(std::string_view id_digits, const Waiter& waiter) {
  assert(!id_digits.empty() && id_digits.size() < 21);
  std::memcpy(name_, id_digits.data(), id_digits.size());
  name_[id_digits.size()] = '\0';
  return submit(Statement::user_by_id, name_, waiter);
}

Submit Pool::insert_user(std::string_view name, const Waiter& waiter) {
  assert(!name.empty() && name.size() <= name_bytes_max);
  assert(name.find('\0') == std::string_view::npos && "a text parameter ends at its first NUL");
  std::memcpy(name_, name.data(), name.size());
  name_[name.size()] = '\0';
  return submit(Statement::user_insert, name_, waiter);
}

Submit Pool::submit(Statement statement, const char* param, const Waiter& waiter) {
  if (in_flight_ >= config_.queue_max) {
    counters_.refused_queue_full.add();
    return Submit::queue_full;
  }
  Link* best = nullptr;
  for (Link& l : links_) {
    if (l.state == State::ready && !l.broken && (best == nullptr || l.count < best->count)) best = &l;
  }
  if (best == nullptr) {
    counters_.refused_unavailable.add();
    return Submit::unavailable;
  }
  cork(*best);
  if (!send(*best, Kind::query, statement, param, waiter)) {
    // The connection failed under us: closed after this batch, not here, in
    // the middle of a handler (closing it answers its other waiters).
    best->broken = true;
    counters_.refused_unavailable.add();
    return Submit::unavailable;
  }
  ++in_flight_;
  counters_.queries.add();
  counters_.queries_in_flight.set(in_flight_);
  return Submit::accepted;
}

// One statement's Parse (a prepare) or Bind/Execute (a query), then its own
// Sync. In libpq 15 PQpipelineSync also flushes: one write per query. A
// flush that could not send everything leaves the rest for a write poll.
bool Pool::send(Link& link, Kind kind, Statement statement, const char* param, const Waiter& waiter) {
  assert(link.count < link.fifo.size());
  const StatementText& text = statements[std::size_t(statement)];
  const int sent = kind == Kind::prepare ? PQsendPrepare(link.pg, text.name, text.sql, 1, nullptr)
                                         : PQsendQueryPrepared(link.pg, text.name, 1, &param, nullptr, nullptr, 0);
  if (sent != 1 || PQpipelineSync(link.pg) != 1) return false;
  const int flushed = PQflush(link.pg);
  if (flushed < 0) return false;
  if (flushed == 1) {
    // Blocked: libpq may also have read input meanwhile (it reads to avoid
    // a deadlock), which no poll will report.
    link.want_write = true;
    link.needs_drain = true;
  }
  Entry& e = link.fifo[(link.head + link.count) % link.fifo.size()];
  e = Entry{kind, statement, false, now_ms_, waiter};
  ++link.count;
  return true;
}

void Pool::connect(std::uint32_t index) {
  Link& l = links_[index];
  assert(l.state == State::down && l.pg == nullptr);
  // The connection string is expanded as dbname (a URL or key=value
  // pairs), and overrides the defaults before it: GSSAPI encryption off
  // unless asked for (libpq's "prefer" looks for Kerberos credentials on
  // every attempt, blocking on files and perhaps a KDC, on this thread).
  // The application name marks our connections in pg_stat_activity unless
  // the string names its own.
  const char* const keys[] = {"gssencmode", "dbname", "fallback_application_name", nullptr};
  const char* const values[] = {"disable", config_.conninfo.c_str(), config_.application_name.c_str(), nullptr};
  l.pg = PQconnectStartParams(keys, values, 1);
  l.state = State::connecting;
  l.deadline_ms = now_ms_ + connect_timeout_ms;
  if (l.pg == nullptr || PQstatus(l.pg) == CONNECTION_BAD) {
    fail(index, &counters_.errors_connect);
    return;
  }
  l.connect_wants = PGRES_POLLING_WRITING;  // as PQconnectStart's contract says
  set_fd(index, PQsocket(l.pg));
  rearm(index);
}

void Pool::advance_connect(std::uint32_t index) {
  Link& l = links_[index];
  const PostgresPollingStatusType status = PQconnectPoll(l.pg);
  switch (status) {
    case PGRES_POLLING_FAILED: fail(index, &counters_.errors_connect); return;
    case PGRES_POLLING_OK:
      set_fd(index, PQsocket(l.pg));
      if (!on_connected(l)) {
        fail(index, &counters_.errors_connect);
        return;
      }
      break;
    case PGRES_POLLING_READING:
    case PGRES_POLLING_WRITING:
      l.connect_wants = status;
      // libpq may have moved on to another socket (the next address, or a
      // retry without SSL).
      set_fd(index, PQsocket(l.pg));
      break;
    default: break;
  }
  rearm(index);
}

// Connected: pipeline mode, and the statements prepared, each with its Sync;
// the connection takes queries once both Syncs have come back.
bool Pool::on_connected(Link& link) {
  if (PQsetnonblocking(link.pg, 1) != 0 || PQenterPipelineMode(link.pg) != 1) return false;
  link.state = State::preparing;
  link.deadline_ms = now_ms_ + connect_timeout_ms;
  link.prepares_left = statement_count;
  for (std::size_t s = 0; s < statement_count; ++s) {
    if (!send(link, Kind::prepare, Statement(s), nullptr, Waiter{})) return false;
  }
  return true;
}

void Pool::on_poll(std::uint32_t index, std::uint32_t generation, bool write, std::int32_t res) {
  if (index >= links_.size()) return;
  Link& l = links_[index];
  if (generation != l.generation) return;  // for a connection since closed
  (write ? l.write_armed : l.read_armed) = false;
  if (res == -ECANCELED) return;
  // Any other error (-EBADF cannot happen: the socket is open while its
  // generation is current) shows itself in the libpq call below.
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

// Every result libpq has whole, in pipeline order: a query's result (or
// error), the end of its results (null), then its Sync. False if the
// connection failed (and was closed).
bool Pool::drain(std::uint32_t index) {
  Link& l = links_[index];
  l.needs_drain = false;
  int nulls_in_a_row = 0;
  while (l.count > 0 && PQisBusy(l.pg) == 0) {
    PGresult* r = PQgetResult(l.pg);
    if (r == nullptr) {
      // Between a query's results and its Sync; twice running means libpq
      // has nothing more without input.
      if (++nulls_in_a_row == 2) break;
      continue;
    }
    nulls_in_a_row = 0;
    Entry& e = front(l);
    const ExecStatusType status = PQresultStatus(r);
    if (status == PGRES_PIPELINE_SYNC) {
      PQclear(r);
      if (!e.answered) {
        // A Sync with no result before it: libpq and we disagree on the
        // pipeline. Nothing after it can be trusted.
        fail(index, &counters_.errors_lost);
        return false;
      }
      l.head = (l.head + 1) % l.fifo.size();
      --l.count;
      if (e.kind == Kind::query) {
        --in_flight_;
      } else if (--l.prepares_left == 0) {
        l.state = State::ready;
        l.backoff_ms = 0;
        ++up_;
        counters_.links_up.set(up_);
      }
      continue;
    }
    if (e.answered) {  // more than one result for one statement: the first answered it
      PQclear(r);
      continue;
    }
    e.answered = true;
    if (e.kind == Kind::prepare) {
      PQclear(r);
      if (status != PGRES_COMMAND_OK) {
        fail(index, &counters_.errors_connect);
        return false;
      }
      continue;
    }
    answer(e, r);
    PQclear(r);
  }
  counters_.queries_in_flight.set(in_flight_);
  if (PQstatus(l.pg) == CONNECTION_BAD) {
    fail(index, l.state == State::ready ? &counters_.errors_lost : &counters_.errors_connect);
    return false;
  }
  return true;
}

void Pool::answer(Entry& e, PGresult* r) {
  Result result{e.statement, Outcome::failed, {}, {}};
  switch (PQresultStatus(r)) {
    case PGRES_TUPLES_OK:
      if (PQntuples(r) == 0) {
        result.outcome = Outcome::no_row;
      } else if (PQnfields(r) == 2) {
        result.outcome = Outcome::row;
        result.id = std::string_view(PQgetvalue(r, 0, 0), std::size_t(PQgetlength(r, 0, 0)));
        result.name = std::string_view(PQgetvalue(r, 0, 1), std::size_t(PQgetlength(r, 0, 1)));
      }
      break;
    case PGRES_FATAL_ERROR:
      counters_.errors_query.add();
      result.outcome = retryable(PQresultErrorField(r, PG_DIAG_SQLSTATE)) ? Outcome::unavailable : Outcome::failed;
      break;
    case PGRES_PIPELINE_ABORTED: result.outcome = Outcome::unavailable; break;
    default: counters_.errors_query.add(); break;
  }
  sink_.on_result(e.waiter, result);
}

// Closes the connection: its unanswered queries are answered unavailable,
// its polls cancelled (a late one is stale by generation), and it is
// reconnected after the backoff (never, once stopped).
void Pool::fail(std::uint32_t index, metrics::Counter* why) {
  Link& l = links_[index];
  if (why != nullptr) why->add();
  if (l.state == State::ready) {
    --up_;
    counters_.links_up.set(up_);
  }
  for (std::size_t k = 0; k < l.count; ++k) {
    Entry& e = l.fifo[(l.head + k) % l.fifo.size()];
    if (e.kind != Kind::query) continue;
    --in_flight_;
    if (e.answered) continue;
    e.answered = true;
    sink_.on_result(e.waiter, Result{e.statement, Outcome::unavailable, {}, {}});
  }
  l.head = 0;
  l.count = 0;
  counters_.queries_in_flight.set(in_flight_);
  set_fd(index, -1);
  if (l.pg != nullptr) PQfinish(l.pg);
  l.pg = nullptr;
  l.state = State::down;
  l.want_write = l.needs_drain = l.broken = l.corked = false;
  l.cork_works = true;
  l.backoff_ms = l.backoff_ms == 0 ? reconnect_backoff_min_ms : std::min(2 * l.backoff_ms, reconnect_backoff_max_ms);
  l.retry_at_ms = now_ms_ + l.backoff_ms;
}

// A new socket (or none): polls on the old one are cancelled and made stale.
void Pool::set_fd(std::uint32_t index, int fd) {
  Link& l = links_[index];
  if (fd == l.fd) return;
  if (l.read_armed) poller_.cancel_poll(index, l.generation, false);
  if (l.write_armed) poller_.cancel_poll(index, l.generation, true);
  l.read_armed = l.write_armed = false;
  ++l.generation;
  l.fd = fd;
}

void Pool::rearm(std::uint32_t index) {
  Link& l = links_[index];
  if (l.state == State::down || l.fd < 0) return;
  const bool connecting = l.state == State::connecting;
  // Once connected, always readable-polled: a server that closes (a
  // restart, an administrator) is seen at once, not at the next query.
  const bool want_read = connecting ? l.connect_wants == PGRES_POLLING_READING : true;
  const bool want_write = connecting ? l.connect_wants == PGRES_POLLING_WRITING : l.want_write;
  if (want_read && !l.read_armed) {
    poller_.poll(index, l.generation, l.fd, false);
    l.read_armed = true;
  }
  if (want_write && !l.write_armed) {
    poller_.poll(index, l.generation, l.fd, true);
    l.write_armed = true;
  }
}

// libpq 15's PQpipelineSync writes each query as it is queued (libpq 17's
// PQsendPipelineSync would not). Corked, those writes only fill the socket
// buffer, and the batch's queries leave in one segment when it is uncorked
// after the batch: one wake-up of the database per batch, not per query.
void Pool::cork(Link& link) {
  if (link.corked || !link.cork_works) return;
  const int one = 1;
  if (::setsockopt(link.fd, IPPROTO_TCP, TCP_CORK, &one, sizeof one) == 0) {
    link.corked = true;
  } else {
    link.cork_works = false;  // a Unix socket: its writes are not segmented anyway
  }
}

void Pool::uncork(Link& link) {
  if (!link.corked) return;
  const int zero = 0;
  ::setsockopt(link.fd, IPPROTO_TCP, TCP_CORK, &zero, sizeof zero);  // pushes what is queued
  link.corked = false;
}

void Pool::after_batch() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    Link& l = links_[i];
    if (l.broken) {
      fail(i, &counters_.errors_lost);
    } else if (l.needs_drain && l.state != State::down) {
      if (drain(i)) rearm(i);
    }
  }
}

void Pool::send_queued() {
  for (Link& l : links_) uncork(l);
}

void Pool::on_tick() {
  for (std::uint32_t i = 0; i < links_.size(); ++i) {
    Link& l = links_[i];
    switch (l.state) {
      case State::down:
        if (!stopped_ && now_ms_ >= l.retry_at_ms) connect(i);
        break;
      case State::connecting:
      case State::preparing:
        if (now_ms_ >= l.deadline_ms) fail(i, &counters_.errors_timeout);
        break;
      case State::ready:
        if (l.count > 0 && now_ms_ - front(l).sent_ms >= config_.timeout_ms) fail(i, &counters_.errors_timeout);
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
