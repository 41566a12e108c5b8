#include "core/uring/buffer_ring.hpp"

#include <sys/mman.h>

#include <cassert>
#include <cerrno>

#include "core/uring/compat.hpp"

namespace ringhttp::uring {

BufferRing::~BufferRing() {
  if (buf_ring_ != nullptr) {
    io_uring_unregister_buf_ring(ring_, group_);
    ::munmap(buf_ring_, ring_bytes_);
  }
  if (storage_ != nullptr) ::munmap(storage_, storage_bytes_);
}

int BufferRing::init(io_uring* ring, std::uint16_t group, std::uint32_t count, std::uint32_t buffer_bytes,
                     bool incremental, bool mirrored) {
  assert(buf_ring_ == nullptr);
  assert(count > 0 && (count & (count - 1)) == 0);
  assert(count <= 32768);
  ring_ = ring;
  group_ = group;
  count_ = count;
  buffer_bytes_ = buffer_bytes;
  // liburing 2.3 has no io_uring_setup_buf_ring(): map the ring ourselves.
  ring_bytes_ = count * sizeof(io_uring_buf);
  void* mem = ::mmap(nullptr, ring_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return -errno;
  storage_bytes_ = std::size_t(count) * buffer_bytes;
  void* storage = ::mmap(nullptr, storage_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (storage == MAP_FAILED) {
    ::munmap(mem, ring_bytes_);
    return -errno;
  }
  storage_ = static_cast<char*>(storage);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(mem);
  reg.ring_entries = count;
  reg.bgid = group;
  if (incremental) reg.pad = IOU_PBUF_RING_INC;  // `flags` in newer headers than liburing 2.3's
  const int rc = io_uring_register_buf_ring(ring, &reg, 0);
  if (rc != 0) {
    ::munmap(mem, ring_bytes_);
    ::munmap(storage_, storage_bytes_);
    storage_ = nullptr;
    return rc;
  }
  buf_ring_ = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_ring_init(buf_ring_);
  mirrored_ = mirrored;
  if (mirrored_) {
    ids_.assign(count, 0);
    positions_.assign(count, 0);
  }
  for (std::uint32_t id = 0; id < count; ++id) add(std::uint16_t(id), std::uint16_t(id));
  io_uring_buf_ring_advance(buf_ring_, int(count));
  return 0;
}

}  // namespace ringhttp::uring
