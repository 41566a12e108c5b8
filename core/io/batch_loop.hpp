#pragma once
// The loop a ring's owner (a server shard, a client worker) runs, and the
// operations on a slot's in-flight work that both need: one mechanism for
// both.
//
// A batch: submit what the last one prepared and reap up to
// io::reap_batch_max completions (copied out, the CQ advanced once), let
// the owner read its clock, hand each completion to its handler, then do
// the after-batch work once, for the slots the batch marked dirty: work
// that must see every completion of the batch first (one send per
// connection however many receives fed it; a receive re-armed only after
// the batch gave its buffers back).

#include <linux/time_types.h>

#include <array>
#include <cassert>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/io/completion.hpp"
#include "core/io/errno_class.hpp"
#include "core/io/user_data.hpp"

namespace ringhttp::io {

// The user_data of operation `op` of a slot (user_data.hpp): a completion
// carrying an older generation is for an earlier use of the slot.
template <typename Slot>
std::uint64_t tag(Op op, const Slot& s) {
  return encode({op, s.slot, s.generation});
}

// A receive completion with res < 0, in the terms its owner acts on. The
// buffer ring running dry (-ENOBUFS) and a retryable error (errno_class.hpp)
// ask for a re-arm after the batch, which may have given buffers back (the
// slot's rearm_recv is set, unless a multishot receive is still armed):
// `rearm` means mark the slot dirty. -ENOBUFS `enobufs_in_a_row_max` times
// in a row waits for the owner's tick instead (`rearm_on_tick`), so a dry
// ring is not spun on. Slot needs: bool recv_armed, bool rearm_recv,
// std::uint8_t enobufs_in_a_row (reset by the owner on data).
enum class ReceiveFailure : std::uint8_t { rearm, rearm_on_tick, cancelled, peer_gone };

template <typename Slot>
ReceiveFailure receive_failed(Slot& s, std::int32_t res, std::uint8_t enobufs_in_a_row_max) {
  assert(res < 0);
  if (res == -ENOBUFS) {
    s.rearm_recv = !s.recv_armed;
    if (s.enobufs_in_a_row >= enobufs_in_a_row_max) return ReceiveFailure::rearm_on_tick;
    ++s.enobufs_in_a_row;
    return ReceiveFailure::rearm;
  }
  switch (classify(res)) {
    case ErrnoClass::cancelled: return ReceiveFailure::cancelled;  // the owner's own cancel
    case ErrnoClass::retry: s.rearm_recv = !s.recv_armed; return ReceiveFailure::rearm;
    case ErrnoClass::bug: assert(!"a receive was refused as invalid"); [[fallthrough]];
    default: return ReceiveFailure::peer_gone;  // ECONNRESET and friends
  }
}

// The slots a batch touched, each once, in the order first touched. Slot
// needs `std::uint32_t slot` and `bool dirty`.
class DirtyList {
 public:
  void reserve(std::size_t slots) { slots_.reserve(slots); }

  template <typename Slot>
  void mark(Slot& s) {
    if (s.dirty) return;
    s.dirty = true;
    slots_.push_back(s.slot);
  }

  // Calls `work(slot)` for each slot marked, unmarked first, then empties
  // the list. A slot marked again by the work (it made more to do: resumed
  // input produced responses) is worked again in this same pass; work must
  // not mark its slot unconditionally.
  template <typename Table, typename Work>
  void drain(Table& table, Work&& work) {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      auto& s = table[slots_[i]];
      s.dirty = false;
      work(s);
    }
    slots_.clear();
  }

 private:
  std::vector<std::uint32_t> slots_;
};

// Runs batches until `owner.done()`. Owner provides:
//   bool done() const;
//   std::optional<__kernel_timespec> wait_limit() const;  // nullopt: wait for a completion
//   void on_wake();                                      // after each reap: read the clock
//   void dispatch(const Completion& c);
//   void after_batch();
// `io` is a backend (core/io/backend.hpp) or io_uring's Ring: anything that
// submits and reaps completions.
template <typename Io, typename Owner>
void run_batches(Io& io, Owner& owner) {
  std::array<Completion, io::reap_batch_max> batch;
  while (!owner.done()) {
    const std::optional<__kernel_timespec> limit = owner.wait_limit();
    const std::uint32_t n = limit ? io.submit_and_reap(batch, *limit) : io.submit_and_reap(batch);
    owner.on_wake();
    for (std::uint32_t i = 0; i < n; ++i) owner.dispatch(batch[i]);
    owner.after_batch();
  }
}

}  // namespace ringhttp::io
