#pragma once
// The output blocks a shard lends to its busy connections, and the
// connections waiting for one. A narrow interface: lend, give back (which
// hands the block straight to the oldest waiter), wait, stop waiting. No
// ring, no sockets, no counters: the session does those (http1/output.cpp).
//
// Bounded: `blocks` at most, mapped once and touched only as lent (the
// warmest first). Running out is a normal state: the connection waits in
// arrival order, on a list threaded through the connection slots, so
// waiting allocates nothing either.

#include <cassert>
#include <cstdint>
#include <string>

#include "core/io/slot_table.hpp"
#include "server/connection.hpp"

namespace ringhttp::server {

class OutputPool {
 public:
  explicit OutputPool(io::SlotTable<Connection>& table) : table_(table) {}
  OutputPool(const OutputPool&) = delete;
  OutputPool& operator=(const OutputPool&) = delete;

  // Maps room for `blocks`; returns what went wrong, or "".
  std::string init(std::uint32_t blocks) { return blocks_.init(blocks); }

  std::uint32_t capacity() const { return blocks_.capacity(); }
  std::uint32_t lent() const { return lent_; }
  bool has_waiters() const { return wait_head_ != no_slot; }

  // Lends `conn` a block with an empty queue and its parser the block's
  // request buffers. False when every block is lent.
  bool lend(Connection& conn) {
    assert(conn.output == nullptr && !conn.waiting_output);
    OutputBlock* block = blocks_.acquire();
    if (block == nullptr) return false;
    block->out.clear();
    block->tls_box = tls::Outbox{.data = block->tls_out.data(), .cap = OutputBlock::tls_out_bytes};
    block->tls_plain_left = 0;
    block->tls_batch = false;
    conn.output = block;
    conn.parser.lend_buffers(&block->request);
    ++lent_;
    return true;
  }

  // Takes back `conn`'s block, whatever it holds (the caller knows nothing
  // refers to it any more). When a connection waits, the oldest gets the
  // block at once, before any newcomer could take it, and is returned.
  Connection* give_back(Connection& conn) {
    assert(conn.output != nullptr);
    conn.parser.take_buffers();
    blocks_.release(*conn.output);
    conn.output = nullptr;
    assert(lent_ > 0);
    --lent_;
    if (wait_head_ == no_slot) return nullptr;
    Connection& next = table_[wait_head_];
    stop_waiting(next);
    const bool lent = lend(next);
    assert(lent && "a block was just given back");
    (void)lent;
    return &next;
  }

  // `conn` (holding no block) waits at the back of the line.
  void wait(Connection& conn) {
    assert(!conn.waiting_output && conn.output == nullptr);
    conn.waiting_output = true;
    conn.wait_next = no_slot;
    conn.wait_prev = wait_tail_;
    if (wait_tail_ == no_slot) {
      wait_head_ = conn.slot;
    } else {
      table_[wait_tail_].wait_next = conn.slot;
    }
    wait_tail_ = conn.slot;
  }

  // Leaves the line wherever it stands in it (closed, or granted); nothing
  // when it is not in it.
  void stop_waiting(Connection& conn) {
    if (!conn.waiting_output) return;
    conn.waiting_output = false;
    if (conn.wait_prev == no_slot) {
      wait_head_ = conn.wait_next;
    } else {
      table_[conn.wait_prev].wait_next = conn.wait_next;
    }
    if (conn.wait_next == no_slot) {
      wait_tail_ = conn.wait_prev;
    } else {
      table_[conn.wait_next].wait_prev = conn.wait_prev;
    }
    conn.wait_prev = conn.wait_next = no_slot;
  }

 private:
  io::SlotTable<Connection>& table_;
  io::SlotTable<OutputBlock> blocks_;
  std::uint32_t lent_ = 0;
  std::uint32_t wait_head_ = no_slot;  // the oldest waiter
  std::uint32_t wait_tail_ = no_slot;
};

}  // namespace ringhttp::server
