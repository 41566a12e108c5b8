// The client's latency figures with two worker threads, read back by
// HdrHistogram's own reader: Debian's libhdrhistogram-java, whose
// HistogramLogProcessor decodes the client's --hdr-log (V2 compressed
// histograms), adds up its intervals and computes the percentiles itself.
// What it computes from the log must be what the client reported: the same
// count as the report's requests (both threads, each response once, no
// warm-up), and the same percentiles and maximum as --json and --hdr-out, to
// the histogram's resolution (the same HdrHistogram bucket).
//
// java and the jar are test dependencies (tools/install-deps.sh installs
// them): when they are missing the tests fail and say so, never skip.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <signal.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/client_process.hpp"
#include "support/eventually.hpp"
#include "support/metrics.hpp"
#include "support/server_process.hpp"
#include "support/hdrhistogram.hpp"
#include "support/json_report.hpp"
#include "support/shell.hpp"

namespace socket_test {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, separator);) fields.push_back(field);
  return fields;
}

// A value printed with 3 decimals in microseconds, back in nanoseconds (the
// unit both the client and the log record), exactly.
std::uint64_t us_text_to_ns(double us) { return std::uint64_t(std::llround(us * 1000.0)); }

// HdrHistogram's bucket of a value recorded in nanoseconds with 3
// significant digits (2048 sub-buckets): the lowest value it shares a count
// with. Written here from HdrHistogram's definition, not taken from the
// client, so that a wrong layout in the client cannot agree with itself.
std::uint64_t lowest_equivalent_ns(std::uint64_t ns) {
  constexpr int sub_bucket_bits = 11;
  const int shift = std::max(0, int(std::bit_width(ns)) - sub_bucket_bits);
  return (ns >> shift) << shift;
}


// One row of HistogramLogProcessor's CSV interval output: the interval's
// own count, and the totals of every interval up to it.
struct ProcessedInterval {
  double end_s = 0;
  std::uint64_t count = 0;
  std::uint64_t total_count = 0;
  // Total_50%, 90%, 99%, 99.9%, 99.99%, Max, in nanoseconds.
  std::vector<std::uint64_t> total_ns;
};

// HistogramLogProcessor's view of `log`: its interval rows (values in
// microseconds, -outputValueUnitRatio 1000, then converted to nanoseconds),
// and its overall percentile distribution in milliseconds (its default
// ratio, the client's .hgrm unit) as text.
struct Processed {
  std::vector<ProcessedInterval> intervals;
  std::string hgrm_ms;
};

Processed process_log(const std::string& log, const std::string& out_base) {
  Processed processed;
  const std::string java = "timeout " + std::to_string(java_timeout_s) + " java -cp " + hdrhistogram_jar +
                           " org.HdrHistogram.HistogramLogProcessor -i " + log;
  const ShellRun csv = run_shell(java + " -csv -outputValueUnitRatio 1000 -o " + out_base + "_us");
  EXPECT_EQ(csv.exit_code, 0) << csv.output;
  const ShellRun ms = run_shell(java + " -o " + out_base + "_ms");
  EXPECT_EQ(ms.exit_code, 0) << ms.output;
  processed.hgrm_ms = read_file(out_base + "_ms.hgrm");

  // "Timestamp","Int_Count","Int_50%","Int_90%","Int_Max","Total_Count",
  // "Total_50%","Total_90%","Total_99%","Total_99.9%","Total_99.99%","Total_Max"
  std::istringstream rows(read_file(out_base + "_us"));
  for (std::string row; std::getline(rows, row);) {
    if (row.empty() || row.starts_with("#") || row.starts_with("\"")) continue;
    const std::vector<std::string> f = split(row, ',');
    EXPECT_EQ(f.size(), 12u) << row;
    if (f.size() != 12) continue;
    ProcessedInterval interval;
    interval.end_s = std::stod(f[0]);
    interval.count = std::stoull(f[1]);
    interval.total_count = std::stoull(f[5]);
    for (std::size_t i = 6; i < 12; ++i) interval.total_ns.push_back(us_text_to_ns(std::stod(f[i])));
    processed.intervals.push_back(interval);
  }
  return processed;
}

