#include "support/hostile_session.hpp"

#include <sys/types.h>

#include <cctype>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "support/certificates.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/proc_file.hpp"
#include "support/proc_state.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"

namespace socket_test::hostile {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Failures printed in full; the rest are listed by connection.
constexpr std::size_t failures_in_full_max = 3;
// The server's tick (server/shard.hpp): timeouts are checked this often.
constexpr auto server_tick = 100ms;

// The server's TLS counters (server/counters.cpp).
const std::string tls_handshakes_full = "ringhttp_tls_handshakes_total";
const std::string tls_handshakes_resumed = "ringhttp_tls_handshakes_resumed_total";
const std::string tls_handshakes_failed_prefix = "ringhttp_tls_handshakes_failed_total{reason=\"";
const std::string tls_handshakes_closed = tls_handshakes_failed_prefix + "closed\"}";
const std::string tls_handshakes_in_progress = "ringhttp_tls_handshakes_in_progress";
const std::string tls_failures = "ringhttp_tls_failures_total";
const std::string tls_plaintext_in = "ringhttp_tls_plaintext_bytes_total{direction=\"in\"}";
const std::string tls_plaintext_out = "ringhttp_tls_plaintext_bytes_total{direction=\"out\"}";

// Alive: it exists and is not a zombie (a crashed child of this process is
// a zombie until reaped, and kill(pid, 0) still succeeds on it).
bool is_alive(pid_t pid) {
  const std::string text = read_proc_file("/proc/" + std::to_string(pid) + "/stat");
  const auto paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  const char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

std::uint64_t resident_bytes(pid_t pid) {
  std::istringstream status(read_proc_file("/proc/" + std::to_string(pid) + "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// /metrics scrapes, counted: on the server's main port each one is a
// connection and a request of its own, which the deltas the driver checks
// must allow for exactly. On a metrics address of its own (over HTTPS)
// they count nowhere.
class Scraper {
 public:
  explicit Scraper(const ServerProcess& server)
      : port_(server.metrics_port().value_or(server.port())), on_main_port_(!server.metrics_port()) {}
  Metrics scrape() {
    if (on_main_port_) ++count_;
    return scrape_metrics(port_);
  }
  // Scrapes on the main port since the last call.
  std::uint64_t take_count() { return std::exchange(count_, 0); }
  // ringhttp_connections_active while a scrape is served: 1 on the main port.
  double active_while_scraping() const { return on_main_port_ ? 1 : 0; }

 private:
  std::uint16_t port_;
  bool on_main_port_;
  std::uint64_t count_ = 0;
};

std::uint64_t count_of(const std::map<int, std::uint64_t>& m, int k) {
  const auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}
std::uint64_t count_of(const std::map<std::string, std::uint64_t>& m, const std::string& k) {
  const auto it = m.find(k);
  return it == m.end() ? 0 : it->second;
}

// The TLS counters, against what the driver saw (see Tally): over plain
// HTTP none moves. Over HTTPS each connection's handshake ends exactly once
// for the server: complete (full or resumed, as the driver saw it), or
// failed as "closed" where the driver closed first; no other reason, since
// the driver offers what the server accepts and handshakes at once. Every
// plaintext byte the server read, the driver sent in a whole record, and
// every one the driver decrypted, the server encrypted.
template <typename Expect>
void compare_tls_metrics(const Metrics& before, const Metrics& after, const Tally& t, bool tls, const Expect& expect,
                         std::vector<std::string>& wrong) {
  const auto delta = [&](const std::string& name) { return after.value(name) - before.value(name); };
  double ended = delta(tls_handshakes_full) + delta(tls_handshakes_resumed);
  for (const auto& [name, value] : after.series) {
    if (name.rfind(tls_handshakes_failed_prefix, 0) != 0) continue;
    ended += value - before.value(name);
    if (name != tls_handshakes_closed) expect(name, 0, 0);
  }
  expect(tls_failures, 0, 0);
  if (after.value(tls_handshakes_in_progress) != 0) {
    wrong.push_back("/metrics: " + tls_handshakes_in_progress + " is " +
                    std::to_string(after.value(tls_handshakes_in_progress)) + " with every connection closed");
  }
  if (!tls) {
    for (const std::string& name :
         {tls_handshakes_full, tls_handshakes_resumed, tls_handshakes_closed, tls_plaintext_in, tls_plaintext_out}) {
      expect(name, 0, 0);
    }
    return;
  }
  expect(tls_handshakes_full, t.tls_full_seen, t.tls_full_seen + t.tls_full_unsure);
  expect(tls_handshakes_resumed, t.tls_resumed_seen, t.tls_resumed_seen + t.tls_resumed_unsure);
  expect(tls_handshakes_closed, t.tls_unfinished, t.tls_unfinished + t.tls_full_unsure + t.tls_resumed_unsure);
  if (ended != double(t.connections)) {
    wrong.push_back("/metrics: " + std::to_string(std::uint64_t(ended)) + " TLS handshakes ended (" +
                    tls_handshakes_full + ", " + tls_handshakes_resumed + " and " + tls_handshakes_failed_prefix +
                    "...} together) for " + std::to_string(t.connections) + " connections");
  }
  if (delta(tls_plaintext_in) > double(t.plaintext_sent)) {
    wrong.push_back("/metrics: " + tls_plaintext_in + " went up by " +
                    std::to_string(std::uint64_t(delta(tls_plaintext_in))) +
                    ", more than the driver sent in whole records (" + std::to_string(t.plaintext_sent) + ")");
  }
  if (delta(tls_plaintext_out) < double(t.plaintext_received)) {
    wrong.push_back("/metrics: " + tls_plaintext_out + " went up by " +
                    std::to_string(std::uint64_t(delta(tls_plaintext_out))) + ", less than the driver decrypted (" +
                    std::to_string(t.plaintext_received) + ")");
  }
}

// What /metrics says happened between `before` and `after`, against what
// the driver saw. `scrapes`: scrapes after `before`, `after` included; each
// is one accepted connection and one request, and each but `after` one
// closed connection and one 200 (a scrape's own response is counted after
// it is rendered); `before`'s own 200 and close fall in between too.
std::vector<std::string> compare_metrics(const Metrics& before, const Metrics& after, const Tally& t,
                                         std::uint64_t scrapes, double active_while_scraping, bool tls) {
  std::vector<std::string> wrong;
  const auto delta = [&](const std::string& name) { return after.value(name) - before.value(name); };
  const auto expect = [&](const std::string& name, std::uint64_t lo, std::uint64_t hi) {
    const double d = delta(name);
    if (d >= double(lo) && d <= double(hi)) return;
    std::string message = "/metrics: " + name + " went up by " + std::to_string(std::uint64_t(d)) + "; the driver";
    message += lo == hi ? " expects exactly " + std::to_string(lo)
                        : " expects " + std::to_string(lo) + " to " + std::to_string(hi) +
                              " (the upper bound counts requests sent whole on connections reset before their answer)";
    wrong.push_back(message);
  };
  expect(metric::requests, t.routed_seen + scrapes, t.routed_seen + t.routed_unsure + scrapes);
  expect(metric::accepted, t.connections + scrapes, t.connections + scrapes);
  expect(metric::closed, t.connections + scrapes, t.connections + scrapes);
  // Every status the server counted, and every status the driver saw.
  std::set<int> statuses;
  for (const auto& [status, n] : t.status_seen) statuses.insert(status);
  for (const auto& [status, n] : t.status_unsure) statuses.insert(status);
  const std::string prefix = "ringhttp_responses_total{status=\"";
  for (const auto& [name, value] : after.series) {
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string label = name.substr(prefix.size());
    if (label.empty() || !std::isdigit(static_cast<unsigned char>(label[0]))) {
      if (value != before.value(name))
        wrong.push_back("/metrics: " + name + " went up (a status the driver never saw)");
      continue;
    }
    statuses.insert(std::stoi(label));
  }
  for (const int status : statuses) {
    const std::uint64_t lo = count_of(t.status_seen, status) + (status == 200 ? scrapes : 0);
    expect(metric::responses(status), lo, lo + count_of(t.status_unsure, status));
  }
  // Refusals by kind. A refusal the model cannot name the kind of ("*":
  // which of its kinds the server files a bare CR under is its own choice)
  // may be under any kind; all of them together are exact.
  const std::uint64_t any_kind =
      count_of(t.refusal_seen, any_parse_error) + count_of(t.refusal_unsure, any_parse_error);
  std::uint64_t all_lo = 0;
  std::uint64_t all_hi = 0;
  const std::string parse_errors_prefix = "ringhttp_parse_errors_total{kind=\"";
  double all_delta = 0;
  for (const auto& [name, value] : after.series) {
    if (name.rfind(parse_errors_prefix, 0) != 0) continue;
    all_delta += value - before.value(name);
    const std::string kind = name.substr(parse_errors_prefix.size(), name.size() - parse_errors_prefix.size() - 2);
    const std::uint64_t lo = count_of(t.refusal_seen, kind);
    expect(name, lo, lo + count_of(t.refusal_unsure, kind) + any_kind);
  }
  for (const auto& [kind, n] : t.refusal_seen) {
    if (kind != timeout_refusal) all_lo += n;
  }
  for (const auto& [kind, n] : t.refusal_unsure) {
    if (kind != timeout_refusal) all_hi += n;
  }
  all_hi += all_lo;
  if (all_delta < double(all_lo) || all_delta > double(all_hi)) {
    wrong.push_back("/metrics: ringhttp_parse_errors_total{...} went up by " +
                    std::to_string(std::uint64_t(all_delta)) + " in all; the driver saw " + std::to_string(all_lo) +
                    " refusals by the parser" +
                    (all_hi > all_lo ? " (and up to " + std::to_string(all_hi) + " with those it cannot know about)"
                                     : std::string()));
  }
  const std::uint64_t timeouts_lo = count_of(t.refusal_seen, timeout_refusal);
  expect(metric::timeouts(timeout_refusal), timeouts_lo, timeouts_lo + count_of(t.refusal_unsure, timeout_refusal));
  expect(metric::timeouts("idle"), t.idle_timeouts, t.idle_timeouts);
  // What none of the driver's clients may cause.
  for (const std::string& name : {metric::timeouts("body"), metric::timeouts("send"), metric::stale_completions,
                                  std::string("ringhttp_input_overflow_total"), metric::accept_errors("fd_limit"),
                                  metric::accept_errors("table_full"), metric::accept_errors("other")}) {
    expect(name, 0, 0);
  }
  // Every byte the driver received, the server sent; the server received
  // no more than the driver and the scrapes sent (less where the driver
  // reset, or wrote on after a refusal). Over TLS these are ciphertext,
  // the handshakes' included.
  if (delta(metric::bytes_sent) < double(t.bytes_received)) {
    wrong.push_back("/metrics: " + metric::bytes_sent + " went up by " +
                    std::to_string(std::uint64_t(delta(metric::bytes_sent))) + ", less than the driver received (" +
                    std::to_string(t.bytes_received) + ")");
  }
  const std::uint64_t scrape_bytes = get("/metrics", "Connection: close\r\n").size();
  if (delta(metric::bytes_received) > double(t.bytes_sent + scrapes * scrape_bytes)) {
    wrong.push_back("/metrics: " + metric::bytes_received + " went up by " +
                    std::to_string(std::uint64_t(delta(metric::bytes_received))) + ", more than was sent (" +
                    std::to_string(t.bytes_sent + scrapes * scrape_bytes) + ")");
  }
  if (after.value(metric::active) != active_while_scraping) {
    wrong.push_back("/metrics: " + metric::active + " is " + std::to_string(after.value(metric::active)) +
                    " with only the scrape connected");
  }
  compare_tls_metrics(before, after, t, tls, expect, wrong);
  return wrong;
}

// The counters that show which of the server's edge paths a round took
// (short sends: a client stopped reading; receives without a buffer: held
// input ran the buffer ring dry; cancellations: resets), for the log.
std::string paths_taken(const Metrics& before, const Metrics& after) {
  std::string out;
  for (const std::string& name :
       {metric::sends_short, std::string("ringhttp_recv_no_buffers_total"), metric::cancellations, metric::sends}) {
    if (!out.empty()) out += ", ";
    out += name + " +" + std::to_string(std::uint64_t(after.value(name) - before.value(name)));
  }
  return out;
}

// The failures of one round: the first few in full, the rest by connection.
void add_round_failures(const RoundReport& round, std::uint32_t number, std::vector<std::string>& failures) {
  for (std::size_t i = 0; i < round.failures.size() && i < failures_in_full_max; ++i) {
    failures.push_back("round " + std::to_string(number) + ": " + round.failures[i].message);
  }
  if (round.failures.size() > failures_in_full_max) {
    std::string rest = "round " + std::to_string(number) + ": " +
                       std::to_string(round.failures.size() - failures_in_full_max) + " more connections failed:";
    for (std::size_t i = failures_in_full_max; i < round.failures.size(); ++i) {
      const std::string& m = round.failures[i].message;
      rest += "\n  " + m.substr(0, m.find('\n'));
    }
    failures.push_back(rest);
  }
}

// Whether these connections' scripts, run together on a fresh server,
// kill it; and the first failure they see.
struct Replay {
  bool died = false;
  std::string exit;     // how the server ended, when it died
  std::string failure;  // the first line of the first failure, if any
};

Replay replay(const SessionOptions& options, std::vector<std::uint32_t> connections) {
  DriverOptions driver = options.driver;
  driver.concurrency = std::uint32_t(connections.size());
  driver.only_connections = std::move(connections);
  Replay result;
  ServerProcess server(server_args(options));
  const RoundReport round = run_round(server.port(), driver);
  // A pause for an abort in flight to land, so that the replay names the
  // death; not synchronisation: a server that dies later still fails the
  // replay (its connections fail), only with a less direct message.
  std::this_thread::sleep_for(server_tick);
  result.died = !is_alive(server.pid());
  if (result.died) result.exit = server.wait_exit(1s).describe();
  if (!round.failures.empty()) {
    const std::string& m = round.failures.front().message;
    result.failure = m.substr(0, m.find('\n'));
  }
  return result;
}

// The server died with these connections failing: halves them while one
// half alone still kills a fresh server, down to one connection if it can.
std::string bisect_crash(const SessionOptions& options, std::vector<std::uint32_t> set, Clock::time_point until) {
  const Replay all = replay(options, set);
  if (!all.died) {
    return "the " + std::to_string(set.size()) +
           " failing connections replayed together did not kill a fresh server (timing, or connections that had "
           "ended already)";
  }
  std::size_t replays = 1;
  std::string exit = all.exit;
  while (set.size() > 1 && Clock::now() < until) {
    const std::vector<std::uint32_t> first(set.begin(), set.begin() + std::ptrdiff_t(set.size() / 2));
    const std::vector<std::uint32_t> second(set.begin() + std::ptrdiff_t(set.size() / 2), set.end());
    ++replays;
    if (const Replay r = replay(options, first); r.died) {
      set = first;
      exit = r.exit;
      continue;
    }
    ++replays;
    if (const Replay r = replay(options, second); r.died) {
      set = second;
      exit = r.exit;
      continue;
    }
    break;  // it takes connections from both halves
  }
  std::string out = "replayed on fresh servers (" + std::to_string(replays) + " replays): ";
  if (set.size() == 1) {
    out += "connection " + std::to_string(set.front()) + " alone kills the server (it " + exit + "):\n" +
           describe(generate_script(options.driver.seed, set.front(), options.driver.script));
    return out;
  }
  out += "these " + std::to_string(set.size()) + " connections together kill the server (it " + exit + "):";
  for (const std::uint32_t c : set) out += " " + std::to_string(c);
  return out;
}

// Replays failing connections one at a time, each on a fresh server, and
// says which fail alone: the smallest reproduction the driver can give.
std::string replay_each(const SessionOptions& options, const std::vector<std::uint32_t>& set, Clock::time_point until) {
  std::string found;
  std::size_t replays = 0;
  for (const std::uint32_t c : set) {
    if (replays >= options.replays_max || Clock::now() >= until) break;
    ++replays;
    const Replay r = replay(options, {c});
    if (!r.died && r.failure.empty()) continue;
    found += "\n  connection " + std::to_string(c) +
             " alone: " + (r.died ? "the server died (it " + r.exit + "); " : "") + r.failure;
  }
  return "replayed " + std::to_string(replays) + " failing connections alone, each on a fresh server: " +
         (found.empty() ? std::string("none fails alone (the failure needs the others)") : found);
}

void add_replays(const SessionOptions& options, const std::vector<Failure>& failed, bool server_died,
                 std::vector<std::string>& failures) {
  if (options.replays_max == 0 || failed.empty()) return;
  std::set<std::uint32_t> unique;
  for (const Failure& f : failed) unique.insert(f.connection);
  const std::vector<std::uint32_t> set(unique.begin(), unique.end());
  const Clock::time_point until = Clock::now() + options.replay_ms_max;
  try {
    failures.push_back(server_died ? bisect_crash(options, set, until) : replay_each(options, set, until));
  } catch (const std::exception& e) {
    failures.push_back(std::string("replaying the failing connections failed: ") + e.what());
  }
}

}  // namespace

std::vector<std::string> server_args(const SessionOptions& options) {
  std::vector<std::string> tls_args;
  if (options.driver.tls && !options.tls_cert_file.empty()) {
    // The handshake's deadline runs from the accept, and the driver
    // handshakes at once, before its script: it must never fire, so it is
    // past the driver's stall limit, and a handshake that slow is reported
    // by the driver itself. By default it would be the header timeout,
    // which the driver's own loop can outlast under a sanitizer (a
    // connection reading a long stream delays the others by a second or
    // two); the header timeout still starts at a request's first byte.
    const auto handshake_timeout = options.driver.stall_ms_max + 1s;
    tls_args = {"--tls-cert",
                options.tls_cert_file,
                "--tls-key",
                options.tls_key_file,
                "--tls-handshake-timeout-ms",
                std::to_string(handshake_timeout.count()),
                "--metrics-address",
                "127.0.0.1:0"};
  }
  std::vector<std::string> args{"--shards",
                                "1",
                                "--header-bytes-max",
                                std::to_string(options.driver.script.header_bytes_max),
                                "--body-bytes-max",
                                std::to_string(options.driver.script.body_bytes_max),
                                "--header-timeout-ms",
                                std::to_string(options.driver.header_timeout.count()),
                                "--idle-timeout-ms",
                                std::to_string(options.driver.idle_timeout.count()),
                                "--output-bytes-max",
                                std::to_string(options.output_bytes_max)};
  args.insert(args.end(), tls_args.begin(), tls_args.end());
  args.insert(args.end(), options.extra_server_args.begin(), options.extra_server_args.end());
  return args;
}

// Certificates made for an HTTPS session that names none. False (and a
// failure) when they could not be made.
bool make_certificates(SessionOptions& options, std::optional<TempCertificates>& certificates,
                       std::vector<std::string>& failures) {
  if (!options.driver.tls || !options.tls_cert_file.empty()) return true;
  try {
    certificates.emplace();
  } catch (const std::exception& e) {
    failures.push_back(std::string("certificates for the HTTPS server: ") + e.what());
    return false;
  }
  options.tls_cert_file = certificates->files().cert_file;
  options.tls_key_file = certificates->files().key_file;
  options.driver.tls_ca_file = certificates->files().ca_file;
  return true;
}

// What every round must leave as it found it on the server's side: its
// connections ended, its counters in step with the driver's tally, its
// descriptors, and (without a sanitizer) its resident memory within the
// growth allowed.
class RoundChecks {
 public:
  RoundChecks(const SessionOptions& options, ServerProcess& server, std::vector<std::string>& failures)
      : options_(options),
        server_(server),
        failures_(failures),
        pid_(server.pid()),
        // The start-up line names the malloc in use: libasan's under AddressSanitizer.
        sanitized_(server.startup_line().find("asan") != std::string::npos),
        descriptors_at_start_(open_descriptors(pid_)),
        scraper_(server) {
    before_ = scraper_.scrape();
    scraper_.take_count();
  }

  // After round `n`: false when the server died during it.
  bool check(std::uint32_t n, const RoundReport& round) {
    name_ = "round " + std::to_string(n);
    // A pause for an abort in flight to land, so that the report names the
    // death and its exit status; not synchronisation: a server that dies
    // after it fails the scrapes below, which throw, and the next round.
    std::this_thread::sleep_for(server_tick);
    if (!is_alive(pid_)) {
      failures_.push_back(name_ + ": the server died (it " + server_.wait_exit(1s).describe() +
                          "); its stderr, above, says why");
      return false;
    }
    check_metrics(round);
    check_resources();
    return true;
  }

 private:
  void log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  // Every connection the driver opened must end on the server's side too.
  void check_metrics(const RoundReport& round) {
    Metrics after;
    const bool settled = eventually(
        [&] {
          after = scraper_.scrape();
          return after.value(metric::active) == scraper_.active_while_scraping();
        },
        options_.settle_ms_max);
    if (!settled) {
      failures_.push_back(name_ + ": " + metric::active + " stays at " + std::to_string(after.value(metric::active)) +
                          (scraper_.active_while_scraping() == 1
                               ? " (1 is the scrape itself)"
                               : " (the scrapes go to a metrics address of their own)") +
                          " after " + std::to_string(options_.settle_ms_max.count()) + " ms");
    }
    log(name_ + ": the server's paths taken: " + paths_taken(before_, after));
    for (std::string& m : compare_metrics(before_, after, round.tally, scraper_.take_count(),
                                          scraper_.active_while_scraping(), options_.driver.tls)) {
      failures_.push_back(name_ + ": " + m);
    }
    before_ = after;
  }

  void check_resources() {
    std::size_t descriptors = 0;
    if (!eventually([&] { return (descriptors = open_descriptors(pid_)) == descriptors_at_start_; },
                    options_.settle_ms_max)) {
      failures_.push_back(name_ + ": the server has " + std::to_string(descriptors) + " descriptors open, " +
                          std::to_string(descriptors_at_start_) + " before the first round");
    }
    const std::uint64_t rss = resident_bytes(pid_);
    log(name_ + ": server RSS " + std::to_string(rss >> 10) + " KiB, " + std::to_string(descriptors) + " descriptors");
    if (!rss_after_first_) {
      rss_after_first_ = rss;
    } else if (sanitized_) {
      log(name_ + ": RSS growth not bounded: the server runs under AddressSanitizer, whose quarantine keeps freed memory");
    } else if (rss > *rss_after_first_ + options_.rss_growth_bytes_max) {
      failures_.push_back(name_ + ": the server's RSS grew from " + std::to_string(*rss_after_first_ >> 10) +
                          " KiB after round 1 to " + std::to_string(rss >> 10) + " KiB, over the " +
                          std::to_string(options_.rss_growth_bytes_max >> 10) +
                          " KiB allowed for the same round run again");
    }
  }

  const SessionOptions& options_;
  ServerProcess& server_;
  std::vector<std::string>& failures_;
  const pid_t pid_;
  const bool sanitized_;
  const std::size_t descriptors_at_start_;
  Scraper scraper_;
  Metrics before_;
  std::optional<std::uint64_t> rss_after_first_;
  std::string name_;
};

SessionReport run_session(const SessionOptions& given) {
  SessionReport report;
  auto& failures = report.failures;
  SessionOptions options = given;
  std::optional<TempCertificates> certificates;
  if (!make_certificates(options, certificates, failures)) return report;
  if (options.driver.stall_ms_max <
      std::max(options.driver.header_timeout, options.driver.idle_timeout) + server_tick + 1s) {
    failures.push_back("the driver's stall limit must exceed the server's header and idle timeouts by a second");
    return report;
  }
  ServerProcess server(server_args(options));
  RoundChecks checks(options, server, failures);
  std::vector<Failure> failed;
  for (std::uint32_t round_number = 1; round_number <= options.rounds; ++round_number) {
    const RoundReport round = run_round(server.port(), options.driver);
    if (options.log) {
      options.log("round " + std::to_string(round_number) + " (seed " + std::to_string(options.driver.seed) + ", " +
                  std::to_string(round.elapsed.count()) + " ms): " + round.tally.summary() + "; " +
                  std::to_string(round.failures.size()) + " connections failed");
    }
    add_round_failures(round, round_number, failures);
    failed.insert(failed.end(), round.failures.begin(), round.failures.end());
    if (!checks.check(round_number, round)) {
      report.server_died = true;
      break;
    }
  }
  if (!report.server_died) {
    const ExitStatus exit = server.stop(SIGTERM);
    if (!exit.exited_zero()) failures.push_back("on SIGTERM after the rounds the server " + exit.describe());
  }
  add_replays(options, failed, report.server_died, failures);
  return report;
}

}  // namespace socket_test::hostile
