// The shard's side of its database connections (server/db/pool.hpp): their
// sockets' operations on the shard's own ring (one-shot polls while libpq
// does the I/O, re-armed by the pool after each completion, since libpq
// reads at most a buffer per call and an edge-triggered multishot poll
// could leave input unreported; sends and receives once the pool speaks
// the query protocol itself), and each result framed into the response
// that waited for it, in its place in the connection's queue.

#include <poll.h>

#include <cassert>
#include <string>

#pragma once

#include "server/shard.hpp"

namespace ringhttp::server {

using io::Op;

template <typename Backend>
void Shard<Backend>::start_database() {
  if (options_.db_url.empty()) return;
  db::PoolConfig config;
  config.conninfo = options_.db_url;
  config.application_name = "ringhttp shard " + std::to_string(index_);
  config.links = options_.db_pool;
  config.queue_max = options_.db_queue;
  config.timeout_ms = options_.db_timeout_ms;
  db::Driver& driver = *this;  // private bases: converted here, where they are accessible
  db::Sink& sink = *this;
  db_ = std::make_unique<db::Pool>(config, driver, sink, counters_.db, now_ms_);
  session_.app().set_database(db_.get());
  db_->start();
}

namespace shard_detail {

inline Op op_of(db::Io io) {
  switch (io) {
    case db::Io::poll_read: return Op::db_read;
    case db::Io::poll_write: return Op::db_write;
    case db::Io::send: return Op::db_send;
    case db::Io::recv: return Op::db_recv;
  }
  return Op::none;
}

}  // namespace shard_detail

using shard_detail::op_of;

template <typename Backend>
void Shard<Backend>::poll(std::uint32_t link, std::uint32_t generation, int fd, bool write) {
  io().poll(fd, write, io::encode({write ? Op::db_write : Op::db_read, link, generation}));
}

template <typename Backend>
void Shard<Backend>::send(std::uint32_t link, std::uint32_t generation, int fd, const char* data, std::size_t len) {
  io().send_from(fd, data, len, io::encode({Op::db_send, link, generation}));
}

template <typename Backend>
void Shard<Backend>::recv(std::uint32_t link, std::uint32_t generation, int fd, char* data, std::size_t len) {
  io().receive_into(fd, data, len, io::encode({Op::db_recv, link, generation}));
}

template <typename Backend>
void Shard<Backend>::cancel(std::uint32_t link, std::uint32_t generation, db::Io which) {
  io().cancel(io::encode({op_of(which), link, generation}), io::encode({Op::cancel, shard_slot, 0}));
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
