#pragma once
// The load session's I/O (LinkIo) done by a connection engine, on any
// backend: the worker's (io_uring or epoll) and the unit tests' fake. The
// one place the session's requests meet the engine's calls.

#include "client/load/connection.hpp"
#include "client/load/session.hpp"
#include "core/io/engine.hpp"

namespace ringhttp::client {

template <typename Backend>
class EngineLink final : public LinkIo {
 public:
  io::Engine<Backend, Connection> engine;

  int open_socket(const net::Address& address, Connection& conn) override {
    return engine.backend().open_socket(address.family(), conn.slot);
  }
  void connect(Connection& conn, int fd, const net::Address& address) override {
    engine.table().renew(conn);
    engine.open(conn, fd);
    engine.connect(conn, address);
  }
  void arm_receive(Connection& conn) override { engine.arm_receive(conn); }
  void send(Connection& conn, const char* data, std::uint32_t len) override { engine.send(conn, data, len); }
  void cancel_all(Connection& conn) override { engine.cancel_all(conn); }
  void close(Connection& conn) override { engine.close(conn); }
  void resume_parked_send(Connection& conn) override { engine.resume_parked_send(conn); }
  io::SyscallCounts syscalls() const override { return engine.backend().syscalls(); }
  void reset_syscalls() override { engine.backend().reset_syscalls(); }
  bool can_batch_wait() const override { return engine.backend().can_batch_wait(); }
  void set_batch_wait(std::uint32_t us, std::uint32_t batch) override { engine.backend().set_batch_wait(us, batch); }
};

}  // namespace ringhttp::client
