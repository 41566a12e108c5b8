#pragma once
// The one user_data layout of every io_uring operation in ringhttp.
//
//   bits 63..56  operation (Op)
//   bits 55..32  slot index in the owner's table (24 bits)
//   bits 31..0   slot generation, bumped each time the slot is reused
//
// The generation makes a late completion for a slot that has since been
// freed and reused harmless: it no longer matches and is dropped.

#include <cstdint>

namespace ringhttp::io {

enum class Op : std::uint8_t {
  none = 0,      // never submitted; a completion carrying it is a bug
  accept = 1,    // multishot or single accept on a shard's listener
  recv = 2,      // receive on a connection (multishot or single)
  send = 3,      // sendmsg/writev of a connection's corked output
  cancel = 4,    // async cancel aimed at another operation of a slot
  shutdown = 5,  // shutdown(SHUT_WR) before a lingering close
  tick = 6,      // the shard's periodic timer
  wake = 7,      // read of the shard's eventfd (signals, shutdown)
  probe = 8,     // feature probing at start-up
  connect = 9,   // the client's connect of a connection
  db_read = 10,  // poll for input on a shard's database connection (slot: its socket's)
  db_write = 11, // poll for room to write on one
  db_send = 12,  // send of queries on one (the pool's own protocol)
  db_recv = 13,  // receive of results on one
  db_cancel = 14,  // async cancel aimed at another operation of one
};

// The database sockets' operations are the last ones: one comparison
// tells whose engine a completion is for.
inline constexpr bool is_db(Op op) { return op >= Op::db_read && op <= Op::db_cancel; }

inline constexpr unsigned slot_bits = 24;
inline constexpr std::uint32_t slot_max = (1u << slot_bits) - 1;

struct Tag {
  Op op = Op::none;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
};

constexpr std::uint64_t encode(Tag tag) {
  return (std::uint64_t(tag.op) << 56) | (std::uint64_t(tag.slot & slot_max) << 32) | std::uint64_t(tag.generation);
}

constexpr Tag decode(std::uint64_t user_data) {
  return Tag{Op(user_data >> 56), std::uint32_t(user_data >> 32) & slot_max, std::uint32_t(user_data)};
}

static_assert(sizeof(Op) == 1);
static_assert(decode(encode({Op::send, slot_max, 0xffffffffu})).slot == slot_max);
static_assert(decode(encode({Op::send, 7, 0xffffffffu})).op == Op::send);
static_assert(decode(encode({Op::recv, 7, 42})).generation == 42);

}  // namespace ringhttp::io
