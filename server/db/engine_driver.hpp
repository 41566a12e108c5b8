#pragma once
// The pool's I/O (Driver, server/db/pool.hpp) on a shard's backend: a
// second engine (core/io/engine.hpp) over the ring or epoll set the
// shard's connections use, whose slots are the database connections'
// sockets (foreign sockets: libpq's, never closed here). Each socket libpq
// opens takes a slot of its own; its operations in flight, send cursor,
// cancel-all and release at zero are the engine's, as for every other
// socket. The shard hands it the completions tagged Op::db_*.

#include <cassert>
#include <cstdint>
#include <string>

#include "core/io/completion.hpp"
#include "core/io/engine.hpp"
#include "core/io/user_data.hpp"
#include "server/db/pool.hpp"

namespace ringhttp::server::db {

template <typename Backend>
class EngineDriver final : public Driver {
 public:
  using Engine = io::Engine<Backend&, Socket, io::ForeignSockets>;
  // Slots per database connection: its current socket, and those libpq
  // closed whose cancels are still in flight (libpq changes sockets at
  // most once per poll completion while connecting: each address, each
  // retry without SSL). A connection that finds none free fails its
  // attempt, and retries after its backoff.
  static constexpr std::uint32_t sockets_per_link = 4;

  explicit EngineDriver(Backend& backend) : engine_(backend) {}

  // Returns what failed, or "".
  std::string init(std::uint32_t links) {
    typename Engine::Config config;
    config.slots = links * sockets_per_link;
    return engine_.init(config);
  }
  // The pool its completions go to; set before any operation.
  void attach(Pool& pool) { pool_ = &pool; }

  Socket* open(std::uint32_t link, int fd) override {
    Socket* s = engine_.table().acquire();
    if (s == nullptr) return nullptr;
    s->link = link;
    s->in_use = true;
    engine_.open(*s, fd);
    return s;
  }
  void poll(Socket& s, bool write) override { engine_.poll(s, write); }
  void stop_polling(Socket& s) override { engine_.stop_polling(s); }
  void send(Socket& s, const char* data, std::size_t len) override {
    assert(len <= UINT32_MAX);
    engine_.send(s, data, std::uint32_t(len));
  }
  void receive_into(Socket& s, char* data, std::size_t len) override { engine_.receive_into(s, data, len); }
  bool close(Socket& s) override {
    engine_.cancel_all(s);
    if (!Engine::closed(s)) return false;
    forget(s);
    return true;
  }

  // A completion tagged Op::db_*. False when its slot is not in use (cannot
  // happen while slots are released only at zero: the shard counts it).
  bool on_completion(const io::Completion& c) {
    assert(pool_ != nullptr);
    const io::Tag t = io::decode(c.user_data);
    Socket* found = engine_.find(t);
    if (found == nullptr || !found->in_use) return false;
    Socket& s = *found;
    // A closed socket's completions bring its release nearer; the pool no
    // longer hears of them.
    const bool closing = s.closing;
    switch (t.op) {
      case io::Op::db_read:
      case io::Op::db_write: {
        const bool write = t.op == io::Op::db_write;
        const std::int32_t res = engine_.on_poll(s, write, c);
        if (!closing) pool_->on_poll(s.link, write, res);
        break;
      }
      case io::Op::db_recv: {
        const std::int32_t res = engine_.on_receive_into(s, c);
        if (!closing) pool_->on_received(s.link, res);
        break;
      }
      case io::Op::db_send: {
        const io::Sent sent = engine_.on_send(s, c);
        const bool over = sent.kind == io::Sent::Kind::done || sent.kind == io::Sent::Kind::failed;
        if (!closing && over) pool_->on_sent(s.link, sent.kind == io::Sent::Kind::done);
        break;
      }
      case io::Op::db_cancel: engine_.on_cancel(s, c); break;
      default: assert(false && "not a database socket's operation"); return true;
    }
    // The pool may have closed it meanwhile, or closed it and opened another
    // in the same slot (a new generation, not closing).
    if (s.in_use && s.closing && Engine::closed(s)) {
      const std::uint32_t link = s.link;
      forget(s);
      pool_->on_released(link);
    }
    return true;
  }

  // On the shard's tick: a send parked after writing nothing twice is made again.
  void on_tick() {
    for (std::uint32_t i = 0; i < engine_.table().constructed(); ++i) {
      Socket& s = engine_.table()[i];
      if (s.in_use) engine_.resume_parked_send(s);
    }
  }

  Engine& engine() { return engine_; }

 private:
  void forget(Socket& s) {
    s.in_use = false;
    engine_.forget(s);
  }

  Engine engine_;
  Pool* pool_ = nullptr;
};

}  // namespace ringhttp::server::db