// The log's interval lines, as the client wrote them.
std::size_t log_lines(const std::string& log) {
  std::istringstream lines(read_file(log));
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line);) count += line.find(",HISTF") != std::string::npos;
  return count;
}

// What HdrHistogram's reader made of the log against what the client
// reported for the same run: the count, and each figure in the same bucket.
void expect_log_matches_report(const Processed& processed, const JsonReport& report) {
  ASSERT_FALSE(processed.intervals.empty()) << "HistogramLogProcessor read no interval";
  const std::uint64_t requests = report.number("/requests");
  std::uint64_t sum = 0;
  for (const ProcessedInterval& interval : processed.intervals) sum += interval.count;
  const ProcessedInterval& last = processed.intervals.back();
  EXPECT_EQ(sum, last.total_count);
  EXPECT_EQ(last.total_count, requests) << "the log's count against the report's requests";
  EXPECT_EQ(report.number("/latency_us/count"), requests) << "the report's latency count against its requests";
  const char* keys[] = {"p50", "p90", "p99", "p99_9", "p99_99", "max"};
  for (std::size_t i = 0; i < std::size(keys); ++i) {
    const std::uint64_t reported_ns = us_text_to_ns(report.real((std::string("/latency_us/") + keys[i]).c_str()));
    const std::uint64_t read_ns = last.total_ns[i];
    // The client reports a percentile no higher than its exact maximum;
    // HdrHistogram reports the top of the bucket. Both are the bucket's.
    EXPECT_EQ(lowest_equivalent_ns(reported_ns), lowest_equivalent_ns(read_ns))
        << keys[i] << ": the client says " << reported_ns << " ns, HdrHistogram's reader " << read_ns << " ns";
  }
}

// The client's --hdr-out against the distribution HistogramLogProcessor
// writes from the log: the same lines after the processor's two comment
// lines. Values and counts are compared as text (both print the top of each
// bucket in milliseconds with 3 decimals); percentiles as numbers, since Java
// rounds the 12th decimal half-up where printf rounds the binary value.
void expect_same_distribution(const std::string& ours, std::string theirs) {
  for (int i = 0; i < 2 && theirs.starts_with("#["); ++i) theirs.erase(0, theirs.find('\n') + 1);
  std::istringstream theirs_lines(theirs);
  std::istringstream ours_lines(ours);
  std::string a;
  std::string b;
  std::size_t lines = 0;
  while (std::getline(theirs_lines, a)) {
    ASSERT_TRUE(std::getline(ours_lines, b)) << "--hdr-out is shorter, at line " << lines << ": " << a;
    ++lines;
    if (a.empty() || a.starts_with("#") || a.find("Percentile") != std::string::npos) {
      EXPECT_EQ(a, b);
      continue;
    }
    std::istringstream ta(a);
    std::istringstream tb(b);
    std::string value_a, value_b, count_a, count_b;
    double percentile_a = -1, percentile_b = -1;
    ta >> value_a >> percentile_a >> count_a;
    tb >> value_b >> percentile_b >> count_b;
    EXPECT_EQ(value_a, value_b) << a << " | " << b;
    EXPECT_NEAR(percentile_a, percentile_b, 1e-11) << a << " | " << b;
    EXPECT_EQ(count_a, count_b) << a << " | " << b;
  }
  EXPECT_FALSE(std::getline(ours_lines, b)) << "--hdr-out is longer: " << b;
  EXPECT_GT(lines, 10u);
}

