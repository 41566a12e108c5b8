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

class Pacing {
 public:
  Pacing() = default;
  Pacing(std::uint64_t start_ns, std::uint64_t rate_per_s, std::uint32_t connections, std::uint32_t global_index)
      : start_ns_(start_ns), rate_per_s_(rate_per_s), connections_(connections), index_(global_index) {}

  // The intended send time of this connection's next request.
  std::uint64_t next_ns() const {
    // slot / R seconds, exactly: whole seconds and the remainder apart, so
    // nothing overflows (the remainder is below R, at most rate_per_s_max).
    const std::uint64_t slot = index_ + sent_ * connections_;
    return start_ns_ + slot / rate_per_s_ * 1'000'000'000 + slot % rate_per_s_ * 1'000'000'000 / rate_per_s_;
  }
  // The next request leaves (at its intended time or later): move on.
  void advance() { ++sent_; }

 private:
  std::uint64_t start_ns_ = 0;
  std::uint64_t rate_per_s_ = 1;
  std::uint64_t connections_ = 1;
  std::uint64_t index_ = 0;
  std::uint64_t sent_ = 0;
};

}  // namespace ringhttp::client
