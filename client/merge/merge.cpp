#include "client/merge/merge.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "client/options.hpp"
#include "client/results/hdr_log.hpp"
#include "client/results/hgrm.hpp"
#include "client/results/histogram.hpp"
#include "client/results/report.hpp"
#include "client/results/stats.hpp"
#include "client/results/threshold.hpp"

namespace ringhttp::client {
namespace {

// What `client merge` was asked for.
struct MergeOptions {
  bool json = false;
  std::string hdr_out;
  std::vector<Threshold> thresholds;
  std::uint64_t threshold_interval_ns = 0;
  std::vector<std::string> paths;  // the reports or logs
};

using MergeFlag = cli::Flag<MergeOptions>;
using cli::Kind;

const MergeFlag merge_flags[] = {
    {.name = "--json", .kind = Kind::toggle, .target = &MergeOptions::json,
     .help = "the merged report as one JSON object on stdout (text goes to stderr)"},
    {.name = "--hdr-out", .value = "FILE", .kind = Kind::text, .target = &MergeOptions::hdr_out,
     .accepts = "a file path", .help = "the merged latency distribution in HdrHistogram's .hgrm text format"},
    {.name = "--threshold", .value = "EXPR", .kind = Kind::custom,
     .target = MergeFlag::Store(store_threshold<MergeOptions>), .accepts = "as the client's --threshold",
     .help = "pass or fail, judged on the merged figures; one that fails makes the exit status 3",
     .repeatable = true},
    {.name = "--threshold-interval", .value = "T", .kind = Kind::custom,
     .target = MergeFlag::Store(store_threshold_interval<MergeOptions>), .accepts = "whole seconds, 1s or more",
     .help = "judge the latency, requests and rps thresholds in every T of the merged window too: logs only (a "
             "report holds its whole window, not its seconds)"},
    {.name = "--help", .kind = Kind::help, .help = "print this and exit"},
};

std::string finish_merge(MergeOptions& out, const cli::Given& given) {
  out.paths.assign(given.operands.begin(), given.operands.end());
  if (out.paths.empty()) return "no report given";
  if (out.threshold_interval_ns > 0 && out.thresholds.empty()) return "--threshold-interval without a --threshold";
  return {};
}

const cli::Program<MergeOptions> merge_program{
    .name = "client merge",
    .synopsis =
        "usage: client merge [--json] [--hdr-out FILE] [--threshold EXPR]... [--threshold-interval T] FILE...\n"
        "The --json reports of one run split with --shard I/N, or their --hdr-log interval logs, merged\n"
        "into one: latency percentiles exactly those of one histogram fed every value (histograms add),\n"
        "requests summed (and from reports bytes, errors and statuses), the rate over the window from the\n"
        "first start to the last end. Refused (exit 2): reports and logs mixed, reports (or logs) of\n"
        "different URLs or options, a shard twice, a missing shard. Exit 1 if any shard failed a request,\n"
        "3 if a --threshold failed.\n",
    .notes = "A log carries the latency only: thresholds on errors or statuses need the reports.\n",
    .flags = merge_flags,
    .takes_operands = true,
    .finish = finish_merge,
};

// --threshold-interval on logs: the most intervals a merged window is cut
// into (11.6 days of seconds), each a list of the logs' lines in it; a log
// whose times are far apart (not one run) is refused, not allocated for.
constexpr std::size_t merged_intervals_max = 1'000'000;

// Option keys that may differ between shards: where each ran, and how.
const std::set<std::string_view> per_machine_options = {"threads", "cpus"};

struct Shard {
  std::string path;
  std::string options;  // canonical: every key but the per-machine ones, minified
  std::string options_json;
  std::string first_difference_key;
  std::uint64_t index = 0, count = 0, connections = 0;
  std::uint64_t requests = 0, bytes = 0, reconnects = 0;
  bool tls = false;  // an https run: the report's "tls" object
  std::uint64_t tls_handshakes = 0, tls_resumed = 0;
  std::string tls_protocol, tls_cipher;
  bool http2 = false;  // an HTTP/2 run: the report's "http2" object
  H2Counts h2;
  std::uint64_t max_streams = 0;
  bool has_syscalls = false;  // a report from before system calls were counted has none
  // --batch-wait: its name in the options, and the longest window used
  // (a report from before it was kept has neither).
  std::string batch_wait;
  std::uint64_t batch_wait_us_max = 0;
  io::SyscallCounts syscalls;
  double duration_s = 0, window_start_unix_s = 0, client_cpu_us = 0;
  std::uint64_t rate = 0;
  std::array<std::uint64_t, error_classes> errors{};
  StatusCounts statuses{};
  bool ok = false;
  bool has_run = true;   // a log without ringhttp's run comment: nothing to check it against
  std::string text;      // a log's bytes (its entries point into them)
  std::vector<HdrLogEntry> entries;
  std::string host;
  std::string url, method;
  std::uint64_t total_connections = 0, pipeline = 0;
  std::string protocol = "http/1.1";  // "h2" or "h2c" for HTTP/2 (and then max_streams)
};

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// What a report and a log's run comment both carry, "options" and
// "shard": the options canonical (every key but the per-machine ones, to
// compare shards with) and as given (for the merged report), and the
// fields the merge checks and prints. False if one is missing.
bool read_run_fields(simdjson::dom::element doc, Shard& s) {
  simdjson::dom::object options;
  std::string_view url, method;
  if (doc["options"].get(options) || doc["shard"]["index"].get(s.index) || doc["shard"]["count"].get(s.count) ||
      doc["shard"]["connections"].get(s.connections) || options["rate"].get(s.rate) || options["url"].get(url) ||
      options["method"].get(method) || options["connections"].get(s.total_connections) ||
      options["pipeline"].get(s.pipeline)) {
    return false;
  }
  for (auto [key, value] : options) {
    if (per_machine_options.count(key) > 0) continue;
    s.options += std::string(key) + "=" + simdjson::minify(value) + ";";
  }
  s.options_json = simdjson::minify(options);
  s.url = url;
  s.method = method;
  // HTTP/2's options, in reports of versions that have them.
  if (std::string_view protocol; options["protocol"].get(protocol) == simdjson::SUCCESS) {
    s.protocol = protocol;
    if (options["max_streams"].get(s.max_streams)) return false;
  }
  return true;
}

// One report, read; its histograms added to `latency` and `uncorrected`.
std::string read_report(const std::string& path, const std::string& contents, simdjson::dom::parser& parser,
                        Shard& s, Histogram& latency, Histogram& uncorrected) {
  simdjson::dom::element doc;
  if (auto e = parser.parse(contents).get(doc); e) return path + ": " + simdjson::error_message(e);
  std::string_view text;
  if (doc["histograms"]["latency"].get(text)) {
    return path + ": not a client --json report with histograms (from this version)";
  }
  std::string error;
  if (!add_compressed_v2(text, latency, error)) return path + ": latency histogram: " + error;
  std::string_view uncorrected_text;
  if (doc["histograms"]["uncorrected"].get(uncorrected_text) == simdjson::SUCCESS &&
      !add_compressed_v2(uncorrected_text, uncorrected, error)) {
    return path + ": uncorrected histogram: " + error;
  }
  std::string_view host;
  simdjson::dom::object errors;
  if (!read_run_fields(doc, s) || doc["requests"].get(s.requests) || doc["bytes"].get(s.bytes) ||
      doc["reconnects"].get(s.reconnects) || doc["duration_s"].get(s.duration_s) ||
      doc["window_start_unix_s"].get(s.window_start_unix_s) ||
      doc["client_cpu_us_per_request"].get(s.client_cpu_us) || doc["ok"].get(s.ok) || doc["host"].get(host) ||
      doc["errors"].get(errors)) {
    return path + ": a field of the report is missing or of the wrong type";
  }
  s.host = host;
  if (simdjson::dom::object tls; doc["tls"].get(tls) == simdjson::SUCCESS) {
    std::string_view protocol, cipher;
    if (tls["handshakes"].get(s.tls_handshakes) || tls["resumed"].get(s.tls_resumed) ||
        tls["protocol"].get(protocol) || tls["cipher"].get(cipher)) {
      return path + ": a field of the report's tls object is missing or of the wrong type";
    }
    s.tls = true;
    s.tls_protocol = protocol;
    s.tls_cipher = cipher;
  }
  if (simdjson::dom::object h2; doc["http2"].get(h2) == simdjson::SUCCESS) {
    simdjson::dom::object resets;
    if (h2["goaways"].get(s.h2.goaways) || h2["refused"].get(s.h2.refused) || h2["resets"].get(resets)) {
      return path + ": a field of the report's http2 object is missing or of the wrong type";
    }
    for (std::size_t i = 0; i < h2_error_codes; ++i) {
      if (resets[h2_error_code_name(i)].get(s.h2.resets[i])) {
        return path + ": http2.resets." + h2_error_code_name(i);
      }
    }
    s.http2 = true;
  }
  if (simdjson::dom::object counts; doc["syscalls"]["counts"].get(counts) == simdjson::SUCCESS) {
    for (std::size_t i = 0; i < io::syscall_kinds; ++i) {
      std::uint64_t n = 0;
      if (counts[io::syscall_name(io::Syscall(i))].get(n)) {
        return path + ": syscalls.counts." + io::syscall_name(io::Syscall(i));
      }
      s.syscalls.set(i, n);
    }
    s.has_syscalls = true;
  }
  if (std::string_view name; doc["options"]["batch_wait"].get(name) == simdjson::SUCCESS) {
    s.batch_wait = name;
    if (doc["batch_wait_us_max"].get(s.batch_wait_us_max)) return path + ": batch_wait_us_max";
  }
  for (std::size_t i = 0; i < error_classes; ++i) {
    if (errors[error_name(ErrorClass(i))].get(s.errors[i])) return path + ": errors." + error_name(ErrorClass(i));
  }
  for (std::size_t i = 0; i < status_classes; ++i) {
    const std::string key = std::to_string(i + 1) + "xx";
    if (doc["statuses"][key].get(s.statuses[i])) return path + ": statuses." + key;
  }
  return {};
}

// The run's options and shard, as a report has them: from a log's
// "#[ringhttp run: …]" comment.
std::string read_run(const std::string& path, std::string_view run_json, simdjson::dom::parser& parser, Shard& s) {
  simdjson::dom::element doc;
  if (parser.parse(run_json.data(), run_json.size()).get(doc) || !read_run_fields(doc, s)) {
    return path + ": its ringhttp run comment is not the run's JSON (options and shard)";
  }
  return {};
}

// One --hdr-log interval log: its histograms added to `latency`; its window
// from its first interval's start to its last one's end.
std::string read_log(const std::string& path, simdjson::dom::parser& parser, Shard& s, Histogram& latency) {
  HdrLogRead log;
  std::string error;
  if (!read_hdr_log(s.text, log, error)) return path + ": " + error;
  if (log.entries.empty()) return path + ": no interval in the log";
  s.has_run = !log.run_json.empty();
  if (s.has_run) {
    if (std::string e = read_run(path, log.run_json, parser, s); !e.empty()) return e;
  }
  s.entries = std::move(log.entries);
  double end = 0;
  s.window_start_unix_s = s.entries.front().start_s;
  for (const HdrLogEntry& e : s.entries) {
    const std::uint64_t before = latency.total();
    if (!add_compressed_v2(e.histogram, latency, error)) return path + ": an interval's histogram: " + error;
    s.requests += latency.total() - before;
    s.window_start_unix_s = std::min(s.window_start_unix_s, e.start_s);
    end = std::max(end, e.start_s + e.length_s);
  }
  s.duration_s = end - s.window_start_unix_s;
  s.ok = true;  // a log holds no errors: the reports say whether any request failed
  return {};
}

std::string read_file(const std::string& path, std::string& out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return path + ": " + std::strerror(errno);
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return path + ": read failed";
  return {};
}

// A report is one JSON object; anything else is read as an interval log.
bool is_report(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

// --threshold-interval on logs: the merged window cut into intervals of
// `interval_s` from its start, each log's line counted in the one that
// holds its middle (the logs' seconds line up to their starts' skew), each
// interval judged on the lines of every log in it.
std::string judge_log_intervals(const std::vector<Shard>& shards, double start, double end, double interval_s,
                                const std::vector<Threshold>& thresholds, std::vector<IntervalFailure>& out) {
  const double intervals = std::ceil((end - start) / interval_s - 1e-9);
  if (!(intervals <= double(merged_intervals_max))) {
    return "the merged window holds " + fmt("%.0f", intervals) + " intervals of " + fmt("%.0f", interval_s) +
           " s, more than the " + std::to_string(merged_intervals_max) + " judged: are these logs of one run?";
  }
  const std::size_t count = std::size_t(intervals);
  std::vector<std::vector<const HdrLogEntry*>> groups(std::max<std::size_t>(count, 1));
  for (const Shard& s : shards) {
    for (const HdrLogEntry& e : s.entries) {
      const double middle = e.start_s + e.length_s / 2 - start;
      groups[std::min(groups.size() - 1, std::size_t(std::max(0.0, middle) / interval_s))].push_back(&e);
    }
  }
  Histogram h;
  std::string error;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    h.reset();
    for (const HdrLogEntry* e : groups[k]) {
      if (!add_compressed_v2(e->histogram, h, error)) return error;
    }
    const double from = double(k) * interval_s;
    const double length = std::min(interval_s, end - start - from);
    if (length <= 0) continue;
    judge_interval(thresholds, {from, length, &h}, out);
  }
  return {};
}

// The first option two reports differ in, for the refusal.
std::string differing_option(const Shard& a, const Shard& b) {
  auto split = [](const std::string& canon) {
    std::map<std::string, std::string> out;
    std::size_t at = 0;
    while (at < canon.size()) {
      const std::size_t eq = canon.find('=', at);
      const std::size_t end = canon.find(';', eq);
      out[canon.substr(at, eq - at)] = canon.substr(eq + 1, end - eq - 1);
      at = end + 1;
    }
    return out;
  };
  const auto x = split(a.options), y = split(b.options);
  for (const auto& [key, value] : x) {
    const auto it = y.find(key);
    if (it == y.end() || it->second != value) return key;
  }
  for (const auto& [key, value] : y) {
    if (x.find(key) == x.end()) return key;
  }
  return "?";
}

}  // namespace

std::string merge_flags_markdown() { return cli::markdown(merge_program); }

namespace {

// Reads every file given: reports or interval logs, never both.
std::string read_inputs(const std::vector<std::string>& paths, simdjson::dom::parser& parser,
                        std::vector<Shard>& shards, Histogram& latency, Histogram& uncorrected, bool& reports,
                        bool& logs) {
  shards.resize(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Shard& s = shards[i];
    s.path = paths[i];
    std::string e = read_file(s.path, s.text);
    if (e.empty()) {
      const bool report = is_report(s.text);
      (report ? reports : logs) = true;
      e = report ? read_report(s.path, s.text, parser, s, latency, uncorrected) : read_log(s.path, parser, s, latency);
    }
    if (!e.empty()) return e;
  }
  if (reports && logs) return "reports and interval logs given together: merge the one or the other";
  return {};
}

// What the inputs cannot answer: a report's seconds, a log's errors.
std::string refuse_unanswerable(const MergeOptions& options, bool reports, bool logs) {
  if (reports && options.threshold_interval_ns > 0) {
    return "--threshold-interval needs the runs' --hdr-log files: a report holds its whole window, not its seconds";
  }
  for (const Threshold& t : options.thresholds) {
    if (logs && (t.metric == Threshold::Metric::errors || t.metric == Threshold::Metric::status)) {
      return "threshold " + t.text +
             ": interval logs hold the latency only; merge the --json reports for errors and statuses";
    }
  }
  return {};
}

// One run, split: the same options, the same shard count, each shard
// once. Logs written without ringhttp's run comment (another tool's) can
// be checked for none of it: merged as given (`checked` false), and said so.
std::string check_one_run(const std::vector<Shard>& shards, bool logs, bool& checked) {
  const Shard& first = shards.front();
  checked = std::all_of(shards.begin(), shards.end(), [](const Shard& s) { return s.has_run; });
  if (!checked && std::any_of(shards.begin(), shards.end(), [](const Shard& s) { return s.has_run; })) {
    return "some logs carry ringhttp's run comment and some do not: not one run";
  }
  if (!checked) return {};
  std::map<std::uint64_t, const Shard*> by_index;
  for (const Shard& s : shards) {
    if (s.options != first.options) {
      return first.path + " and " + s.path + " are " + (logs ? "logs" : "reports") +
             " of different runs: they differ in " + differing_option(first, s);
    }
    if (s.count != first.count) {
      return s.path + " is shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + ", " + first.path +
             " of /" + std::to_string(first.count);
    }
    if (const auto [it, fresh] = by_index.emplace(s.index, &s); !fresh) {
      return "shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + " twice: " + it->second->path +
             " and " + s.path;
    }
  }
  std::string missing;
  for (std::uint64_t i = 0; i < first.count; ++i) {
    if (by_index.count(i) == 0) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
  }
  if (!missing.empty()) return "shards " + missing + " of " + std::to_string(first.count) + " are missing";
  return {};
}

// What the shards add up to.
struct Merged {
  std::uint64_t requests = 0, bytes = 0, reconnects = 0, connections = 0, tls_handshakes = 0, tls_resumed = 0;
  const Shard* tls = nullptr;  // the first https shard that agreed a protocol, for its name and cipher
  bool https = false;
  bool http2 = false;
  H2Counts h2;
  std::array<std::uint64_t, error_classes> errors{};
  std::uint64_t error_total = 0;
  StatusCounts statuses{};
  io::SyscallCounts syscalls;
  bool all_syscalls = true;             // every shard counted them
  std::uint64_t batch_wait_us_max = 0;  // the longest window of any shard
  double start = 1e300, end = 0, last_start = 0, cpu_us = 0;
  double window_s = 0, rps = 0;
  bool ok = true;
  std::string hosts;  // the reports' hosts, in order, each once
  std::set<std::string> seen_hosts;
};

Merged add_up(const std::vector<Shard>& shards, bool reports) {
  Merged m;
  for (const Shard& s : shards) {
    m.requests += s.requests;
    m.bytes += s.bytes;
    m.reconnects += s.reconnects;
    m.connections += s.connections;
    m.https = m.https || s.tls;
    m.tls_handshakes += s.tls_handshakes;
    m.tls_resumed += s.tls_resumed;
    if (m.tls == nullptr && !s.tls_protocol.empty()) m.tls = &s;
    m.http2 = m.http2 || s.http2;
    m.h2.merge(s.h2);
    for (std::size_t i = 0; i < error_classes; ++i) m.errors[i] += s.errors[i];
    for (std::size_t i = 0; i < status_classes; ++i) m.statuses[i] += s.statuses[i];
    m.syscalls.merge(s.syscalls);
    m.all_syscalls = m.all_syscalls && s.has_syscalls;
    m.batch_wait_us_max = std::max(m.batch_wait_us_max, s.batch_wait_us_max);
    m.start = std::min(m.start, s.window_start_unix_s);
    m.last_start = std::max(m.last_start, s.window_start_unix_s);
    m.end = std::max(m.end, s.window_start_unix_s + s.duration_s);
    m.cpu_us += s.client_cpu_us * double(s.requests);
    m.ok = m.ok && s.ok;
    if (reports && m.seen_hosts.insert(s.host).second) m.hosts += (m.hosts.empty() ? "" : ", ") + s.host;
  }
  m.window_s = m.end - m.start;
  m.rps = m.window_s > 0 ? double(m.requests) / m.window_s : 0;
  for (const std::uint64_t e : m.errors) m.error_total += e;
  m.ok = m.ok && m.error_total == 0 && m.requests > 0;
  return m;
}

// What a merge reads and finds, for its report.
struct MergeView {
  const std::vector<Shard>& shards;
  const Merged& m;
  const Histogram& latency;
  const Histogram& uncorrected;
  bool reports = false;
  bool checked = false;
  bool rate_mode = false;  // a log holds the corrected latency only
};

// The report's text, up to its thresholds.
std::string merged_text(const MergeView& v) {
  const Shard& first = v.shards.front();
  const Merged& m = v.m;
  std::string text = "ringhttp client merge: " + std::to_string(v.shards.size()) +
                     (v.reports ? " reports from " + m.hosts : std::string(" interval logs")) + "\n";
  if (v.checked) {
    text += first.method + " " + first.url + ": " + std::to_string(m.connections) + " connections, " +
            (first.protocol == "http/1.1"
                 ? "pipeline " + std::to_string(first.pipeline)
                 : first.protocol + ", " + std::to_string(first.max_streams) + " streams per connection") +
            (first.rate > 0 ? ", rate " + std::to_string(first.rate) + "/s" : "") + "\n";
  } else {
    text += "  note: the logs carry no ringhttp run comment: their runs, shards and options are not checked\n";
  }
  text += "  requests    " + std::to_string(m.requests) + " in " + fmt("%.2f", m.window_s) +
          "s (the first shard's start to the last one's end; starts " + fmt("%.3f", m.last_start - m.start) +
          " s apart)\n";
  text += "  requests/s  " + fmt("%.1f", m.rps) + "\n";
  text += report_latency_row("latency", v.latency);
  if (v.rate_mode) text += report_latency_row("uncorrected", v.uncorrected);
  if (!v.reports) {
    return text + "  note: interval logs hold the latency only: bytes, errors and statuses are in the --json reports\n";
  }
  text += "  bytes/s     " + fmt("%.0f", m.window_s > 0 ? double(m.bytes) / m.window_s : 0) + " (" +
          std::to_string(m.bytes) + " bytes)\n";
  text += "  errors     ";
  for (std::size_t i = 0; i < error_classes; ++i) {
    text += std::string(" ") + error_name(ErrorClass(i)) + " " + std::to_string(m.errors[i]);
  }
  text += "\n  reconnects  " + std::to_string(m.reconnects) + "\n";
  if (m.https) {
    text += "  tls         " + (m.tls ? m.tls->tls_protocol + " " + m.tls->tls_cipher : std::string("(no handshake)")) +
            ", " + std::to_string(m.tls_handshakes) + " handshakes in the window (" + std::to_string(m.tls_resumed) +
            " resumed)\n";
  }
  if (m.http2) text += report_http2_row(std::uint32_t(first.max_streams), m.h2);
  text += report_statuses_row(m.statuses);
  if (m.all_syscalls) text += report_syscalls_row(m.syscalls, m.requests);
  if (!first.batch_wait.empty()) text += report_batch_wait_row(first.batch_wait, m.batch_wait_us_max);
  text += "  client CPU  " + fmt("%.2f", m.requests > 0 ? m.cpu_us / double(m.requests) : 0) +
          " us/request (all shards)\n";
  return text;
}

// The report's counts in JSON: null where the inputs (logs) hold none.
std::string merged_counts_json(const MergeView& v) {
  const Merged& m = v.m;
  const Shard& first = v.shards.front();
  if (!v.reports) {  // not in a log: unknown, not zero
    return ",\"bytes\":null,\"errors\":null,\"errors_total\":null,\"reconnects\":null,\"tls\":null,\"http2\":null,"
           "\"statuses\":null,"
           "\"syscalls\":null,\"batch_wait_us_max\":null,"
           "\"client_cpu_us_per_request\":null";
  }
  std::string out = ",\"bytes\":" + std::to_string(m.bytes) + ",\"errors\":{";
  for (std::size_t i = 0; i < error_classes; ++i) {
    out += std::string(i == 0 ? "" : ",") + "\"" + error_name(ErrorClass(i)) + "\":" + std::to_string(m.errors[i]);
  }
  out += "},\"errors_total\":" + std::to_string(m.error_total) + ",\"reconnects\":" + std::to_string(m.reconnects);
  out += ",\"tls\":" +
         (!m.https ? std::string("null")
                   : "{\"protocol\":" + report_json_escape(m.tls ? m.tls->tls_protocol : "") +
                         ",\"cipher\":" + report_json_escape(m.tls ? m.tls->tls_cipher : "") +
                         ",\"handshakes\":" + std::to_string(m.tls_handshakes) +
                         ",\"resumed\":" + std::to_string(m.tls_resumed) + "}");
  out += ",\"http2\":" + (m.http2 ? report_http2_json(m.h2) : std::string("null"));
  out += ",\"statuses\":" + report_statuses_json(m.statuses);
  out += ",\"syscalls\":" + (m.all_syscalls ? report_syscalls_json(m.syscalls, m.requests) : std::string("null"));
  out += ",\"batch_wait_us_max\":" +
         (first.batch_wait.empty() ? std::string("null") : std::to_string(m.batch_wait_us_max));
  out += ",\"client_cpu_us_per_request\":" + fmt("%.4f", m.requests > 0 ? m.cpu_us / double(m.requests) : 0);
  return out;
}

// The report in JSON (--json), thresholds judged.
std::string merged_json(const MergeView& v, const MergeOptions& options, const Measured& measured,
                        const std::vector<IntervalFailure>& interval_failures, bool thresholds_met) {
  const Merged& m = v.m;
  std::string out = "{\"merged\":true,\"source\":\"" + std::string(v.reports ? "reports" : "hdr-log") +
                    "\",\"shards\":" + std::to_string(v.shards.size()) + ",\"hosts\":[";
  bool comma = false;
  for (const std::string& h : m.seen_hosts) {
    out += (comma ? "," : "") + report_json_escape(h);
    comma = true;
  }
  out += "],\"options\":" + (v.checked ? v.shards.front().options_json : std::string("null"));
  out += ",\"requests\":" + std::to_string(m.requests) + ",\"duration_s\":" + fmt("%.6f", m.window_s) +
         ",\"requests_per_s\":" + fmt("%.3f", m.rps) + ",\"window_start_unix_s\":" + fmt("%.6f", m.start) +
         ",\"start_skew_s\":" + fmt("%.6f", m.last_start - m.start);
  out += ",\"latency_us\":" + report_latency_json(v.latency);
  out += ",\"latency_uncorrected_us\":" + (v.rate_mode ? report_latency_json(v.uncorrected) : std::string("null"));
  out += merged_counts_json(v);
  out += ",\"histograms\":{\"unit\":\"ns\",\"latency\":" + report_json_escape(base64(compress_v2(v.latency))) +
         ",\"uncorrected\":" +
         (v.rate_mode ? report_json_escape(base64(compress_v2(v.uncorrected))) : std::string("null")) + "}";
  out += ",\"thresholds\":" + thresholds_json(options.thresholds, measured, interval_failures);
  out += ",\"threshold_interval_s\":" + std::to_string(options.threshold_interval_ns / 1'000'000'000);
  out += std::string(",\"thresholds_met\":") + (thresholds_met ? "true" : "false");
  out += std::string(",\"ok\":") + (m.ok ? "true" : "false") + "}\n";
  return out;
}

int refuse(const std::string& error) {
  std::fprintf(stderr, "client merge: %s\n", error.c_str());
  return 2;
}

}  // namespace

int merge_main(int argc, char** argv) {
  MergeOptions options;
  switch (cli::parse(merge_program, argc, argv, options)) {
    case cli::Outcome::run: break;
    case cli::Outcome::exit_ok: return 0;
    case cli::Outcome::exit_usage: return 2;
  }
  simdjson::dom::parser parser;
  std::vector<Shard> shards;
  Histogram latency, uncorrected;
  bool reports = false, logs = false, checked = false;
  if (std::string e = read_inputs(options.paths, parser, shards, latency, uncorrected, reports, logs); !e.empty()) {
    return refuse(e);
  }
  if (std::string e = refuse_unanswerable(options, reports, logs); !e.empty()) return refuse(e);
  if (std::string e = check_one_run(shards, logs, checked); !e.empty()) return refuse(e);
  const Merged m = add_up(shards, reports);
  const MergeView view{shards, m, latency, uncorrected, reports, checked, shards.front().rate > 0 && reports};
  std::vector<IntervalFailure> interval_failures;
  if (const std::uint64_t interval_ns = options.threshold_interval_ns; interval_ns > 0) {
    if (std::string e = judge_log_intervals(shards, m.start, m.end, double(interval_ns / 1'000'000'000),
                                            options.thresholds, interval_failures);
        !e.empty()) {
      return refuse(e);
    }
  }
  const Measured measured{&latency, m.error_total, m.requests, m.rps, &m.statuses};
  bool thresholds_met = true;
  std::string text = merged_text(view);
  text += thresholds_text(options.thresholds, measured, thresholds_met, interval_failures);
  std::fputs(text.c_str(), options.json ? stderr : stdout);
  if (options.json) {
    std::fputs(merged_json(view, options, measured, interval_failures, thresholds_met).c_str(), stdout);
  }
  if (!options.hdr_out.empty()) {
    if (const std::string error = write_hgrm_file(options.hdr_out, latency); !error.empty()) {
      std::fprintf(stderr, "client merge: %s\n", error.c_str());
      return 1;
    }
  }
  if (!m.ok) return 1;
  return thresholds_met ? 0 : 3;
}

}  // namespace ringhttp::client