class ClientHistograms : public testing::Test {
 protected:
  void SetUp() override {
    const std::string missing = hdrhistogram_missing();
    ASSERT_TRUE(missing.empty()) << "HdrHistogram's own reader is needed to check the client's logs: " << missing;
  }
  void TearDown() override {
    for (const std::string& path : files_) std::remove(path.c_str());
  }
  // A scratch path for this test, removed after it.
  std::string scratch(const std::string& name) {
    const std::string path =
        testing::TempDir() + "client_histograms_" + std::to_string(::getpid()) + "_" + name;
    for (const char* suffix : {"", "_us", "_us.hgrm", "_ms", "_ms.hgrm"}) files_.push_back(path + suffix);
    return path;
  }
  std::string url(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(server.port()) + path;
  }

  ServerProcess server{{"--shards", "1"}};

 private:
  std::vector<std::string> files_;
};

// -n 500 over two threads (250 each): 500 in the report, 500 in the log as
// HdrHistogram's reader counts it, 500 answered by the server, and the same
// percentiles everywhere. A client that merged one thread's histogram into
// the report or the log, or either of them twice, fails on the counts.
TEST_F(ClientHistograms, two_threads_n_requests_log_report_and_hgrm_agree_with_hdrhistograms_reader) {
  const std::string log = scratch("n.hlog");
  const std::string hgrm = scratch("n.hgrm");
  const std::string processed_base = scratch("n.processed");
  const ClientRun run = run_client(
      {"-t", "2", "-c", "4", "-n", "500", "--json", "--hdr-log", log, "--hdr-out", hgrm, url("/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok()) << run.out;
  EXPECT_EQ(report.number("/options/threads"), 2u);
  EXPECT_EQ(report.number("/requests"), 500u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::responses(200)), 500);
  EXPECT_GE(log_lines(log), 1u);

  const Processed processed = process_log(log, processed_base);
  expect_log_matches_report(processed, report);
  EXPECT_EQ(processed.intervals.back().total_count, 500u);
  expect_same_distribution(read_file(hgrm), processed.hgrm_ms);
}

// A timed run after a warm-up of its own length: the log holds one
// interval per second of the measured window (two here), their counts add
// up to exactly the report's requests: the warm-up's responses, about as
// many again, in none of them, and none of the window's lost at its end.
TEST_F(ClientHistograms, a_timed_run_logs_every_reported_response_and_none_of_the_warm_up) {
  const std::string log = scratch("d.hlog");
  const std::string hgrm = scratch("d.hgrm");
  const std::string processed_base = scratch("d.processed");
  const ClientRun run = run_client({"-t", "2", "-c", "4", "-w", "1s", "-d", "2s", "--json", "--hdr-log", log,
                                    "--hdr-out", hgrm, url("/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok()) << run.out;
  const std::uint64_t requests = report.number("/requests");
  EXPECT_GT(requests, 0u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // The server answered the warm-up too: beyond the window's responses, all
  // but at most one per connection (in flight when the window closed) were
  // the warm-up's, thousands in a second. A client that counted its warm-up
  // in the report and the log alike would agree with its log, not with this.
  constexpr double connections = 4;
  const double answered = scrape_metrics(server.port()).value(metric::responses(200));
  EXPECT_GT(answered - double(requests), connections) << "the server answered " << answered;
  EXPECT_EQ(log_lines(log), 2u) << read_file(log);

  const Processed processed = process_log(log, processed_base);
  expect_log_matches_report(processed, report);
  ASSERT_EQ(processed.intervals.size(), 2u);
  for (const ProcessedInterval& interval : processed.intervals) EXPECT_GT(interval.count, 0u);
  expect_same_distribution(read_file(hgrm), processed.hgrm_ms);
}

// run_shell adds 2>&1 to the whole command: a command's own redirections
// are kept inside a subshell.
std::string in_subshell(const std::string& command) {
  std::string out = "(";
  out += command;
  out += ")";
  return out;
}

// Two processes with --shard 0/2 and 1/2 (-n 20000, so no warm-up: every
// response counts) at the same --start-at, merged by `client merge`: the
// merged count is what the server answered, and the merged percentiles are
// HdrHistogram's own reader's over both processes' interval logs (read as
// one log). A merge that averaged percentiles, or dropped a shard's
// histogram, fails it.
TEST_F(ClientHistograms, shards_merged_are_exactly_one_histogram_of_both_processes) {
  const std::string r0 = scratch("s0.json"), r1 = scratch("s1.json"), merged = scratch("merged.json");
  const std::string l0 = scratch("s0.hlog"), l1 = scratch("s1.hlog"), both = scratch("both.hlog");
  const std::string processed_base = scratch("both.processed");
  const std::string shard = client_path() + " -c 8 -n 20000 --start-at +1s --json " + url("/json");
  const ShellRun ran = run_shell(in_subshell(shard + " --shard 0/2 --hdr-log " + l0 + " > " + r0 + " 2>/dev/null & " +
                                             shard + " --shard 1/2 --hdr-log " + l1 + " > " + r1 +
                                             " 2>/dev/null; wait"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const ShellRun merge = run_shell(in_subshell(client_path() + " merge --json " + r0 + " " + r1 + " > " + merged));
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const JsonReport report(read_file(merged));
  ASSERT_TRUE(report.ok()) << read_file(merged);
  EXPECT_EQ(report.number("/requests"), 20000u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // The fixture's server is this test's own: it answered nothing else.
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::responses(200)), 20000)
      << "the merged count against the server's";
  EXPECT_EQ(JsonReport(read_file(r0)).number("/requests") + JsonReport(read_file(r1)).number("/requests"), 20000u);

  // Both logs as one: the second's interval lines after the first's.
  std::string text = read_file(l0);
  std::istringstream second(read_file(l1));
  for (std::string line; std::getline(second, line);) {
    if (line.find(",HISTF") != std::string::npos) text += line + "\n";
  }
  std::ofstream(both) << text;
  const Processed processed = process_log(both, processed_base);
  expect_log_matches_report(processed, report);

  // The same run merged from its interval logs: the same count and the same
  // distribution, percentile for percentile, as from its reports.
  const std::string merged_logs = scratch("merged-logs.json");
  const ShellRun from_logs =
      run_shell(in_subshell(client_path() + " merge --json " + l0 + " " + l1 + " > " + merged_logs));
  ASSERT_EQ(from_logs.exit_code, 0) << from_logs.output;
  const JsonReport logs(read_file(merged_logs));
  ASSERT_TRUE(logs.ok()) << read_file(merged_logs);
  EXPECT_EQ(logs.number("/requests"), 20000u);
  EXPECT_EQ(logs.text("/source"), "hdr-log");
  for (const char* key : {"p50", "p90", "p99", "p99_9", "p99_99", "max", "count"}) {
    const std::string pointer = std::string("/latency_us/") + key;
    EXPECT_EQ(logs.real(pointer.c_str()), report.real(pointer.c_str())) << key;
  }
  EXPECT_TRUE(logs.is_null("/errors_total")) << "a log holds no errors: unknown, not 0";
  EXPECT_EQ(report.number("/statuses/2xx"), 20000u);
}

// In rate mode the shards keep their connections' places in one schedule:
// two processes at -R 4000 over 8 connections (4 each) send the run's 4,000
// requests in slots 0..3,999 of one schedule, the last due 3,999/4,000 s
// after the common start, so the merged rate cannot exceed 4,000 a second
// (a slow machine only lowers it; the bound is on the side noise cannot
// reach). Shards that each ran the whole rate over their own connections
// would finish in half the time, at about 8,000 a second.
TEST_F(ClientHistograms, rate_mode_shards_together_send_the_rate_asked_for) {
  const std::string r0 = scratch("rate0.json"), r1 = scratch("rate1.json"), merged = scratch("rate.json");
  const std::string shard =
      client_path() + " -c 8 -R 4000 -n 4000 -w 0 --start-at +1s --timeout 20s --json " + url("/json");
  const ShellRun ran = run_shell(in_subshell(shard + " --shard 0/2 > " + r0 + " 2>/dev/null & " + shard +
                                             " --shard 1/2 > " + r1 + " 2>/dev/null; wait"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  const ShellRun merge = run_shell(in_subshell(client_path() + " merge --json " + r0 + " " + r1 + " > " + merged));
  ASSERT_EQ(merge.exit_code, 0) << merge.output;
  const JsonReport report(read_file(merged));
  ASSERT_TRUE(report.ok()) << read_file(merged);
  EXPECT_EQ(report.number("/requests"), 4000u) << read_file(merged);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // 4,000 / (3,999/4,000 s) = 4,001 a second, and 1% for the two processes'
  // clocks.
  EXPECT_LE(report.real("/requests_per_s"), 4000.0 * 1.01) << read_file(merged);
  EXPECT_GT(report.real("/requests_per_s"), 0.0);
  EXPECT_EQ(report.number("/latency_uncorrected_us/count"), 4000u);
}

// Thresholds decide the exit status: 0 when all are met, 3 when one is
// not, 1 (before 3) when a request failed; merge judges them on the merged
// figures the same way.
TEST_F(ClientHistograms, thresholds_set_the_exit_status_of_a_run_and_of_a_merge) {
  const ClientRun met = run_client({"-c", "2", "-n", "500", "--threshold", "p99<=10s", "--threshold", "errors==0",
                                    "--threshold", "requests>=500", "--json", url("/json")});
  EXPECT_EQ(met.exit_code, 0) << met.out << met.err;
  const JsonReport report(met);
  EXPECT_TRUE(report.flag("/thresholds_met"));
  const ClientRun failed = run_client({"-c", "2", "-n", "500", "--threshold", "p50<1ns", url("/json")});
  EXPECT_EQ(failed.exit_code, 3) << failed.out << failed.err;
  EXPECT_NE(failed.out.find("threshold p50<1ns: FAILED"), std::string::npos) << failed.out;
  const ClientRun errors = run_client({"-c", "2", "-n", "100", "--expect-status", "201", "--threshold", "p50<1ns",
                                       url("/json")});
  EXPECT_EQ(errors.exit_code, 1) << errors.out << errors.err;
  // Responses by status class: 100 404s expected, none 2xx or 5xx.
  const ClientRun not_found = run_client({"-c", "2", "-n", "100", "--expect-status", "404", "--json", "--threshold",
                                          "status_4xx==100", "--threshold", "status_2xx==0", "--threshold",
                                          "status_5xx==0", url("/no-such-route")});
  EXPECT_EQ(not_found.exit_code, 0) << not_found.out << not_found.err;
  EXPECT_EQ(JsonReport(not_found).number("/statuses/4xx"), 100u) << not_found.out;
  const ClientRun any_4xx = run_client({"-c", "2", "-n", "100", "--expect-status", "404", "--threshold",
                                        "status_4xx==0", url("/no-such-route")});
  EXPECT_EQ(any_4xx.exit_code, 3) << any_4xx.out << any_4xx.err;

  const std::string r0 = scratch("t0.json"), r1 = scratch("t1.json");
  for (const auto& [path, which] : {std::pair{r0, "0/2"}, std::pair{r1, "1/2"}}) {
    const ShellRun ran = run_shell(in_subshell(client_path() + " -c 4 -n 400 --json --shard " + which + " " +
                                               url("/json") + " > " + path + " 2>/dev/null"));
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
  }
  // -n 400 is the run's total: 200 per shard, 400 merged.
  EXPECT_EQ(run_shell(client_path() + " merge --threshold 'requests==400' --threshold 'status_2xx==400' " + r0 + " " +
                      r1).exit_code,
            0);
  const ShellRun merged_fail = run_shell(client_path() + " merge --threshold 'requests>400' " + r0 + " " + r1);
  EXPECT_EQ(merged_fail.exit_code, 3) << merged_fail.output;
  EXPECT_NE(merged_fail.output.find("threshold requests>400: FAILED (measured 400)"), std::string::npos)
      << merged_fail.output;
}

// --threshold-interval: a threshold met over the whole window but failed
// in one second of it fails the run (exit 3), and the report names that
// interval. The server is stopped (SIGSTOP) for 2.2 s in the middle of a
// 6 s window, so at least one whole one-second interval gets no response.
TEST_F(ClientHistograms, a_threshold_failed_in_one_interval_fails_the_run_and_names_it) {
  ClientRun run;
  std::thread runner([&] {
    run = run_client({"-c", "2", "-w", "0", "-d", "6s", "--timeout", "20s", "--json", "--threshold",
                      "requests>=1", "--threshold-interval", "1s", url("/json")},
                     std::chrono::seconds(60));
  });
  // Stopped 1.2 s after the run's two connections are open (its window is
  // open by then: -w 0), whenever a slow machine gets there; the scrape's
  // own connection is the third.
  const bool answered = eventually([&] { return scrape_metrics(server.port()).value(metric::active) >= 3; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ::kill(server.pid(), SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  ::kill(server.pid(), SIGCONT);
  runner.join();
  ASSERT_TRUE(answered) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 3) << run.out << run.err;
  const JsonReport report(run);
  EXPECT_GE(report.number("/requests"), 1u) << "met over the whole window";
  EXPECT_FALSE(report.flag("/thresholds_met"));
  EXPECT_NE(run.err.find("threshold requests>=1: met"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("FAILED in the interval "), std::string::npos) << run.err;
  EXPECT_NE(run.out.find("\"failed_intervals\":[{\"start_s\":"), std::string::npos) << run.out;
  // The same run without a stop meets it in every interval (a bound no
  // slow machine misses: one response a second).
  const ClientRun steady = run_client({"-c", "2", "-w", "0", "-d", "3s", "--threshold", "requests>=1",
                                       "--threshold-interval", "1s", url("/json")});
  EXPECT_EQ(steady.exit_code, 0) << steady.out << steady.err;
}

// Interval logs of two shards merged with --threshold-interval: the server
// stopped (SIGSTOP) for 2.2 s in the middle of their common 6 s window, the
// merged seconds are judged across both logs and one fails (exit 3, named);
// the same logs without --threshold-interval meet it over the window. What
// a log cannot answer is refused: an errors threshold (not in a log),
// --threshold-interval on reports (not in a report), logs and reports
// together, a log twice, a shard's log missing; a log without ringhttp's
// run comment (another tool's) merges, unchecked and said so.
TEST_F(ClientHistograms, merged_interval_logs_judge_thresholds_in_every_second_of_both_shards) {
  const std::string l0 = scratch("i0.hlog"), l1 = scratch("i1.hlog"), r0 = scratch("i0.json");
  const std::string shard = client_path() + " -c 4 -w 0 -d 6s --timeout 20s --start-at +1s " + url("/json");
  ShellRun ran;
  std::thread runner([&] {
    ran = run_shell(in_subshell(shard + " --shard 0/2 --hdr-log " + l0 + " --json > " + r0 + " 2>/dev/null & " +
                                shard + " --shard 1/2 --hdr-log " + l1 + " > /dev/null 2>&1; wait"));
  });
  // Both shards' four connections open (and the scrape's own): the window is open.
  const bool open = eventually([&] { return scrape_metrics(server.port()).value(metric::active) >= 5; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  ::kill(server.pid(), SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  ::kill(server.pid(), SIGCONT);
  runner.join();
  ASSERT_TRUE(open);
  ASSERT_EQ(ran.exit_code, 0) << ran.output;

  const ShellRun judged = run_shell(client_path() + " merge --threshold 'requests>=1' --threshold-interval 1s " + l0 +
                                    " " + l1);
  EXPECT_EQ(judged.exit_code, 3) << judged.output;
  EXPECT_NE(judged.output.find("threshold requests>=1: met"), std::string::npos) << judged.output;
  EXPECT_NE(judged.output.find("FAILED in the interval "), std::string::npos) << judged.output;
  EXPECT_EQ(run_shell(client_path() + " merge --threshold 'requests>=1' " + l0 + " " + l1).exit_code, 0);

  std::string foreign = read_file(l0);
  foreign.erase(foreign.find("#[ringhttp run: "), foreign.find('\n', foreign.find("#[ringhttp run: ")) -
                                                      foreign.find("#[ringhttp run: ") + 1);
  std::ofstream(scratch("foreign.hlog")) << foreign;
  const ShellRun unchecked = run_shell(client_path() + " merge " + scratch("foreign.hlog"));
  EXPECT_EQ(unchecked.exit_code, 0) << unchecked.output;
  EXPECT_NE(unchecked.output.find("not checked"), std::string::npos) << unchecked.output;
  // A line twenty million seconds on: a window of intervals no run has,
  // refused rather than cut into twenty million lists.
  const std::string last_line = foreign.substr(foreign.rfind('\n', foreign.size() - 2) + 1);
  std::ofstream(scratch("far.hlog")) << foreign << "20000000.000" << last_line.substr(last_line.find(','));

  const struct {
    std::string args;
    std::string says;
  } refused[] = {
      {"--threshold errors==0 " + l0 + " " + l1, "interval logs hold the latency only"},
      {"--threshold 'requests>=1' --threshold-interval 1s " + r0, "needs the runs' --hdr-log files"},
      {l0 + " " + r0, "reports and interval logs given together"},
      {l0 + " " + l0, "shard 0/2 twice"},
      {l0, "shards 1 of 2 are missing"},
      {l0 + " " + scratch("foreign.hlog"), "some logs carry ringhttp's run comment and some do not"},
      {"--threshold-interval 1500ms --threshold 'requests>=1' " + l0 + " " + l1, "whole seconds"},
      {"--threshold-interval 1s --threshold 'requests>=1' " + scratch("far.hlog"), "more than the 1000000 judged"},
  };
  for (const auto& c : refused) {
    const ShellRun r = run_shell(client_path() + " merge " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << ": " << r.output;
  }
}

// Reports that are not one run split are refused, each with its reason.
TEST_F(ClientHistograms, merge_refuses_reports_of_different_runs_and_missing_or_repeated_shards) {
  const std::string r0 = scratch("m0.json"), r1 = scratch("m1.json"), other = scratch("other.json");
  auto shard = [&](const std::string& path, const std::string& which, const std::string& target) {
    const ShellRun ran = run_shell(
        in_subshell(client_path() + " -c 4 -n 400 --json --shard " + which + " " + url(target) + " > " + path +
                    " 2>/dev/null"));
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
  };
  shard(r0, "0/2", "/json");
  shard(r1, "1/2", "/json");
  shard(other, "1/2", "/plaintext");
  const struct {
    std::string files;
    std::string says;
  } cases[] = {
      {r0 + " " + other, "differ in url"},
      {r0, "shards 1 of 2 are missing"},
      {r0 + " " + r0, "shard 0/2 twice"},
      {r0 + " " + scratch("absent.json"), "absent.json"},
  };
  for (const auto& c : cases) {
    const ShellRun ran = run_shell(client_path() + " merge " + c.files);
    EXPECT_EQ(ran.exit_code, 2) << c.files << ": " << ran.output;
    EXPECT_NE(ran.output.find(c.says), std::string::npos) << c.files << ": " << ran.output;
  }
  EXPECT_EQ(run_shell(client_path() + " merge " + r0 + " " + r1).exit_code, 0);
}

}  // namespace
}  // namespace socket_test
