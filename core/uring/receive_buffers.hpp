#pragma once
// Where a connection's receives land, for server and client alike: a
// provided-buffer ring when the kernel has one (idle connections then hold
// no receive memory), else one buffer per connection slot, mapped once and
// touched only for slots in use.
//
// Ownership: a provided buffer belongs to the kernel until a completion
// names it, then to the handler until give_back(); a slot's own buffer
// belongs to its single receive in flight, then to the handler until it
// arms the next one.
//
// Two 6.x features change what one completion hands out, and both are
// turned into pieces here, each one buffer id, so that the owners hold and
// give back per piece as they always did:
// - a bundle (recv-bundle, 6.10) takes several buffers in one completion:
//   the first is named by its flags, the others are the ring entries after
//   it (BufferRing's mirror), each filled to its entry's length but the
//   last. received() hands out the first piece and next() each of the
//   others.
// - an incremental ring (incremental-buffers, 6.12) fills a buffer in
//   parts: each piece starts where the buffer's last one ended, and the
//   kernel keeps the buffer until it is full. It goes back to the ring once
//   the kernel is done with it and every piece of it was given back.
// Each buffer's state is kept here and asserted on every give_back: a
// piece is given back once, and a buffer the kernel still fills is never
// put back in the ring.

#include <liburing.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string>
#include <vector>

#include "core/io/completion.hpp"
#include "core/uring/buffer_ring.hpp"
#include "core/uring/compat.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::uring {

class ReceiveBuffers {
 public:
  static constexpr std::int32_t own_buffer = io::own_buffer;  // buffer_id of a slot's own buffer

  // One piece of a receive: `len` bytes at `data`, all in one buffer.
  struct Received {
    const char* data;
    std::uint32_t len;
    std::int32_t buffer_id;  // provided-buffer id, or own_buffer
  };

  ReceiveBuffers() = default;
  ~ReceiveBuffers();
  ReceiveBuffers(const ReceiveBuffers&) = delete;
  ReceiveBuffers& operator=(const ReceiveBuffers&) = delete;

  // `ring_buffers` × `buffer_bytes` for a buffer ring, or `slots` ×
  // `buffer_bytes` without one. Returns an empty string or what failed.
  std::string init(io_uring* ring, const Features& features, std::uint32_t ring_buffers, std::uint32_t buffer_bytes,
                   std::uint32_t slots);

  // Prepares a receive on `fd` for `slot`: multishot with buffer select when
  // the features allow and `multishot` is asked, else single-shot (selected
  // or into the slot's buffer). Returns whether it is multishot.
  bool prep_recv(io_uring_sqe* sqe, int fd, std::uint32_t slot, bool multishot = true);

  // The first piece of the `res` > 0 bytes a receive completion with
  // `cqe_flags` delivered for `slot`; next() hands out the others. Every
  // piece of one completion is taken before the next completion's.
  Received received(std::uint32_t slot, std::uint32_t cqe_flags, std::int32_t res) {
    assert(pending_.left == 0 && "a piece of the last completion was not taken");
    if ((cqe_flags & IORING_CQE_F_BUFFER) == 0) {
      return {own_ + std::size_t(slot) * buffer_bytes_, std::uint32_t(res), own_buffer};
    }
    const auto id = std::uint16_t(cqe_flags >> IORING_CQE_BUFFER_SHIFT);
    pending_.left = res > 0 ? std::uint32_t(res) : 0;
    // Only a bundle spans ring entries, so only a bundle looks the ring up.
    if (bundle_) pending_.position = ring_.position_of(id);
    return take(id);
  }

  // The completion's next piece: a bundle's next buffer. False once every
  // piece has been handed out.
  bool next(Received& out) {
    if (pending_.left == 0) return false;
    assert(bundle_ && "only a bundle spans buffers");
    ++pending_.position;
    out = take(ring_.id_at(pending_.position));
    return true;
  }

