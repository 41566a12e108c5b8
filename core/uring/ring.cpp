#include "core/uring/ring.hpp"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/uring/compat.hpp"

namespace ringhttp::uring {

int queue_init(std::uint32_t entries, io_uring& ring, io_uring_params& params) {
  if ((params.flags & IORING_SETUP_NO_SQARRAY) == 0) return io_uring_queue_init_params(entries, &ring, &params);
  const int fd = io_uring_setup(entries, &params);
  if (fd < 0) return fd;
  // liburing 2.3 maps the rings and submits by moving the SQ tail only; the
  // array it fills in io_uring_queue_init_params is the step left out.
  if (const int rc = io_uring_queue_mmap(fd, &params, &ring); rc < 0) {
    ::close(fd);
    return rc;
  }
  ring.features = params.features;  // which io_uring_queue_mmap leaves unset (IORING_FEAT_EXT_ARG's waits read it)
  return 0;
}

int submit_and_wait_min(io_uring& ring, std::uint32_t wait_nr, std::uint32_t min_wait_us,
                        const __kernel_timespec* timeout) {
  // What io_uring_submit does first: hand the queued entries over by moving
  // the SQ tail (liburing 2.3 keeps sqe_tail ahead of sqe_head until then).
  io_uring_sq& sq = ring.sq;
  const unsigned tail = sq.sqe_tail;
  if (sq.sqe_head != tail) {
    sq.sqe_head = tail;
    io_uring_smp_store_release(sq.ktail, tail);
  }
  const unsigned to_submit = tail - *sq.khead;
  // Without a timeout of its own, once min_wait_us has passed with nothing
  // the kernel (6.18) returns -ETIME rather than wait on: an idle ring would
  // wake every min_wait_us. A far deadline keeps it asleep instead.
  static constexpr __kernel_timespec far{std::int64_t{3600} * 24, 0};
  io_uring_getevents_arg arg{};
  arg.sigmask_sz = _NSIG / 8;
  arg.pad = min_wait_us;  // min_wait_usec since 6.12
  arg.ts = reinterpret_cast<std::uint64_t>(timeout != nullptr ? timeout : &far);
  unsigned flags = IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG;
  if ((ring.int_flags & RINGHTTP_LIBURING_INT_FLAG_REG_RING) != 0) flags |= IORING_ENTER_REGISTERED_RING;
  const long rc = ::syscall(__NR_io_uring_enter, ring.enter_ring_fd, to_submit, wait_nr, flags, &arg, sizeof arg);
  return rc < 0 ? -errno : int(rc);
}

Ring::~Ring() {
  if (initialized_) io_uring_queue_exit(&ring_);
}

int Ring::init(std::uint32_t sq_entries, const Features& features, int sq_thread_cpu) {
  assert(!initialized_);
  assert(sq_entries > 0);
  io_uring_params params{};
  params.flags = setup_flags(features) | IORING_SETUP_CQSIZE;
  std::uint32_t cq = sq_entries * cq_per_sq;
  params.cq_entries = cq < cq_entries_min ? cq_entries_min : cq;
  if (features.sqpoll) {
    params.sq_thread_idle = sq_thread_idle_ms;
    if (sq_thread_cpu >= 0) {
      // The poller runs on the CPU its ring's thread is pinned to: it then
      // competes with that thread only, never with another shard, and as a
      // thread of this process its CPU time is charged to the process, so
      // per-request CPU figures (utime+stime from /proc/PID/stat) include
      // it. A poller on a core of its own would make SQPOLL look free.
      params.flags |= IORING_SETUP_SQ_AFF;
      params.sq_thread_cpu = std::uint32_t(sq_thread_cpu);
    }
  }
  const int rc = queue_init(sq_entries, ring_, params);
  if (rc < 0) return rc;
  initialized_ = true;
  sqpoll_ = features.sqpoll;
  can_min_wait_ = (features.min_timeout || features.min_wait) && !features.sqpoll;
  wait_us_ = features.min_wait && can_min_wait_ ? min_wait_us : 0;
  // A registered ring fd saves an fdget/fdput per io_uring_enter: part of
  // fixed-files (5.18), and optional within it.
  if (features.fixed_files) (void)io_uring_register_ring_fd(&ring_);
  return 0;
}

io_uring_sqe* Ring::sqe() {
  assert(initialized_);
  io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
  // A full SQ is ordinary under load or with a tiny ring: hand what is queued
  // to the kernel, which frees the entries, and take one again.
  for (int attempt = 0; sqe == nullptr; ++attempt) {
    ++full_flushes_;
    // With SQPOLL this only wakes the poller if it sleeps
    // (IORING_SQ_NEED_WAKEUP, handled by liburing); it consumes the entries
    // on its own time, so wait until it has made room.
    const int rc = io_uring_submit(&ring_);
    if (rc < 0 && rc != -EBUSY && rc != -EAGAIN && rc != -EINTR) {
      std::fprintf(stderr, "ringhttp: io_uring_submit failed while flushing a full SQ: %s\n", std::strerror(-rc));
      std::abort();
    }
    if (sqpoll_) (void)io_uring_sqring_wait(&ring_);
    sqe = io_uring_get_sqe(&ring_);
    if (attempt > 1000000) {
      std::fprintf(stderr, "ringhttp: submission queue stays full\n");
      std::abort();
    }
  }
  return sqe;
}

std::uint32_t Ring::submit_and_reap(std::span<Completion> out) {
  assert(initialized_);
  int rc;
  do {
    rc = wait_us_ > 0 ? submit_and_wait_min(ring_, wait_batch_, wait_us_, nullptr)
                   : io_uring_submit_and_wait(&ring_, 1);
  } while (rc == -EINTR);
  check_wait(rc);
  return reap(out);
}

std::uint32_t Ring::submit_and_reap(std::span<Completion> out, __kernel_timespec timeout) {
  assert(initialized_);
  io_uring_cqe* cqe = nullptr;
  // A deadline nearer than the batch's wait ends it: the kernel would
  // otherwise wait min_wait_us whatever the timeout.
  const std::int64_t timeout_us = std::int64_t(timeout.tv_sec) * 1'000'000 + timeout.tv_nsec / 1000;
  const std::uint32_t min_us = timeout_us < std::int64_t(wait_us_) ? std::uint32_t(timeout_us) : wait_us_;
  int rc;
  do {
    rc = min_us > 0 ? submit_and_wait_min(ring_, wait_batch_, min_us, &timeout)
                                 : io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &timeout, nullptr);
  } while (rc == -EINTR);
  check_wait(rc);
  return reap(out);
}

void Ring::check_wait(int rc) {
  if (rc < 0 && rc != -EBUSY && rc != -EAGAIN && rc != -ETIME) {
    std::fprintf(stderr, "ringhttp: io_uring_submit_and_wait failed: %s\n", std::strerror(-rc));
    std::abort();
  }
}

std::uint32_t Ring::reap(std::span<Completion> out) {
  assert(!out.empty());
  io_uring_cqe* cqes[reap_batch_max];
  const std::uint32_t want = out.size() < reap_batch_max ? std::uint32_t(out.size()) : reap_batch_max;
  const std::uint32_t count = io_uring_peek_batch_cqe(&ring_, cqes, want);
  for (std::uint32_t i = 0; i < count; ++i) {
    out[i] = Completion{cqes[i]->user_data, cqes[i]->res, cqes[i]->flags};
  }
  io_uring_cq_advance(&ring_, count);
  return count;
}

}  // namespace ringhttp::uring
