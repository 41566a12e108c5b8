#pragma once
// A provided-buffer ring (IORING_REGISTER_PBUF_RING): the kernel picks a
// buffer for each receive, so idle connections hold no receive memory.
// Ownership: a buffer belongs to the kernel until a completion names it,
// then to the handler until give_back() returns it to the ring
// (ReceiveBuffers keeps who holds each buffer, and asserts it).
//
// The ring keeps a mirror of itself: which buffer id was put at each ring
// position. A bundle receive (IORING_RECVSEND_BUNDLE) names only its first
// buffer; the others are the ring entries right after that one's, which the
// mirror names. A mirror entry is rewritten only when the tail comes round
// to its position again, a whole ring later: that takes every buffer taken
// after it back first, so the entries of a bundle not yet handed out stay
// as they were (completions come in the order the kernel took buffers).

#include <liburing.h>

#include <cassert>
#include <cstdint>
#include <vector>

namespace ringhttp::uring {

class BufferRing {
 public:
  BufferRing() = default;
  ~BufferRing();
  BufferRing(const BufferRing&) = delete;
  BufferRing& operator=(const BufferRing&) = delete;

  // count must be a power of two. `incremental` registers the ring with
  // IOU_PBUF_RING_INC (6.12): the kernel consumes each buffer in part.
  // `mirrored` keeps the mirror (for bundles: a ring without them has no
  // use for it, and skips its two writes per give_back). Returns 0 or
  // -errno.
  int init(io_uring* ring, std::uint16_t group, std::uint32_t count, std::uint32_t buffer_bytes,
           bool incremental = false, bool mirrored = true);

  char* data(std::uint16_t id) { return storage_ + std::size_t(id) * buffer_bytes_; }
  std::uint32_t buffer_bytes() const { return buffer_bytes_; }
  std::uint32_t count() const { return count_; }
  std::uint16_t group() const { return group_; }

  // Ring positions count as the kernel's head and tail do: 16 bits that wrap.
  // Where `id` was last put in the ring, and which id is at `position`.
  std::uint16_t position_of(std::uint16_t id) const {
    assert(mirrored_);
    return positions_[id];
  }
  std::uint16_t id_at(std::uint16_t position) const {
    assert(mirrored_);
    return ids_[position & (count_ - 1)];
  }
  // The length the ring entry at `position` has now. The kernel may have
  // cut it short: a bundle whose first buffer is longer than the bytes it
  // expects (the socket's queue) shortens that entry, fills it, and goes
  // on in the next buffer.
  std::uint32_t entry_len(std::uint16_t position) const {
    return __atomic_load_n(&buf_ring_->bufs[position & (count_ - 1)].len, __ATOMIC_RELAXED);
  }

  // Inline: once per receive.
  void give_back(std::uint16_t id) {
    assert(buf_ring_ != nullptr);
    assert(id < count_);
    add(id, 0);
    io_uring_buf_ring_advance(buf_ring_, 1);
  }

 private:
  // Puts `id` at the tail + `offset` and notes it in the mirror; the tail
  // moves when io_uring_buf_ring_advance publishes it.
  void add(std::uint16_t id, std::uint16_t offset) {
    const auto position = std::uint16_t(buf_ring_->tail + offset);
    io_uring_buf_ring_add(buf_ring_, data(id), buffer_bytes_, id, io_uring_buf_ring_mask(count_), offset);
    if (!mirrored_) return;
    ids_[position & (count_ - 1)] = id;
    positions_[id] = position;
  }

  io_uring* ring_ = nullptr;
  io_uring_buf_ring* buf_ring_ = nullptr;
  std::size_t ring_bytes_ = 0;
  char* storage_ = nullptr;
  std::size_t storage_bytes_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::uint16_t group_ = 0;
  bool mirrored_ = true;
  std::vector<std::uint16_t> ids_;        // by ring position (masked): the id put there
  std::vector<std::uint16_t> positions_;  // by id: the ring position it was last put at
};

}  // namespace ringhttp::uring
