#pragma once
// The table of connection slots that an io_uring owner (a server shard, a
// client worker) tags its operations with: one mechanism for both.
//
// - Mapped once, at its full capacity, and never moved: a slot's address
//   is stable for the kernel's and the owner's pointers into it, and pages
//   no slot has touched cost nothing.
// - Each slot is constructed the first time it is handed out, default-
//   initialized (not value-initialized: zeroing would make every slot's
//   large members resident at once).
// - Released slots go on a free list, handed out again last-in first-out
//   (the warmest memory first); a slot is released only by its owner, once
//   no operation of it is in flight (InFlight below).
// - Every hand-out bumps the slot's generation, which tags the slot's
//   operations (user_data.hpp): a completion carrying an older generation
//   is stale, and find() says so instead of handing out the slot.
//
// Slot must have `std::uint32_t slot` and `std::uint32_t generation`
// members, and a default constructor that leaves its large members
// uninitialized.

#include <sys/mman.h>

#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/io/user_data.hpp"

namespace ringhttp::io {

template <typename Slot>
class SlotTable {
 public:
  SlotTable() = default;
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;
  ~SlotTable() {
    for (std::uint32_t i = 0; i < constructed_; ++i) slots_[i].~Slot();
    if (slots_ != nullptr) ::munmap(slots_, bytes_);
  }

  // Maps room for `capacity` slots; returns what went wrong, or "".
  std::string init(std::uint32_t capacity) {
    assert(slots_ == nullptr && capacity > 0 && capacity <= slot_max);
    bytes_ = std::size_t(capacity) * sizeof(Slot);
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (p == MAP_FAILED) return std::string("slot table: ") + std::strerror(errno);
    slots_ = static_cast<Slot*>(p);
    capacity_ = capacity;
    free_.reserve(capacity);
    return {};
  }

  std::uint32_t capacity() const { return capacity_; }
  // Slots constructed so far: every slot below this index exists (free or
  // in use); none above it has been touched.
  std::uint32_t constructed() const { return constructed_; }
  bool full() const { return free_.empty() && constructed_ == capacity_; }

  // A slot with a new generation, or nullptr when every slot is in use.
  Slot* acquire() {
    std::uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else if (constructed_ < capacity_) {
      index = constructed_++;
      new (&slots_[index]) Slot;
      slots_[index].slot = index;
      slots_[index].generation = 0;
    } else {
      return nullptr;
    }
    Slot& s = slots_[index];
    ++s.generation;
    return &s;
  }

  // A new generation for a slot kept by its owner (the client reconnects
  // in the same slot): operations of the old connection become stale.
  void renew(Slot& s) { ++s.generation; }

  void release(Slot& s) {
    assert(s.slot < constructed_);
    assert(free_.size() < constructed_);
    free_.push_back(s.slot);
  }

  // The slot a completion's tag names, or nullptr when the tag's generation
  // is not the slot's (a completion for an earlier use of it).
  Slot* find(const Tag& tag) {
    assert(tag.slot < constructed_ && "a completion for a slot never handed out");
    Slot& s = slots_[tag.slot];
    return s.generation == tag.generation ? &s : nullptr;
  }

  // Constructed slots by index, in use or free (the owner's state says).
  Slot& operator[](std::uint32_t index) {
    assert(index < constructed_);
    return slots_[index];
  }
  const Slot& operator[](std::uint32_t index) const {
    assert(index < constructed_);
    return slots_[index];
  }

 private:
  Slot* slots_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint32_t capacity_ = 0;
  std::uint32_t constructed_ = 0;
  std::vector<std::uint32_t> free_;
};

// Completions still to come for one slot: each operation submitted adds
// one, each final completion takes one away, and the slot may be released
// only at zero, so no completion can find its slot reused.
struct InFlight {
  std::uint32_t count = 0;

  void add() { ++count; }
  void done() {
    assert(count > 0 && "a completion for no operation in flight");
    --count;
  }
  bool none() const { return count == 0; }
};

}  // namespace ringhttp::io
