#include "client/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <latch>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "client/intervals.hpp"
#include "client/load/clock.hpp"
#include "client/load/request.hpp"
#include "client/load/worker.hpp"
#include "client/prechecks.hpp"
#include "client/results/cpu_time.hpp"
#include "client/results/hgrm.hpp"
#include "client/results/report.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::client {
namespace {

constexpr std::uint64_t progress_interval_ns = 1'000'000'000;
// -n runs end when the workers do; the main thread looks this often (and,
// in a timed run, for workers that all gave up early, less often).
constexpr std::uint64_t finish_poll_ns = 5'000'000;
constexpr std::uint64_t timed_finish_poll_ns = 100'000'000;

std::vector<WorkerPlan> make_plans(const Options& options) {
  // This process's share (--shard; all of it without), spread evenly over
  // its threads, the first taking the remainder; connections keep their
  // global indices, which place them in the rate schedule.
  const ShardShare share = shard_share(options);
  std::vector<WorkerPlan> plans(options.threads);
  std::uint32_t first = share.first_connection;
  for (std::uint32_t i = 0; i < options.threads; ++i) {
    WorkerPlan& p = plans[i];
    p.index = int(i);
    p.cpu = options.cpus[i];
    p.connections = share.connections / options.threads + (i < share.connections % options.threads ? 1 : 0);
    p.first_global_connection = first;
    first += p.connections;
    if (share.requests > 0) {
      p.requests = share.requests / options.threads + (i < share.requests % options.threads ? 1 : 0);
    }
  }
  return plans;
}

// The wall-clock time (Unix seconds) of a monotonic instant: both clocks
// read together, the difference carried back.
double unix_time_of(std::uint64_t monotonic_at_ns) {
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  const std::uint64_t now_ns = monotonic_ns();
  const double wall_s = double(wall.tv_sec) + double(wall.tv_nsec) / 1e9;
  return wall_s - (double(now_ns) - double(monotonic_at_ns)) / 1e9;
}

// Waits until `deadline_ns` (monotonic) or a blocked SIGINT/SIGTERM,
// whichever comes first. Returns true on the signal.
bool wait_for_signal_until(const sigset_t& signals, std::uint64_t deadline_ns) {
  for (;;) {
    const std::uint64_t now = monotonic_ns();
    if (now >= deadline_ns) return false;
    const std::uint64_t left = deadline_ns - now;
    timespec timeout{time_t(left / 1'000'000'000), long(left % 1'000'000'000)};
    const int rc = sigtimedwait(&signals, nullptr, &timeout);
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR && errno != EAGAIN) return false;
  }
}

// The live line on stderr, once a second while the window is open: the
// rate since the last line and the errors so far.
class Progress {
 public:
  explicit Progress(bool enabled) : enabled_(enabled) {}
  void show(std::uint64_t elapsed_ns, const std::vector<std::unique_ptr<WorkerBase>>& workers) {
    if (!enabled_) return;
    std::uint64_t responses = 0;
    std::uint64_t errors = 0;
    for (const auto& w : workers) {
      responses += w->live().responses.read();
      errors += w->live().errors.read();
    }
    const double rate =
        elapsed_ns > last_ns_ ? double(responses - last_responses_) * 1e9 / double(elapsed_ns - last_ns_) : 0;
    std::fprintf(stderr, "\r\033[K  %6.1fs  %12.0f req/s  %" PRIu64 " errors", double(elapsed_ns) / 1e9, rate, errors);
    std::fflush(stderr);
    last_ns_ = elapsed_ns;
    last_responses_ = responses;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fputs("\r\033[K", stderr);
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::uint64_t last_ns_ = 0;
  std::uint64_t last_responses_ = 0;
};

// io_uring's features on this kernel, cut to those the options ask for;
// nullopt (after saying why) when io_uring cannot be probed at all.
std::optional<uring::Features> probe_features(const Options& options) {
  uring::Features kernel;
  try {
    kernel = uring::probe_kernel();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "client: %s\n", e.what());
    return std::nullopt;
  }
  uring::Features features = kernel.intersect(options.wanted_features);
  if (const std::string note = uring::unavailable_note(options.wanted_features, kernel); !note.empty()) {
    std::fprintf(stderr, "client: %s\n", note.c_str());
  }
  features.multishot_accept = false;  // the client accepts nothing: do not report it as in use
  return features;
}

