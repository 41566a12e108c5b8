// How a sampling profile splits time between user space and the kernel on
// this machine, against a program whose split is known by the clock: it
// spins in user space for SPIN_NS, then makes ten getppid() calls, over
// and over for SECONDS, and prints the share of its time in the spin (by
// CLOCK_MONOTONIC) beside what the kernel's own accounting (utime, stime)
// says. tools/profile_calibrate.sh runs it under perf too.
// Usage: profile_calibrate SPIN_NS SECONDS
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc != 3 || atoll(argv[1]) < 0 || atoi(argv[2]) <= 0) {
    fprintf(stderr, "usage: profile_calibrate SPIN_NS SECONDS\n");
    return 2;
  }
  const long long spin_ns = atoll(argv[1]);
  const long long run_ns = atoll(argv[2]) * 1000000000LL;
  struct tms before, after;
  times(&before);
  long long user_ns = 0, calls_ns = 0, rounds = 0;
  for (const long long start = now_ns(); now_ns() - start < run_ns; ++rounds) {
    const long long t0 = now_ns();
    while (now_ns() - t0 < spin_ns) {
    }
    const long long t1 = now_ns();
    for (int i = 0; i < 10; ++i) syscall(SYS_getppid);
    const long long t2 = now_ns();
    user_ns += t1 - t0;
    calls_ns += t2 - t1;
  }
  times(&after);
  const long utime = (long)(after.tms_utime - before.tms_utime);
  const long stime = (long)(after.tms_stime - before.tms_stime);
  printf("spin %lld ns, then 10 getppid (%.0f ns): user space %.1f%% by the clock; utime %ld, stime %ld ticks: %.1f%%\n",
         spin_ns, rounds ? (double)calls_ns / rounds : 0.0, 100.0 * user_ns / (user_ns + calls_ns), utime, stime,
         utime + stime ? 100.0 * utime / (utime + stime) : 0.0);
  return 0;
}
