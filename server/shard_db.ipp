// The shard's side of its database connections (server/db/pool.hpp): the
// pool, its sockets' engine over the shard's own backend
// (server/db/engine_driver.hpp: one-shot polls while libpq does the I/O,
// re-armed by the pool after each completion, since libpq reads at most a
// buffer per call and an edge-triggered multishot poll could leave input
// unreported; sends and receives once the pool speaks the query protocol
// itself), and each result framed into the response that waited for it,
// in its place in the connection's queue.

#include <cassert>
#include <string>

#pragma once

#include "server/shard.hpp"

namespace ringhttp::server {

template <typename Backend>
std::string Shard<Backend>::start_database() {
  if (options_.db_url.empty()) return {};
  db::PoolConfig config;
  config.conninfo = options_.db_url;
  config.application_name = "ringhttp shard " + std::to_string(index_);
  config.links = options_.db_pool;
  config.queue_max = options_.db_queue;
  config.timeout_ms = options_.db_timeout_ms;
  if (std::string e = db_io_.init(config.links); !e.empty()) return "database sockets: " + e;
  db::Sink& sink = *this;  // a private base: converted here, where it is accessible
  db_ = std::make_unique<db::Pool>(config, db_io_, sink, counters_.db, now_ms_);
  db_io_.attach(*db_);
  session_.app().set_database(db_.get());
  db_->start();
  return {};
}

template <typename Backend>
void Shard<Backend>::on_result(const db::Waiter& waiter, const db::Result& result) {
  Connection* found = engine_.find(io::decode(waiter.tag));
  // Its query keeps it in flight: the slot cannot have been released.
  assert(found != nullptr && found->state != ConnState::free);
  Connection& conn = *found;
  engine_.unpin(conn);
  session_.on_db_result(conn, *static_cast<PendingResponse*>(waiter.response), result);
}

}  // namespace ringhttp::server
