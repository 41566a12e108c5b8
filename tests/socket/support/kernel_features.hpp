#pragma once
// What this machine's kernel offers, asked of the kernel itself: a test that
// skips for a missing feature must not take the product's word for it (a
// server that stopped turning a feature on would then skip, not fail).
// Each probe sets up a small ring of its own and reads the feature bits
// io_uring_setup(2) reports.

#include <liburing.h>
#include <sys/mman.h>

#include <cstdint>

#include "core/uring/compat.hpp"  // the feature bits liburing 2.3's header lacks

namespace socket_test {

// params.features of a fresh 8-entry ring, 0 when io_uring is unavailable.
inline std::uint32_t kernel_uring_features() {
  io_uring ring{};
  io_uring_params params{};
  if (io_uring_queue_init_params(8, &ring, &params) != 0) return 0;
  io_uring_queue_exit(&ring);
  return params.features;
}

// IORING_FEAT_RECVSEND_BUNDLE: a receive may take several provided buffers
// at once (Linux 6.10).
inline bool kernel_has_recv_bundle() { return (kernel_uring_features() & IORING_FEAT_RECVSEND_BUNDLE) != 0; }

// IORING_FEAT_MIN_TIMEOUT: a wait may hold its first completion back for
// min_wait_usec (Linux 6.12).
inline bool kernel_has_min_wait() { return (kernel_uring_features() & IORING_FEAT_MIN_TIMEOUT) != 0; }

// IOU_PBUF_RING_INC: a buffer ring whose buffers are consumed in part
// (Linux 6.12). A kernel without it refuses the flag when the ring is
// registered.
inline bool kernel_has_incremental_buffers() {
  io_uring ring{};
  if (io_uring_queue_init(8, &ring, 0) != 0) return false;
  const std::size_t bytes = 4096;  // one page: room for the one entry
  void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  bool registered = false;
  if (memory != MAP_FAILED) {
    io_uring_buf_reg reg{};
    reg.ring_addr = reinterpret_cast<std::uint64_t>(memory);
    reg.ring_entries = 1;
    reg.pad = IOU_PBUF_RING_INC;  // `flags` in newer headers than liburing 2.3's
    registered = io_uring_register_buf_ring(&ring, &reg, 0) == 0;
    if (registered) io_uring_unregister_buf_ring(&ring, 0);
    ::munmap(memory, bytes);
  }
  io_uring_queue_exit(&ring);
  return registered;
}

}  // namespace socket_test