// SIGINT/SIGTERM end the run early with a report of what was measured:
// blocked here (the workers inherit the mask) and taken by the main thread.
// Returns the set, for the main thread's waits.
sigset_t block_stop_signals() {
  signal(SIGPIPE, SIG_IGN);  // sends pass MSG_NOSIGNAL too; this covers anything else
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// --start-at: wait for the shared instant (interruptible), which then is
// the warm-up's start: every process's schedule and window line up. Sets
// `start_ns` (monotonic), now without --start-at. Returns the exit status
// when the run ends here, after saying why.
std::optional<int> wait_for_start_at(const Options& options, const sigset_t& stop_signals, std::uint64_t& start_ns) {
  start_ns = monotonic_ns();
  if (options.start_at_unix_ns == 0) return std::nullopt;
  timespec wall{};
  clock_gettime(CLOCK_REALTIME, &wall);
  const std::int64_t ahead_ns = options.start_at_unix_ns - (std::int64_t(wall.tv_sec) * 1'000'000'000 + wall.tv_nsec);
  if (ahead_ns < 0) {
    std::fprintf(stderr, "client: --start-at is %.3f s in the past\n", double(-ahead_ns) / 1e9);
    return 2;
  }
  start_ns += std::uint64_t(ahead_ns);
  if (wait_for_signal_until(stop_signals, start_ns)) {
    std::fprintf(stderr, "client: interrupted before --start-at: nothing was measured\n");
    return 1;
  }
  return std::nullopt;
}

// The run's instants: warm-up from `start_ns`, then the measured window,
// which a timed run ends at its deadline (-n alone: when the work is done).
Timeline make_timeline(const Options& options, std::uint64_t start_ns) {
  Timeline timeline;
  timeline.start_ns = start_ns;
  timeline.measure_ns = timeline.start_ns + options.warmup_ns;
  if (options.timed()) timeline.end_ns = timeline.measure_ns + options.duration_ns;
  return timeline;
}

// Makes and starts one worker per thread, and waits until each has set up
// its ring and connections. A worker that could not set up ends the process
// with status 1 at once.
std::vector<std::unique_ptr<WorkerBase>> start_workers(const Options& options, const RequestBytes& request,
                                                       const uring::Features& features, std::uint32_t first_address,
                                                       const Timeline& timeline) {
  std::vector<std::unique_ptr<WorkerBase>> workers;
  for (WorkerPlan& plan : make_plans(options)) {
    plan.first_address = first_address;
    workers.push_back(make_worker(options, request, features, plan));
  }
  std::latch ready{std::ptrdiff_t(workers.size())};
  for (auto& w : workers) w->start(timeline, ready);
  ready.wait();
  for (auto& w : workers) {
    if (!w->error().empty()) {
      std::fprintf(stderr, "client: %s\n", w->error().c_str());
      // The others stop at the end of the run; do not wait that long.
      std::_Exit(1);
    }
  }
  return workers;
}

// Where the measured window opens. Without warm-up (-n), now that every
// worker is set up: ring creation and the first connects are not part of
// it. In rate mode it opens where the schedule does, whatever the set-up
// took: requests due meanwhile leave late, are timed from when they were
// due, and the window holds them all, so the rate over it is never above
// the rate asked for (two processes with --start-at line up to the
// schedule's start, not to their own set-up).
std::uint64_t window_start_of(const Options& options, const Timeline& timeline) {
  return options.rate > 0 ? timeline.measure_ns : std::max(timeline.measure_ns, monotonic_ns());
}

// Waits out the warm-up. On a stop signal it stops and joins the workers,
// says that nothing was measured and returns false.
bool wait_out_warmup(const sigset_t& stop_signals, const Timeline& timeline,
                     const std::vector<std::unique_ptr<WorkerBase>>& workers) {
  if (!wait_for_signal_until(stop_signals, timeline.measure_ns)) return true;
  for (auto& w : workers) w->request_stop();
  for (auto& w : workers) w->join();
  std::fprintf(stderr, "client: interrupted during the warm-up: nothing was measured\n");
  return false;
}

// The measured window, and the CPU time spent over it.
struct Window {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  double start_unix_s = 0;
  bool interrupted = false;
  std::uint64_t client_cpu_ns = 0;
  std::optional<std::uint64_t> server_cpu_ns;  // with --server-pid, when /proc could be read at both edges
};

// From the window's start: samples CPU time, shows progress to a person
// watching, and waits for the window's end (the deadline of a timed run,
// the last worker finishing its share of -n, or a stop signal, whichever
// comes first). Samples CPU time again, then joins the workers.
Window measure_window(const Options& options, const Timeline& timeline, std::uint64_t window_start_ns,
                      const sigset_t& stop_signals, const std::vector<std::unique_ptr<WorkerBase>>& workers) {
  Window window;
  window.start_ns = window_start_ns;
  // Only for a person watching: never in a pipe, a file or a CI log.
  Progress progress(::isatty(STDERR_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1);
  const std::uint64_t client_cpu_start = process_cpu_ns();
  // Wall-clock time only labels the window (--hdr-log, the report that
  // merge lines up with others); nothing is measured with it. It is the
  // window's own start, not this thread's late wake-up after it.
  window.start_unix_s = unix_time_of(window_start_ns);
  const std::optional<std::uint64_t> server_cpu_start =
      options.server_pid != 0 ? other_process_cpu_ns(options.server_pid) : std::nullopt;
  std::uint64_t next_progress_ns = window_start_ns + progress_interval_ns;
  for (;;) {
    bool all_finished = true;
    for (auto& w : workers) all_finished = all_finished && w->finished();
    const std::uint64_t now = monotonic_ns();
    if (all_finished || now >= timeline.end_ns) {
      window.end_ns = std::min(now, timeline.end_ns);
      break;
    }
    if (now >= next_progress_ns) {
      progress.show(now - window_start_ns, workers);
      next_progress_ns += progress_interval_ns;
    }
    const std::uint64_t wake_ns =
        std::min({timeline.end_ns, next_progress_ns, now + (options.timed() ? timed_finish_poll_ns : finish_poll_ns)});
    if (wait_for_signal_until(stop_signals, wake_ns)) {
      window.interrupted = true;
      window.end_ns = monotonic_ns();
      for (auto& w : workers) w->request_stop();
      break;
    }
  }
  const std::uint64_t client_cpu_end = process_cpu_ns();
  const std::optional<std::uint64_t> server_cpu_end =
      options.server_pid != 0 ? other_process_cpu_ns(options.server_pid) : std::nullopt;
  for (auto& w : workers) w->join();
  progress.clear();
  window.client_cpu_ns = client_cpu_end - client_cpu_start;
  if (server_cpu_start && server_cpu_end) window.server_cpu_ns = *server_cpu_end - *server_cpu_start;
  return window;
}

// The report of the run: the machine, the window, and the workers' figures
// merged, with a note for each thing that makes them less than whole.
Report make_report(const Options& options, const uring::Features& features, const Window& window,
                   const std::vector<std::unique_ptr<WorkerBase>>& workers) {
  Report report;
  report.environment = describe_environment(features.describe());
  report.options = &options;
  report.window_ns = window.end_ns - window.start_ns;
  report.interrupted = window.interrupted;
  report.client_cpu_ns = window.client_cpu_ns;
  report.window_start_unix_s = window.start_unix_s;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) report.host = host;
  report.server_cpu_ns = window.server_cpu_ns;
  if (options.server_pid != 0 && !report.server_cpu_ns)
    report.notes.push_back("the server process could not be read at the window's end");
  for (auto& w : workers) {
    report.totals.merge(w->stats());
    if (!w->gave_up().empty()) report.notes.push_back("a worker gave up: " + w->gave_up());
    if (report.tls_protocol.empty()) {
      report.tls_protocol = w->tls_protocol();
      report.tls_cipher = w->tls_cipher();
    }
  }
  if (report.totals.responses == 0) report.notes.push_back("no response was received in the measured window");
  return report;
}

// Prints the report (text; with --json the text goes to stderr and the JSON
// to stdout), then writes --hdr-out and --hdr-log. Returns false, after
// saying why, when a file cannot be written.
bool write_outputs(const Options& options, const Report& report, double window_start_unix_s,
                   const std::vector<IntervalLine>& lines) {
  const std::string text = format_text(report);
  std::fputs(text.c_str(), options.json ? stderr : stdout);
  if (options.json) std::fputs(format_json(report).c_str(), stdout);
  if (!options.hdr_out.empty()) {
    if (const std::string error = write_hgrm_file(options.hdr_out, report.totals.latency); !error.empty()) {
      std::fprintf(stderr, "client: %s\n", error.c_str());
      return false;
    }
  }
  if (!options.hdr_log.empty()) {
    if (const std::string error = write_interval_log(options.hdr_log, options, window_start_unix_s, lines);
        !error.empty()) {
      std::fprintf(stderr, "client: %s\n", error.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int run(const Options& options) {
  const std::optional<uring::Features> features = probe_features(options);
  if (!features) return 1;
  std::uint32_t first_address = 0;
  if (const std::optional<int> status = check_before_start(options, first_address)) return *status;
  const sigset_t stop_signals = block_stop_signals();
  std::uint64_t start_ns = 0;
  if (const std::optional<int> status = wait_for_start_at(options, stop_signals, start_ns)) return *status;

  const RequestBytes request(options);  // the workers send from it until they are joined
  const Timeline timeline = make_timeline(options, start_ns);
  const std::vector<std::unique_ptr<WorkerBase>> workers =
      start_workers(options, request, *features, first_address, timeline);
  const std::uint64_t window_start_ns = window_start_of(options, timeline);
  if (!wait_out_warmup(stop_signals, timeline, workers)) return 1;
  const Window window = measure_window(options, timeline, window_start_ns, stop_signals, workers);

  Report report = make_report(options, *features, window, workers);
  std::vector<IntervalLine> lines;
  if (options.keeps_intervals()) lines = interval_lines(window.start_ns, timeline, window.end_ns, workers);
  if (options.threshold_interval_ns > 0) report.interval_failures = judge_intervals(options, lines);
  if (!write_outputs(options, report, window.start_unix_s, lines)) return 1;
  if (report.failed()) return 1;
  return report.thresholds_met() ? 0 : 3;
}

}  // namespace ringhttp::client
