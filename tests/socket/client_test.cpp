// The load generator against the real server and against canned servers
// that misbehave on purpose: counts, checks, error classes, exit statuses.
// No timing thresholds: every run is bounded by -n or a short -d.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/background_client.hpp"
#include "support/canned_server.hpp"
#include "support/client_process.hpp"
#include "support/eventually.hpp"
#include "support/hdrhistogram.hpp"
#include "support/json_report.hpp"
#include "support/metrics.hpp"
#include "support/nginx.hpp"
#include "support/requests.hpp"
#include "support/server_process.hpp"
#include "support/shell.hpp"
#include "support/stream_pattern.hpp"

namespace socket_test {
namespace {

std::string url(const ServerProcess& server, const std::string& path) {
  return "http://127.0.0.1:" + std::to_string(server.port()) + path;
}


class ClientAgainstServer : public testing::Test {
 protected:
  ServerProcess server{{"--shards", "1"}};
};

// -n requests at -R rate_per_s in batches of `pipeline`: every one answered
// once (the server's count too), each latency in both histograms, and the
// run no shorter than the schedule: its last batch is due
// (requests / pipeline - 1) / (rate / pipeline) s after the start.
void expect_paced_run(const ServerProcess& server, std::uint64_t rate_per_s, std::uint64_t pipeline,
                      std::uint64_t requests, const char* duration, std::vector<std::string> extra = {}) {
  const auto started = std::chrono::steady_clock::now();  // CLOCK_MONOTONIC, the client's clock
  std::vector<std::string> args{"-R", std::to_string(rate_per_s), "-p", std::to_string(pipeline), "-n",
                                std::to_string(requests), "-d", duration, "-c", "4", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(url(server, "/plaintext"));
  const ClientRun run = run_client(args);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), requests);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/latency_us/count"), requests);
  EXPECT_EQ(report.number("/latency_uncorrected_us/count"), requests);
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::responses(200)), double(requests));
  const std::chrono::nanoseconds last_batch_due((requests / pipeline - 1) * 1'000'000'000 / (rate_per_s / pipeline));
  EXPECT_GE(elapsed, last_batch_due) << "the client finished before its last batch was due";
}


