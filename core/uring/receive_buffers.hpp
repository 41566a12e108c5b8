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

#include <liburing.h>

#include <cstdint>
#include <string>

#include "core/io/completion.hpp"
#include "core/uring/buffer_ring.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::uring {

class ReceiveBuffers {
 public:
  static constexpr std::int32_t own_buffer = io::own_buffer;  // buffer_id of a slot's own buffer

  struct Received {
    const char* data;
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

  // The bytes a receive completion with `cqe_flags` delivered for `slot`.
  Received received(std::uint32_t slot, std::uint32_t cqe_flags) {
    if ((cqe_flags & IORING_CQE_F_BUFFER) != 0) {
      const auto id = std::uint16_t(cqe_flags >> IORING_CQE_BUFFER_SHIFT);
      return {ring_.data(id), id};
    }
    return {own_ + std::size_t(slot) * buffer_bytes_, own_buffer};
  }

  void give_back(std::int32_t buffer_id) {
    if (buffer_id != own_buffer) ring_.give_back(std::uint16_t(buffer_id));
  }
  // For a completion that will not be handled (its slot is gone).
  void give_back_flags(std::uint32_t cqe_flags) {
    if ((cqe_flags & IORING_CQE_F_BUFFER) != 0) ring_.give_back(std::uint16_t(cqe_flags >> IORING_CQE_BUFFER_SHIFT));
  }

 private:
  BufferRing ring_;
  char* own_ = nullptr;
  std::size_t own_bytes_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  bool provided_ = false;
  bool multishot_ = false;
};

}  // namespace ringhttp::uring
