// The shard's side of its database connections (server/db/pool.hpp): their
// sockets polled on the shard's own ring, one-shot (re-armed by the pool
// after each completion: libpq reads at most a buffer per call, so an
// edge-triggered multishot poll could leave input unreported), and each
// result framed into the response that waited for it, in its place in the
// connection's queue.

#include <poll.h>

#include <cassert>
#include <string>

#include "server/shard.hpp"

namespace ringhttp::server {

using uring::Op;

void Shard::start_database() {
  if (options_.db_url.empty()) return;
  db::PoolConfig config;
  config.conninfo = options_.db_url;
  config.application_name = "ringhttp shard " + std::to_string(index_);
  config.links = options_.db_pool;
  config.queue_max = options_.db_queue;
  config.timeout_ms = options_.db_timeout_ms;
  db::Poller& poller = *this;  // private bases: converted here, where they are accessible
  db::Sink& sink = *this;
  db_ = std::make_unique<db::Pool>(config, poller, sink, counters_.db, now_ms_);
  app_->set_database(db_.get());
  db_->start();
}

void Shard::poll(std::uint32_t link, std::uint32_t generation, int fd, bool write) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_poll_add(sqe, fd, write ? POLLOUT : POLLIN);
  sqe->user_data = uring::encode({write ? Op::db_write : Op::db_read, link, generation});
}

void Shard::cancel_poll(std::uint32_t link, std::uint32_t generation, bool write) {
  io_uring_sqe* sqe = ring_.sqe();
  io_uring_prep_cancel64(sqe, uring::encode({write ? Op::db_write : Op::db_read, link, generation}), 0);
  sqe->user_data = uring::encode({Op::cancel, shard_slot, 0});
}

void Shard::on_result(const db::Waiter& waiter, const db::Result& result) {
  Connection* found = table_.find(uring::decode(waiter.tag));
  // Its query keeps it in flight: the slot cannot have been released.
  assert(found != nullptr && found->state != ConnState::free);
  Connection& conn = *found;
  conn.inflight.done();
  if (conn.state != ConnState::open && conn.state != ConnState::draining) {
    maybe_release(conn);  // the client left: the result is dropped, then the slot freed
    return;
  }
  PendingResponse& r = *static_cast<PendingResponse*>(waiter.response);
  assert(r.source == BodySource::deferred);
  Reply reply(r, r.head_only, conn.metrics_text, all_shards_);
  App::answer(result, reply);
  finish_response(conn, r, reply.content_length(), r.close_after, r.http10_keep_alive);
  conn.last_activity_ms = now_ms_;
  mark_dirty(conn);
}

}  // namespace ringhttp::server