  // A piece the handler is done with.
  void give_back(std::int32_t buffer_id) {
    if (buffer_id == own_buffer) return;
    assert(buffer_id >= 0 && std::uint32_t(buffer_id) < state_.size());
    BufferState& b = state_[std::size_t(buffer_id)];
    assert(b.pieces > 0 && "a piece given back twice, or never handed out");
    assert((incremental_ || !b.kernel) && "a buffer given back while the kernel holds it");
    --b.pieces;
    if (b.pieces > 0 || b.kernel) return;
    b.offset = 0;
    b.kernel = true;
    ring_.give_back(std::uint16_t(buffer_id));
  }

  // What the tests look at: a provided buffer's start, whether the kernel
  // holds it, and how many of its pieces the handler holds.
  const char* buffer_start(std::uint16_t id) { return ring_.data(id); }
  bool kernel_holds(std::uint16_t id) const { return state_[id].kernel; }
  std::uint16_t pieces_out(std::uint16_t id) const { return state_[id].pieces; }

  // For a completion that will not be handled (its slot is gone): every
  // buffer it took goes back.
  void give_back_flags(std::uint32_t cqe_flags, std::int32_t res) {
    if ((cqe_flags & IORING_CQE_F_BUFFER) == 0) return;
    Received piece = received(0, cqe_flags, res);
    give_back(piece.buffer_id);
    while (next(piece)) give_back(piece.buffer_id);
  }

 private:
  // A provided buffer's state: whether the kernel holds it (in the ring, or
  // being filled in part), where its unfilled part begins, and how many of
  // its pieces the handler holds.
  struct BufferState {
    std::uint32_t offset = 0;
    std::uint16_t pieces = 0;
    bool kernel = true;
  };
  static_assert(sizeof(BufferState) == 8);

  // The completion being handed out: its bytes not yet in a piece, and the
  // ring position of its latest piece's buffer.
  struct Pending {
    std::uint32_t left = 0;
    std::uint16_t position = 0;
  };

  // The next piece, in buffer `id`: from where its last piece ended, to the
  // buffer's end or the completion's, whichever is first. A bundle's buffer
  // of a plain ring ends where its ring entry (at the pending position)
  // ends, which the kernel may have shortened (BufferRing::entry_len).
  // Without bundles a completion is one buffer: its bytes all fit.
  Received take(std::uint16_t id) {
    assert(id < state_.size());
    BufferState& b = state_[id];
    assert(b.kernel && "a completion names a buffer the kernel does not hold");
    assert(b.offset < buffer_bytes_);
    const std::uint32_t room = incremental_ ? buffer_bytes_ - b.offset
                               : bundle_    ? std::min(ring_.entry_len(pending_.position), buffer_bytes_)
                                            : buffer_bytes_;
    assert((bundle_ || pending_.left <= room) && "one receive, one buffer");
    const std::uint32_t len = std::min(pending_.left, room);
    const Received out{ring_.data(id) + b.offset, len, id};
    b.offset += len;
    pending_.left -= len;
    assert(b.pieces < UINT16_MAX);
    ++b.pieces;
    // A plain ring's buffer is the handler's once taken. An incremental
    // ring's kernel keeps a buffer exactly while it has room left: it moves
    // the ring's head past a buffer only once the buffer is full. That, not
    // IORING_CQE_F_BUF_MORE, decides: a bundle the kernel retried (more had
    // arrived) carries its first round's flags, not its last round's.
    b.kernel = incremental_ && b.offset < buffer_bytes_;
    return out;
  }

  BufferRing ring_;
  char* own_ = nullptr;
  std::size_t own_bytes_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::vector<BufferState> state_;  // by provided-buffer id
  Pending pending_;
  bool provided_ = false;
  bool multishot_ = false;
  bool bundle_ = false;       // receives take bundles (IORING_RECVSEND_BUNDLE)
  bool incremental_ = false;  // the ring is incremental (IOU_PBUF_RING_INC)
};

}  // namespace ringhttp::uring
