#pragma once
// The received chunks a connection holds while its input is paused, oldest
// first: a fixed ring, so holding never allocates. Chunks arrive at the
// back; the chunk being parsed when the pause came goes back at the front;
// resuming takes them from the front. Pure: it moves records, and knows
// nothing of buffers, spill blocks or the shard's share (Session::hold).

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>

namespace ringhttp::server {

template <typename Chunk, std::size_t Capacity>
class HeldInput {
 public:
  static constexpr std::size_t capacity = Capacity;

  bool empty() const { return count_ == 0; }
  bool full() const { return count_ == Capacity; }
  std::size_t size() const { return count_; }

  void push_back(const Chunk& chunk) {
    assert(!full());
    chunks_[(head_ + count_) % Capacity] = chunk;
    ++count_;
  }
  void push_front(const Chunk& chunk) {
    assert(!full());
    head_ = (head_ + Capacity - 1) % Capacity;
    chunks_[head_] = chunk;
    ++count_;
  }
  // The newest chunk, which a later arrival may be appended to.
  Chunk& back() {
    assert(!empty());
    return chunks_[(head_ + count_ - 1) % Capacity];
  }
  Chunk pop_front() {
    assert(!empty());
    const Chunk chunk = chunks_[head_];
    head_ = (head_ + 1) % Capacity;
    --count_;
    return chunk;
  }
  void clear() { head_ = count_ = 0; }

 private:
  std::array<Chunk, Capacity> chunks_{};
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
};

}  // namespace ringhttp::server
