#pragma once
// One io_uring per thread: set-up with the chosen features, an SQE source
// that treats a full submission queue as a normal state (it flushes), and a
// batch reaper that copies completions out and advances the CQ once, so
// handlers never run inside the reap loop.

#include <liburing.h>

#include <cassert>
#include <cstdint>
#include <span>

#include "core/io/completion.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::uring {

using Completion = io::Completion;

// io_uring_queue_init_params, and what liburing 2.3 cannot set up itself:
// with IORING_SETUP_NO_SQARRAY (6.6) the ring is made and mapped here, since
// liburing's own set-up would fill an SQ array the ring does not have.
// Returns 0 or -errno.
int queue_init(std::uint32_t entries, io_uring& ring, io_uring_params& params);

// Submits what is queued and waits for `wait_nr` completions, returning
// once they have come, or `min_wait_us` after the first one, or at
// `timeout` (relative; null: none) with none: io_uring_enter with
// min_wait_usec (6.12), which liburing 2.3 cannot pass. Not for SQPOLL
// rings. Returns what io_uring_enter returns.
int submit_and_wait_min(io_uring& ring, std::uint32_t wait_nr, std::uint32_t min_wait_us,
                        const __kernel_timespec* timeout);

class Ring {
 public:
  // The completion queue is sized for multishot operations, whose completions
  // are not bounded by submissions: a generous multiple of the SQ, and never
  // below a floor so that a tiny SQ (a test) still has room.
  static constexpr std::uint32_t cq_per_sq = 8;
  static constexpr std::uint32_t cq_entries_min = 4096;
  static constexpr std::uint32_t reap_batch_max = io::reap_batch_max;
  // With SQPOLL: how long the poller thread keeps polling an empty SQ before
  // it sleeps (and the next submission costs an io_uring_enter to wake it).
  // Long enough to span the gap between one loop iteration's submissions
  // and the next under load (a loopback round trip is tens of µs), short
  // enough that an idle ring's poller stops spinning on its core soon after
  // the last submission. The kernel's own default is one second.
  static constexpr std::uint32_t sq_thread_idle_ms = 10;
  // With min-wait: the batch a wait asks for, and how long past the first
  // completion it may wait for the rest. The batch is what one loop
  // iteration handles well (a fraction of reap_batch_max); the time is a
  // few loopback round trips, small beside a request's latency under load.
  // A wait with a deadline nearer than that (the client's next scheduled
  // send, a shard's tick) waits only until the deadline.
  static constexpr std::uint32_t min_wait_batch = 16;
  static constexpr std::uint32_t min_wait_us = 50;

  Ring() = default;
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  // Returns 0 or -errno. With features.sqpoll, the poller thread is bound
  // to `sq_thread_cpu` (IORING_SETUP_SQ_AFF) when it is not negative.
  int init(std::uint32_t sq_entries, const Features& features, int sq_thread_cpu = -1);

  // Never returns null: a full SQ is submitted to make room.
  io_uring_sqe* sqe();

  // Submits pending SQEs and waits for at least one completion (or for the
  // timeout, when one is given), then copies up to out.size() completions
  // into `out` and advances the CQ once. Returns how many were copied.
  std::uint32_t submit_and_reap(std::span<Completion> out);
  // The same, waiting at most `timeout` (relative): 0 completions on expiry.
  std::uint32_t submit_and_reap(std::span<Completion> out, __kernel_timespec timeout);

  // The batching wait, set by the owner between waits: each wait then
  // returns once `batch` completions have come, or `us` after it began with
  // at least one, so no completion waits longer than `us` to be reaped. 0:
  // return at the first completion. Only where the features allow
  // min_wait_usec (Features::min_timeout: the kernel has it, 6.12, and the
  // --uring profile is 6.12 or all) and the ring has no SQPOLL poller:
  // elsewhere it stays 0. --uring min-wait starts it at min_wait_us for
  // min_wait_batch.
  bool can_batch_wait() const { return can_min_wait_; }
  void set_batch_wait(std::uint32_t us, std::uint32_t batch) {
    assert(can_min_wait_ || us == 0);
    assert(batch > 0);
    wait_us_ = us;
    wait_batch_ = batch;
  }
  io_uring* get() { return &ring_; }
  std::uint64_t submit_full_flushes() const { return full_flushes_; }

 private:
  static void check_wait(int rc);
  std::uint32_t reap(std::span<Completion> out);

  io_uring ring_{};
  bool initialized_ = false;
  bool sqpoll_ = false;
  bool can_min_wait_ = false;
  std::uint32_t wait_us_ = 0;  // 0: no batching wait
  std::uint32_t wait_batch_ = min_wait_batch;
  std::uint64_t full_flushes_ = 0;
};

}  // namespace ringhttp::uring
