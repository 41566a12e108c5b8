#include "core/uring/ring.hpp"

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
  // A registered ring fd saves an fdget/fdput per io_uring_enter; optional.
  (void)io_uring_register_ring_fd(&ring_);
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
    rc = io_uring_submit_and_wait(&ring_, 1);
  } while (rc == -EINTR);
  check_wait(rc);
  return reap(out);
}

std::uint32_t Ring::submit_and_reap(std::span<Completion> out, __kernel_timespec timeout) {
  assert(initialized_);
  io_uring_cqe* cqe = nullptr;
  int rc;
  do {
    rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &timeout, nullptr);
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