// Two threads share -n between them: exactly n in the report, in the
// merged latency histogram, in the text report and in the server's own
// counters.
TEST_F(ClientAgainstServer, two_threads_split_n_requests_exactly) {
  const ClientRun run = run_client({"-t", "2", "-c", "4", "-n", "500", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.number("/options/threads"), 2u);
  EXPECT_EQ(report.number("/requests"), 500u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/latency_us/count"), 500u);
  const Metrics m = scrape_metrics(server.port());
  EXPECT_EQ(m.value(metric::requests), 501);  // and the scrape, counted before it renders
  EXPECT_EQ(m.value(metric::responses(200)), 500);
  // The client's reachability probe, its four connections, and the scrape.
  EXPECT_EQ(m.value(metric::accepted), 6);
}

// The warm-up runs the same loop as the measured window, on the same
// connections. Every response the client reports, the server answered; of
// the rest, at most one per connection can be the window's (in flight when
// it closed, answered but not counted): so beyond the report's requests plus
// one per connection, the server answered the warm-up's: thousands here,
// and more than four wherever the test can run at all. A client that
// counted its warm-up, or skipped it, reports all the server answered but
// those in flight, and fails here however fast or slow the machine. Nothing but the client asks
// this fresh server anything before the one scrape (the client's
// reachability probe connects without a request), and a scrape does not
// count its own response.
TEST_F(ClientAgainstServer, the_warm_up_is_not_reported) {
  constexpr double connections = 4;
  const ClientRun run = run_client({"-w", "1s", "-d", "1s", "-c", "4", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const double answered = scrape_metrics(server.port()).value(metric::responses(200));
  const JsonReport report(run);
  ASSERT_TRUE(report.ok());
  const double reported = double(report.number("/requests"));
  EXPECT_GT(reported, 0.0);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/latency_us/count"), report.number("/requests"));
  EXPECT_GE(answered, reported) << "the server answered fewer than the client reported";
  EXPECT_GT(answered - reported, connections)
      << "the server answered " << answered << ", the client reported " << reported
      << ": no warm-up beyond the responses in flight at the window's end";
}

TEST_F(ClientAgainstServer, n_requests_are_exactly_n_responses_and_the_server_agrees) {
  const ClientRun run = run_client({"-n", "500", "-c", "4", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.number("/requests"), 500u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/latency_us/count"), 500u);
  // The /metrics response does not count itself.
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::responses(200)), 500);
}

// Each backend makes its own system calls, and the report counts them: on
// io_uring only io_uring_enter carries the requests; on epoll each response
// takes at least one recv and each request one send, with no io_uring_enter.
TEST_F(ClientAgainstServer, each_backend_says_its_name_and_counts_its_system_calls) {
  for (const std::string backend : {"uring", "epoll"}) {
    const ClientRun run =
        run_client({"--backend", backend, "-n", "300", "-c", "3", "--json", url(server, "/plaintext")});
    ASSERT_EQ(run.exit_code, 0) << backend << ": " << run.err;
    const JsonReport report(run);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report.text("/options/backend"), backend);
    EXPECT_EQ(report.number("/requests"), 300u);
    const std::uint64_t enters = report.number("/syscalls/counts/io_uring_enter");
    const std::uint64_t recvs = report.number("/syscalls/counts/recv");
    const std::uint64_t sends = report.number("/syscalls/counts/send");
    if (backend == "uring") {
      EXPECT_GT(enters, 0u);
      EXPECT_EQ(recvs + sends + report.number("/syscalls/counts/epoll_wait"), 0u);
    } else {
      EXPECT_EQ(enters, 0u);
      EXPECT_GE(recvs, 300u);
      EXPECT_GE(sends, 300u);
      EXPECT_GT(report.number("/syscalls/counts/epoll_wait"), 0u);
    }
    EXPECT_GT(report.real("/syscalls/per_request"), 0.0);
    EXPECT_NE(run.err.find("syscalls"), std::string::npos) << run.err;
  }
}

TEST_F(ClientAgainstServer, json_report_is_one_object_with_the_documented_keys) {
  const ClientRun run = run_client({"-n", "20", "-c", "2", "--json", url(server, "/json")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok());
  for (const char* key : {"version", "environment", "options", "requests", "duration_s", "requests_per_s", "bytes",
                          "bytes_per_s", "latency_us", "latency_uncorrected_us", "errors", "errors_total", "reconnects",
                          "client_cpu_us_per_request", "server_cpu_us_per_request", "ok"}) {
    EXPECT_TRUE(report.has(key)) << key;
  }
  for (const char* error : {"connect", "read", "write", "timeout", "parse", "status", "body", "closed"}) {
    EXPECT_EQ(report.number((std::string("/errors/") + error).c_str()), 0u) << error;
  }
  EXPECT_TRUE(report.is_null("/latency_uncorrected_us")) << "closed model: no uncorrected row";
  // Human text goes to stderr when stdout carries the JSON.
  EXPECT_NE(run.err.find("requests/s"), std::string::npos) << run.err;
}

TEST_F(ClientAgainstServer, a_404_with_the_default_expectation_is_a_status_error_and_exit_1) {
  const ClientRun run = run_client({"-n", "50", "-c", "2", "--json", url(server, "/no-such-path")});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 50u);
  EXPECT_EQ(report.number("/errors/status"), 50u);
  EXPECT_EQ(report.number("/errors/body"), 0u);
}

TEST_F(ClientAgainstServer, an_expected_404_is_not_an_error) {
  const ClientRun run = run_client({"-n", "10", "-c", "1", "--expect-status", "404", url(server, "/no-such-path")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(ClientAgainstServer, a_body_mismatch_is_a_body_error_of_its_own_class) {
  const ClientRun run =
      run_client({"-n", "30", "-c", "3", "--json", "--expect-body", "Goodbye", url(server, "/plaintext")});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/body"), 30u);
  EXPECT_EQ(report.number("/errors/status"), 0u);
}

TEST_F(ClientAgainstServer, a_matching_body_passes) {
  const ClientRun run =
      run_client({"-n", "30", "-c", "3", "--expect-body", std::string(json_body), url(server, "/json")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

// {seq:A..B}: each request its own path, and each response checked against
// its own request's body, pipelined, over several connections.
TEST_F(ClientAgainstServer, a_placeholder_varies_the_requests_and_each_response_is_checked_against_its_own) {
  const ClientRun run =
      run_client({"-n", "600", "-c", "3", "-p", "4", "--json", "--expect-body",
                  R"({"id":{seq:1..50},"name":"user-{seq:1..50}"})", url(server, "/users/{seq:1..50}")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 600u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_EQ(report.number("/options/distinct_requests"), 50u);
}

// {rand:A..B}, two threads (each starting at its own point of the order).
TEST_F(ClientAgainstServer, a_shuffled_placeholder_checks_every_response_against_its_own_request) {
  const ClientRun run =
      run_client({"-n", "400", "-t", "2", "-c", "4", "-p", "3", "--json", "--expect-body",
                  R"({"id":{rand:1..100},"name":"user-{rand:1..100}"})", url(server, "/users/{rand:1..100}")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 400u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
}

// The requests really differ: one fixed expected body matches only the
// requests for its own id, 10 of 500 cycling through 50 ids.
TEST_F(ClientAgainstServer, requests_that_vary_do_not_all_match_one_fixed_body) {
  const ClientRun run = run_client({"-n", "500", "-c", "1", "--json", "--expect-body", R"({"id":1,"name":"user-1"})",
                                    url(server, "/users/{seq:1..50}")});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 500u);
  EXPECT_EQ(report.number("/errors/body"), 490u);
}

// --expect-body-file holds bytes no command line can: a 64 KiB /stream body
// with NULs in it. A file one byte off makes every response a body error.
TEST_F(ClientAgainstServer, expect_body_file_checks_every_byte_of_a_large_body) {
  constexpr std::uint64_t bytes = 65536;
  std::string body(bytes, '\0');
  for (std::uint64_t i = 0; i < bytes; ++i) body[i] = stream_byte(i);
  const std::filesystem::path good = std::filesystem::temp_directory_path() / ("expect-" + std::to_string(getpid()));
  const std::filesystem::path bad = good.string() + "-bad";
  std::ofstream(good, std::ios::binary) << body;
  body[40000] = char(body[40000] + 1);
  std::ofstream(bad, std::ios::binary) << body;
  const std::string target = url(server, "/stream?bytes=65536");

  const ClientRun pass = run_client({"-n", "20", "-c", "2", "--json", "--expect-body-file", good.string(), target});
  const ClientRun fail = run_client({"-n", "20", "-c", "2", "--json", "--expect-body-file", bad.string(), target});
  const ClientRun both = run_client({"-n", "1", "--expect-body", "x", "--expect-body-file", good.string(), target});
  const ClientRun missing = run_client({"-n", "1", "--expect-body-file", good.string() + "-none", target});
  std::filesystem::remove(good);
  std::filesystem::remove(bad);

  EXPECT_EQ(pass.exit_code, 0) << pass.out << pass.err;
  EXPECT_EQ(JsonReport(pass).number("/errors/body"), 0u);
  EXPECT_EQ(fail.exit_code, 1) << fail.err;
  EXPECT_EQ(JsonReport(fail).number("/errors/body"), 20u);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("exclusive"), std::string::npos) << both.err;
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("cannot read --expect-body-file"), std::string::npos) << missing.err;
}

TEST_F(ClientAgainstServer, pipelined_batches_are_answered_in_full_with_fewer_sends_than_requests) {
  const ClientRun run = run_client({"-n", "400", "-c", "2", "-p", "8", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 400u);
  const Metrics metrics = scrape_metrics(server.port());
  EXPECT_EQ(metrics.value(metric::responses(200)), 400);
  // Eight requests leave in one send and arrive together: the server
  // answers them together too, so it sends far fewer times than 400.
  EXPECT_LT(metrics.value(metric::sends), 400);
}

TEST_F(ClientAgainstServer, connection_close_from_the_server_is_followed_by_reconnects_not_errors) {
  const ClientRun run =
      run_client({"-n", "100", "-c", "2", "-H", "Connection: close", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 100u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  // Every response closes its connection; all but the last on each
  // connection are followed by a reconnect.
  EXPECT_GE(report.number("/reconnects"), 98u);
}

TEST_F(ClientAgainstServer, every_uring_profile_receives_every_response_small_and_large) {
  // 5.10 and 5.19 (no buffer rings): single receives into each connection's
  // own buffer; no-multishot-recv: single receives with buffer select; 6.0:
  // multishot receive into the buffer ring; all: 6.0 plus defer-taskrun;
  // sqpoll: a poller thread submits (on the worker's CPU), with and without
  // the 5.10 set; 6.1: with the SQ array; min-wait: waits for a batch;
  // fixed-files (5.19 on): sockets as direct descriptors, each put at its
  // slot, and a new one at the same slot after each 20 requests.
  for (const std::string profile : {"5.10", "5.19", "no-multishot-recv", "6.0", "6.1", "all", "sqpoll", "5.10,sqpoll",
                                    "min-wait", "no-fixed-files", "5.10,fixed-files"}) {
    SCOPED_TRACE(profile);
    const ClientRun small = run_client({"-n", "300", "-c", "3", "-p", "4", "--requests-per-connection", "20",
                                        "--uring", profile, "--json", url(server, "/plaintext")});
    ASSERT_EQ(small.exit_code, 0) << small.err;
    const JsonReport small_report(small);
    EXPECT_EQ(small_report.number("/requests"), 300u);
    const bool sqpoll_asked = profile.find("sqpoll") != std::string::npos;
    EXPECT_EQ(small_report.text("/environment/uring").find("sqpoll") != std::string::npos, sqpoll_asked)
        << small_report.text("/environment/uring");
    const bool fixed_files = profile != "5.10" && profile != "5.10,sqpoll" && profile != "no-fixed-files";
    EXPECT_EQ(small_report.text("/environment/uring").find("fixed-files") != std::string::npos, fixed_files)
        << small_report.text("/environment/uring");
    EXPECT_EQ(small_report.number("/reconnects"), 300u / 20 - 3) << "each socket's 20 requests, then a new one";
    // 100,000-byte bodies span many receive buffers.
    const ClientRun large =
        run_client({"-n", "40", "-c", "2", "--uring", profile, "--json", url(server, "/stream?bytes=100000")});
    ASSERT_EQ(large.exit_code, 0) << large.err;
    const JsonReport report(large);
    EXPECT_EQ(report.number("/requests"), 40u);
    EXPECT_GT(report.number("/bytes"), 40u * 100'000);
  }
}

TEST_F(ClientAgainstServer, head_requests_expect_no_body) {
  const ClientRun run = run_client({"-n", "20", "-c", "2", "-m", "HEAD", url(server, "/plaintext")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

TEST_F(ClientAgainstServer, post_bodies_are_framed_so_the_server_reads_every_request) {
  const ClientRun run = run_client(
      {"-n", "50", "-c", "2", "-m", "POST", "-b", "0123456789", "--expect-status", "405", url(server, "/plaintext")});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(scrape_metrics(server.port()).value(metric::responses(405)), 50);
}

// Each request's latency from its intended send time is at least its
// latency from its actual send (a request never leaves before its time), so
// every percentile of the corrected histogram is at least the uncorrected
// one's, and both count every response.
TEST_F(ClientAgainstServer, rate_mode_reports_corrected_and_uncorrected_latency) {
  const ClientRun run = run_client({"-R", "200", "-n", "100", "-c", "2", "--json", url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 100u);
  EXPECT_FALSE(report.is_null("/latency_uncorrected_us"));
  EXPECT_EQ(report.number("/latency_us/count"), 100u);
  EXPECT_EQ(report.number("/latency_uncorrected_us/count"), 100u);
  for (const char* key : {"p50", "p90", "p99", "p99_9", "p99_99", "max"}) {
    EXPECT_GE(report.real((std::string("/latency_us/") + key).c_str()),
              report.real((std::string("/latency_uncorrected_us/") + key).c_str()))
        << key;
  }
}

// The open model's promise (docs/CLIENT.md): N requests/s in total on a fixed
// schedule, connection g of C sending its k-th request at start + (g + kC)/N,
// never before its time, late when its connection still waits for the
// previous response, and none skipped. With -n the count is exact however
// slow the machine: n requests, n responses, n latencies each way.
//
// The schedule also fixes the shortest the run can take, with no timing
// margin: n distinct slots reach slot n-1 at least, due (n-1)/N after the
// client's start, which is after this test started it. A client that sent
// as fast as it could (the closed model) or at twice the rate would exit
// sooner. -d caps the run at half as long again as the schedule: a pacer at
// half the rate would be cut off there, short of n, while a machine that
// merely fell behind (ASan, other processes on both CPUs) has a second to
// catch up, a hundred times what the server needs for the last responses.
TEST_F(ClientAgainstServer, rate_mode_sends_exactly_n_requests_on_the_schedule_and_never_ahead_of_it) {
  expect_paced_run(server, 1000, 1, 2000, "3s");
}

// With --uring min-wait a wait asks for a batch of completions, but never
// past the next send's due time: the schedule holds the same way.
TEST_F(ClientAgainstServer, rate_mode_with_min_wait_keeps_the_schedule) {
  expect_paced_run(server, 1000, 1, 2000, "3s", {"--uring", "min-wait"});
}

// With -p 4 the schedule paces batches of 4 at R/4 a second, so -R stays
// the requests a second: 2,000 requests at -R 1000 are 500 batches, the
// last due 499/250 s after the start. A pacer that sent a batch per
// request slot (4x the rate) would finish four times sooner.
TEST_F(ClientAgainstServer, rate_mode_with_pipelining_paces_batches_at_the_rate_over_the_batch_size) {
  expect_paced_run(server, 1000, 4, 2000, "4s");
}

TEST_F(ClientAgainstServer, hdr_out_writes_a_percentile_distribution) {
  const std::string path = testing::TempDir() + "client_test.hgrm";
  const ClientRun run = run_client({"-n", "200", "-c", "2", "--hdr-out", path, url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(text.str().starts_with("       Value     Percentile TotalCount 1/(1-Percentile)")) << text.str();
  EXPECT_NE(text.str().find("Total count    =          200]"), std::string::npos) << text.str();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// One thread, no warm-up, and a window of one and a half intervals, so the
// log's last interval is a partial one (tests/socket/client_histograms_test.cpp
// runs two threads, with -n and with whole intervals after a warm-up).
TEST_F(ClientAgainstServer, hdr_log_is_read_by_hdrhistograms_own_log_processor_with_the_same_percentiles) {
  const std::string missing = hdrhistogram_missing();
  ASSERT_TRUE(missing.empty()) << "HdrHistogram's own reader is needed to check the client's log: " << missing;
  const std::string dir = testing::TempDir();
  const std::string log = dir + "client_test.hlog";
  const std::string ours = dir + "client_test_ours.hgrm";
  const std::string theirs = dir + "client_test_theirs";
  // 1.5 s: one interval a second, so the log holds two to merge.
  const ClientRun run = run_client(
      {"-d", "1500ms", "-w", "0", "-c", "4", "--hdr-log", log, "--hdr-out", ours, url(server, "/plaintext")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream log_lines(read_file(log));
  int intervals = 0;
  for (std::string line; std::getline(log_lines, line);) intervals += line.find(",HISTF") != std::string::npos;
  EXPECT_EQ(intervals, 2);
  // timeout: a hang guard for the JVM, never a performance bound.
  const std::string command = "timeout " + std::to_string(java_timeout_s) + " java -cp " + hdrhistogram_jar +
                              " org.HdrHistogram.HistogramLogProcessor -i " + log + " -o " + theirs;
  const ShellRun processed_run = run_shell(command);
  ASSERT_EQ(processed_run.exit_code, 0) << command << "\n" << processed_run.output;
  // HistogramLogProcessor writes two comment lines (the interval and the
  // start time) before the same percentile distribution. Java rounds a
  // percentile's 12th decimal half-up where printf rounds the binary value,
  // so percentiles are compared as numbers; values and counts as text.
  std::string processed = read_file(theirs + ".hgrm");
  for (int i = 0; i < 2 && processed.starts_with("#["); ++i) processed.erase(0, processed.find('\n') + 1);
  std::istringstream theirs_lines(processed);
  std::istringstream ours_lines(read_file(ours));
  std::string a;
  std::string b;
  std::size_t lines = 0;
  while (std::getline(theirs_lines, a)) {
    ASSERT_TRUE(std::getline(ours_lines, b)) << "ours is shorter at line " << lines;
    ++lines;
    std::istringstream ta(a);
    std::istringstream tb(b);
    std::string value_a, value_b, count_a, count_b;
    double percentile_a = 0, percentile_b = 0;
    if (a.empty() || a.starts_with("#") || a.find("Percentile") != std::string::npos) {
      EXPECT_EQ(a, b);
      continue;
    }
    ta >> value_a >> percentile_a >> count_a;
    tb >> value_b >> percentile_b >> count_b;
    EXPECT_EQ(value_a, value_b) << a << " | " << b;
    EXPECT_NEAR(percentile_a, percentile_b, 1e-11) << a << " | " << b;
    EXPECT_EQ(count_a, count_b) << a << " | " << b;
  }
  EXPECT_FALSE(std::getline(ours_lines, b)) << "ours is longer";
  EXPECT_GT(lines, 10u);
}

// utime + stime of `pid` in nanoseconds, read by the test itself.
std::uint64_t process_cpu_ns(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after "pid (comm) "
  std::string field;
  std::uint64_t utime = 0;
  std::uint64_t stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return (utime + stime) * (1'000'000'000ull / std::uint64_t(::sysconf(_SC_CLK_TCK)));
}

// CPU time of the children this process has waited for (the client), in ns.
std::uint64_t children_cpu_ns() {
  rusage usage{};
  ::getrusage(RUSAGE_CHILDREN, &usage);
  const auto ns = [](const timeval& t) { return std::uint64_t(t.tv_sec) * 1'000'000'000ull + t.tv_usec * 1000ull; };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

// The two CPU columns are what the test measures itself around the run:
// the server's from /proc/PID/stat, the client's from the rusage of the
// children this process waited for. The client's window lies inside the
// test's, so its figures may only be smaller, by at most its own start and
// stop, and a few clock ticks of /proc's resolution (10 ms) either way. A
// client that reported 0, a constant or the wrong process fails.
// The measured client paces itself (-R), so its own CPU is small, and runs
// in the background; a second client loads the server flat out while the
// measured one's window is certainly open (it has been answered before the
// load starts, and is stopped by a signal after the load ends). So the
// server's CPU the test reads around that load is a lower bound of what the
// measured client must report, and the server's CPU around the whole run an
// upper bound: a client that reported 0, garbage, or its own CPU fails one.
TEST_F(ClientAgainstServer, server_pid_reports_the_servers_cpu_and_its_own) {
  constexpr std::uint64_t tick_ns = 10'000'000;
  const std::uint64_t server_before = process_cpu_ns(server.pid());
  std::uint64_t children_before_measured = 0;
  std::uint64_t server_during_load = 0;
  std::uint64_t server_after = 0;
  std::string out;
  std::string err;
  {
    BackgroundClient measured({"-R", "1000", "-c", "4", "-w", "0", "-d", "120s", "--json", "--server-pid",
                               std::to_string(server.pid()), url(server, "/plaintext")});
    ASSERT_TRUE(eventually([&] { return scrape_metrics(server.port()).value(metric::requests) >= 20; }));
    const std::uint64_t load_start = process_cpu_ns(server.pid());
    const ClientRun load = run_client({"-n", "40000", "-c", "16", url(server, "/json")});
    ASSERT_EQ(load.exit_code, 0) << load.err;
    server_during_load = process_cpu_ns(server.pid()) - load_start;
    children_before_measured = children_cpu_ns();  // the load client included, reaped
    measured.signal(SIGTERM);
    ASSERT_EQ(measured.wait(), 0) << measured.err();
    server_after = process_cpu_ns(server.pid());
    out = measured.out();
    err = measured.err();
  }
  const std::uint64_t measured_client_used = children_cpu_ns() - children_before_measured;
  const ClientRun run{0, out, err};
  const JsonReport report(run);
  const double requests = double(report.number("/requests"));
  ASSERT_GT(requests, 0.0) << out;
  const double server_reported = report.real("/server_cpu_us_per_request") * 1000.0 * requests;
  const double client_reported = report.real("/client_cpu_us_per_request") * 1000.0 * requests;
  // Clock-tick readings on both sides: two ticks of rounding each way.
  EXPECT_GE(server_reported, double(server_during_load) - double(2 * tick_ns))
      << "the server spent " << server_during_load << " ns inside the window";
  EXPECT_LE(server_reported, double(server_after - server_before + 2 * tick_ns))
      << "the server spent " << (server_after - server_before) << " ns around the whole run";
  // The client's own, over its window: positive, and at most what its whole
  // process spent (its rusage, read by the test when it was reaped).
  EXPECT_GT(client_reported, 0.0);
  EXPECT_LE(client_reported, double(measured_client_used + 2 * tick_ns))
      << "the client process spent " << measured_client_used << " ns";
}

TEST(Client, connection_refused_is_one_clear_message_and_exit_1) {
  std::uint16_t port = 0;
  {
    ServerProcess server({"--shards", "1"});
    port = server.port();
  }  // stopped (SIGKILL). The kernel tears an io_uring down after its process
     // is gone, so the listener a pending accept holds can outlive the process
     // by some milliseconds: wait until a connect is refused.
  ASSERT_TRUE(eventually([&] {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool refused = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == ECONNREFUSED;
    ::close(fd);
    return refused;
  })) << "port "
      << port << " still accepts after its server was killed";
  const ClientRun run = run_client({"-d", "1s", "-w", "0", "http://127.0.0.1:" + std::to_string(port) + "/"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("Connection refused"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("requests/s"), std::string::npos) << "no table of zeros:\n" << run.out;
}

TEST(Client, bad_flags_and_urls_exit_2_with_a_message) {
  const std::vector<std::vector<std::string>> bad = {
      {"--no-such-flag", "http://127.0.0.1:1/"},
      {"http:///"},
      {"http://127.0.0.1:99999/"},
      {"http://[192.0.2.1]:80/"},
      {"-c", "0", "http://127.0.0.1:1/"},
      {"-t", "2", "-c", "4", "-R", "1", "http://127.0.0.1:1/"},
      {"-R", "1001", "-p", "4", "http://127.0.0.1:1/"},
      {"-t", "2", "-c", "4", "-R", "4", "-p", "4", "http://127.0.0.1:1/"},
  };
  for (const auto& a : bad) {
    const ClientRun run = run_client(a);
    std::string joined;
    for (const auto& s : a) joined += s + " ";
    EXPECT_EQ(run.exit_code, 2) << joined << "\n" << run.err;
    EXPECT_TRUE(run.err.starts_with("client: ")) << joined << "\n" << run.err;
  }
}

TEST(Client, a_close_in_the_middle_of_a_response_is_a_closed_error) {
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part", CannedServer::After::close);
  const ClientRun run = run_client({"-n", "5", "-c", "1", "--json", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/closed"), 5u);
  EXPECT_EQ(report.number("/requests"), 0u);
}

TEST(Client, close_delimited_responses_are_complete_at_the_close) {
  CannedServer server("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nHello, World!", CannedServer::After::close);
  const ClientRun run = run_client({"-n", "5", "-c", "1", "--json", "--expect-body", "Hello, World!", server.url()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 5u);
}

TEST(Client, chunked_responses_are_parsed_and_checked) {
  CannedServer server("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8\r\n, World!\r\n0\r\n\r\n",
                      CannedServer::After::keep_open);
  const ClientRun run = run_client({"-n", "20", "-c", "1", "--json", "--expect-body", "Hello, World!", server.url()});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 20u);
}

TEST(Client, post_bodies_arrive_intact) {
  // An echo server answers each request with its body, so --expect-body
  // checks the bytes that arrived, request after request, pipelined too.
  CannedServer server(CannedServer::echo, CannedServer::After::keep_open);
  std::string body;
  for (int i = 0; i < 300; ++i) body += char('a' + i % 26);
  const ClientRun run = run_client(
      {"-n", "60", "-c", "2", "-p", "3", "-m", "POST", "-b", body, "--expect-body", body, "--json", server.url()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(JsonReport(run).number("/requests"), 60u);
}

TEST(Client, garbage_is_a_parse_error) {
  CannedServer server("SSH-2.0-OpenSSH\r\n\r\n", CannedServer::After::keep_open);
  const ClientRun run = run_client({"-n", "3", "-c", "1", "--json", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/parse"), 3u);
}

TEST(Client, no_response_at_all_is_a_timeout_error) {
  CannedServer server("", CannedServer::After::keep_open);
  const ClientRun run = run_client({"-n", "2", "-c", "1", "--timeout", "100ms", "--json", server.url()});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/errors/timeout"), 2u);
}

}  // namespace
}  // namespace socket_test

namespace socket_test {
namespace {

// 100 requests/s on one connection, -n 60: the k-th request (from 0) is due
// at k * 10 ms after the client's start and never leaves before. The server
// sleeps 400 ms before its 20th answer (k = 19, sent at 190 ms or later), so
// that answer leaves at 590 ms or later, and requests 20..59, due from 200
// to 590 ms, cannot leave before it arrives: request k is at least
// 590 - 10k ms late. These are lower bounds from the schedule and the
// sleep alone; a slower machine only makes the requests later. So:
// - the stalled request waited at least the stall either way;
// - corrected p99 (with 60 counts, the 60th value) is at least the stall;
// - corrected p90 (the 54th value) is at least 300 ms: requests 19..29,
//   eleven of sixty, each took that long counted from their intended times;
// - the corrected mean exceeds the uncorrected one by the mean lateness,
//   at least (390 + 380 + ... + 10) ms / 60 = 130 ms: the same requests
//   timed from their actual sends (uncorrected) hide that. A client that
//   timed both from the actual send would report two equal histograms
//   here, however fast or slow the machine.
TEST(Client, rate_mode_corrected_latency_shows_a_stall_that_the_uncorrected_one_hides) {
  constexpr double stall_us = 400'000;
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", CannedServer::After::keep_open);
  server.stall_once(20, std::uint32_t(stall_us / 1000));
  const ClientRun run = run_client({"-R", "100", "-c", "1", "-n", "60", "--json", server.url()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report.number("/requests"), 60u);
  EXPECT_EQ(report.number("/latency_us/count"), 60u);
  EXPECT_EQ(report.number("/latency_uncorrected_us/count"), 60u);
  EXPECT_GE(report.real("/latency_uncorrected_us/max"), stall_us) << run.out;
  EXPECT_GE(report.real("/latency_us/max"), report.real("/latency_uncorrected_us/max")) << run.out;
  EXPECT_GE(report.real("/latency_us/p99"), stall_us) << run.out;
  EXPECT_GE(report.real("/latency_us/p90"), 300'000.0) << run.out;
  // 130 ms, less a thousandth of each value for the histogram's buckets.
  EXPECT_GE(report.real("/latency_us/mean") - report.real("/latency_uncorrected_us/mean"), 120'000.0) << run.out;
}

}  // namespace
}  // namespace socket_test

namespace socket_test {
namespace {

TEST(Client, a_run_against_debians_nginx_has_no_errors) {
  ASSERT_TRUE(nginx_installed());
  Nginx nginx({.keepalive_requests = 1000});  // nginx's own default (the fixture's is 100,000)
  ASSERT_TRUE(nginx.accepts()) << "nginx did not start";
  // 2,500 requests on 2 connections pass nginx's 1,000 requests per
  // keep-alive connection: its Connection: close is followed by reconnects.
  const ClientRun run = run_client({"-n", "2500", "-c", "2", "--json", "--expect-body", "Hello, World!", nginx.url()});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const JsonReport report(run);
  EXPECT_EQ(report.number("/requests"), 2500u);
  EXPECT_EQ(report.number("/errors_total"), 0u);
  EXPECT_GE(report.number("/reconnects"), 1u);
}

}  // namespace
}  // namespace socket_test
