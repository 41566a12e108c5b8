#pragma once
// A provided-buffer ring (IORING_REGISTER_PBUF_RING): the kernel picks a
// buffer for each receive, so idle connections hold no receive memory.
// Ownership: a buffer belongs to the kernel until a completion names it,
// then to the handler until give_back() returns it to the ring.

#include <liburing.h>

#include <cassert>
#include <cstdint>

namespace ringhttp::uring {

class BufferRing {
 public:
  BufferRing() = default;
  ~BufferRing();
  BufferRing(const BufferRing&) = delete;
  BufferRing& operator=(const BufferRing&) = delete;

  // count must be a power of two. Returns 0 or -errno.
  int init(io_uring* ring, std::uint16_t group, std::uint32_t count, std::uint32_t buffer_bytes);

  char* data(std::uint16_t id) { return storage_ + std::size_t(id) * buffer_bytes_; }
  std::uint32_t buffer_bytes() const { return buffer_bytes_; }
  std::uint16_t group() const { return group_; }

  // Inline: once per receive.
  void give_back(std::uint16_t id) {
    assert(buf_ring_ != nullptr);
    assert(id < count_);
    io_uring_buf_ring_add(buf_ring_, data(id), buffer_bytes_, id, io_uring_buf_ring_mask(count_), 0);
    io_uring_buf_ring_advance(buf_ring_, 1);
  }

 private:
  io_uring* ring_ = nullptr;
  io_uring_buf_ring* buf_ring_ = nullptr;
  std::size_t ring_bytes_ = 0;
  char* storage_ = nullptr;
  std::size_t storage_bytes_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::uint16_t group_ = 0;
};

}  // namespace ringhttp::uring
