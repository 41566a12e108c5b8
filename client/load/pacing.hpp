#pragma once
// The open model's schedule (wrk2 style): R requests/s in total over C
// connections, evenly spaced. Connection g sends its k-th request at
//
//   start + (g + k * C) / R
//
// so that, all connections together, one request falls due every 1/R s.
// Computed from k each time (not by adding a rounded period), so the
// schedule never drifts however long the run.

#include <cstdint>

namespace ringhttp::client {

// When slot `slot` of the schedule falls due: slot / R seconds after the
// start, exactly (whole seconds and the remainder apart, so nothing
// overflows: the remainder is below R, at most rate_per_s_max).
inline std::uint64_t slot_due_ns(std::uint64_t start_ns, std::uint64_t rate_per_s, std::uint64_t slot) {
  return start_ns + slot / rate_per_s * 1'000'000'000 + slot % rate_per_s * 1'000'000'000 / rate_per_s;
}

class Pacing {
 public:
  Pacing() = default;
  Pacing(std::uint64_t start_ns, std::uint64_t rate_per_s, std::uint32_t connections, std::uint32_t global_index)
      : start_ns_(start_ns), rate_per_s_(rate_per_s), connections_(connections), index_(global_index) {}

  // The intended send time of this connection's next request.
  std::uint64_t next_ns() const { return slot_due_ns(start_ns_, rate_per_s_, index_ + sent_ * connections_); }
  // The next request leaves (at its intended time or later): move on.
  void advance() { ++sent_; }

 private:
  std::uint64_t start_ns_ = 0;
  std::uint64_t rate_per_s_ = 1;
  std::uint64_t connections_ = 1;
  std::uint64_t index_ = 0;
  std::uint64_t sent_ = 0;
};

// A worker's walk along the one schedule, over the slots of its own
// connections (global indices first .. first + count - 1 of C): the slots
// fall due in order, so the worker wakes once for every slot due by then
// and visits exactly those connections, never scanning the others. A
// connection busy at its slot (a batch still unanswered) is passed over
// here; it sends what it owes as its answers arrive (each request timed
// from its own slot), so the cursor never waits for it.
class ScheduleCursor {
 public:
  ScheduleCursor() = default;
  ScheduleCursor(std::uint64_t start_ns, std::uint64_t rate_per_s, std::uint32_t connections, std::uint32_t first,
                 std::uint32_t count)
      : start_ns_(start_ns), rate_per_s_(rate_per_s), connections_(connections), first_(first), count_(count) {
    slot_ = ours_from(0);
  }

  std::uint64_t due_ns() const { return slot_due_ns(start_ns_, rate_per_s_, slot_); }
  // The connection (index within the worker) whose slot is next.
  std::uint32_t connection() const { return std::uint32_t(slot_ % connections_) - first_; }
  void advance() { slot_ = ours_from(slot_ + 1); }

 private:
  // The first slot at or after `slot` that belongs to one of ours.
  std::uint64_t ours_from(std::uint64_t slot) const {
    const std::uint64_t r = slot % connections_;
    if (r < first_) return slot + (first_ - r);
    if (r >= std::uint64_t(first_) + count_) return slot + (connections_ - r) + first_;
    return slot;
  }

  std::uint64_t start_ns_ = 0;
  std::uint64_t rate_per_s_ = 1;
  std::uint64_t connections_ = 1;
  std::uint32_t first_ = 0;
  std::uint32_t count_ = 1;
  std::uint64_t slot_ = 0;
};

}  // namespace ringhttp::client
