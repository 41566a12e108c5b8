#include "core/uring/receive_buffers.hpp"

#include <sys/mman.h>

#include <cassert>
#include <cerrno>
#include <cstring>

namespace ringhttp::uring {

ReceiveBuffers::~ReceiveBuffers() {
  if (own_ != nullptr) ::munmap(own_, own_bytes_);
}

std::string ReceiveBuffers::init(io_uring* ring, const Features& features, std::uint32_t ring_buffers,
                                 std::uint32_t buffer_bytes, std::uint32_t slots) {
  assert(buffer_bytes > 0);
  buffer_bytes_ = buffer_bytes;
  provided_ = features.bufring;
  multishot_ = features.bufring && features.multishot_recv;
  bundle_ = features.bufring && features.recv_bundle;
  incremental_ = features.bufring && features.incremental_buffers;
  if (provided_) {
    // The same size and count with an incremental ring: each piece must
    // still fit what the owners copy one buffer into (the server's spill
    // blocks, the client's held ciphertext), and small receives now share a
    // buffer instead of each taking one, which is the gain.
    if (const int rc = ring_.init(ring, 0, ring_buffers, buffer_bytes, incremental_, bundle_); rc < 0) {
      return std::string("provided buffer ring: ") + std::strerror(-rc);
    }
    state_.assign(ring_buffers, BufferState{});
    return {};
  }
  own_bytes_ = std::size_t(slots) * buffer_bytes;
  void* mem = ::mmap(nullptr, own_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return std::string("receive buffers: ") + std::strerror(errno);
  own_ = static_cast<char*>(mem);
  return {};
}

bool ReceiveBuffers::prep_recv(io_uring_sqe* sqe, int fd, std::uint32_t slot, bool multishot) {
  if (!provided_) {
    assert(std::size_t(slot + 1) * buffer_bytes_ <= own_bytes_);
    io_uring_prep_recv(sqe, fd, own_ + std::size_t(slot) * buffer_bytes_, buffer_bytes_, 0);
    return false;
  }
  const bool use_multishot = multishot_ && multishot;
  if (use_multishot) {
    io_uring_prep_recv_multishot(sqe, fd, nullptr, 0, 0);
  } else {
    io_uring_prep_recv(sqe, fd, nullptr, buffer_bytes_, 0);
  }
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = ring_.group();
  // A single-shot receive is capped at one buffer's bytes (what the server
  // takes while its input is paused): a bundle then spans two buffers at
  // most, when an incremental ring's first one is part-filled.
  if (bundle_) sqe->ioprio |= IORING_RECVSEND_BUNDLE;
  return use_multishot;
}

}  // namespace ringhttp::uring
