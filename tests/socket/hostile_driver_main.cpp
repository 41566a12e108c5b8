// The hostile-client driver on its own (tests/socket/hostile_driver_test.cpp
// runs it with one fixed seed): sessions against fresh servers, with a given
// seed or with random seeds for a given time. Prints the seed of every
// failure and exits 1 after the first failing session.
//
//   hostile_driver [--seed N] [--seconds S] [--rounds N] [--connections N]
//                  [--concurrency N] [--connection K] [--server PATH]
//                  [--burst-max N] [--no-bare-cr] [--quiet] [--tls]
//                  [--port P] [--tls-ca FILE] [--print-server-args]
//
// --seconds S: random seeds, one session after another, for S seconds.
// --connection K: replay connection K of the seed's round alone (repeat
// it to replay several together).
// --server PATH: the server binary (else $RINGHTTP_SERVER, else build/server/server).
// --port P: no fresh servers: rounds against the server already listening
// on 127.0.0.1:P (bench/bench.py --soak-hostile runs it beside other load),
// each round a new random seed (the first one --seed, if given) until
// --seconds have passed (or --rounds are done). Only each connection's own
// checks apply (every request its own answer, or the right refusal), since
// other clients move the server's /metrics too. The server must run with
// the flags --print-server-args prints. Exit 1 after a failing round.
// --burst-max, --no-bare-cr: leave out what a known server bug trips over,
// to look past it (the gtest always runs the full mix).
// --tls: over HTTPS. Each session's server gets fresh certificates; each
// connection does its TLS handshake, then its script, a record per piece.
// With --port the server must serve HTTPS already, with a certificate for
// localhost that --tls-ca FILE signed (--print-server-args leaves the TLS
// flags to you).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>

#include "support/hostile_session.hpp"

namespace {

using socket_test::hostile::SessionOptions;
using socket_test::hostile::SessionReport;

int usage(const char* why) {
  std::cerr << "hostile_driver: " << why
            << "\nusage: hostile_driver [--seed N] [--seconds S] [--rounds N] [--connections N] [--concurrency N]"
               " [--connection K] [--server PATH] [--burst-max N] [--no-bare-cr] [--quiet] [--tls] [--port P]"
               " [--tls-ca FILE] [--print-server-args]\n";
  return 2;
}

std::uint64_t random_seed() {
  std::random_device device;
  return (std::uint64_t(device()) << 32 | device()) % 1'000'000'000'000ull;
}

// Runs one session; prints its failures. True when it passed.
bool run(SessionOptions options, std::uint64_t seed, bool quiet) {
  options.driver.seed = seed;
  if (!quiet) options.log = [](const std::string& line) { std::cout << "  " << line << std::endl; };
  std::cout << "hostile_driver: seed " << seed << (options.driver.tls ? " over TLS" : "") << std::endl;
  const SessionReport report = socket_test::hostile::run_session(options);
  for (const std::string& failure : report.failures) std::cout << "FAILURE: " << failure << "\n";
  if (report.failures.empty()) {
    std::cout << "hostile_driver: seed " << seed << " passed" << std::endl;
    return true;
  }
  std::cout << "hostile_driver: seed " << seed << " FAILED (" << report.failures.size() << " failures"
            << (report.server_died ? ", the server died" : "") << "); rerun with --seed " << seed << std::endl;
  return false;
}

// --port: rounds against a running server until the time (or the rounds)
// are up. True when every round passed.
bool drive_running(const SessionOptions& options, std::uint16_t port, std::uint64_t first_seed, bool seeded,
                   std::uint64_t seconds, bool rounds_given) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  socket_test::hostile::Tally total;
  std::uint64_t rounds = 0;
  do {
    socket_test::hostile::DriverOptions driver = options.driver;
    driver.seed = seeded && rounds == 0 ? first_seed : random_seed();
    const socket_test::hostile::RoundReport round = socket_test::hostile::run_round(port, driver);
    ++rounds;
    total.add(round.tally);
    std::cout << "hostile_driver: seed " << driver.seed << ": " << round.tally.summary() << std::endl;
    if (!round.failures.empty()) {
      for (const auto& f : round.failures) std::cout << "FAILURE: connection " << f.connection << ": " << f.message << "\n";
      std::cout << "hostile_driver: seed " << driver.seed << " FAILED (" << round.failures.size()
                << " failures) against port " << port << std::endl;
      return false;
    }
  } while (rounds_given ? rounds < options.rounds : std::chrono::steady_clock::now() < until);
  std::cout << "hostile_driver: " << rounds << " rounds passed, " << total.connections << " connections, "
            << total.routed_seen << " requests answered" << std::endl;
  return true;
}

// The command line, as given.
struct Flags {
  SessionOptions options;
  std::uint64_t seed = 0;
  bool seeded = false;
  bool rounds_given = false;
  std::uint64_t seconds = 0;
  bool quiet = false;
  std::uint16_t port = 0;
  bool print_server_args = false;
};

std::string check_flags(Flags& flags);

// Reads argv into `flags`; what is wrong with it, or "".
std::string parse_flags(int argc, char** argv, Flags& flags) {
  SessionOptions& options = flags.options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&]() -> const char* {
      if (i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    const auto number = [&](std::uint64_t& out) {
      const char* v = value();
      if (v == nullptr || *v == '\0') return false;
      char* end = nullptr;
      out = std::strtoull(v, &end, 10);
      return *end == '\0';
    };
    std::uint64_t n = 0;
    if (arg == "--seed") {
      if (!number(flags.seed)) return "--seed takes a number";
      flags.seeded = true;
    } else if (arg == "--seconds") {
      if (!number(flags.seconds)) return "--seconds takes a number";
    } else if (arg == "--rounds") {
      if (!number(n) || n == 0) return "--rounds takes a positive number";
      options.rounds = std::uint32_t(n);
      flags.rounds_given = true;
    } else if (arg == "--connections") {
      if (!number(n) || n == 0) return "--connections takes a positive number";
      options.driver.connections = std::uint32_t(n);
    } else if (arg == "--concurrency") {
      if (!number(n) || n == 0) return "--concurrency takes a positive number";
      options.driver.concurrency = std::uint32_t(n);
    } else if (arg == "--connection") {
      if (!number(n)) return "--connection takes a number";
      options.driver.only_connections.push_back(std::uint32_t(n));
    } else if (arg == "--server") {
      const char* v = value();
      if (v == nullptr) return "--server takes a path";
      ::setenv("RINGHTTP_SERVER", v, 1);
    } else if (arg == "--burst-max") {
      if (!number(n) || n == 0) return "--burst-max takes a positive number";
      options.driver.script.burst_requests_max = std::uint32_t(n);
    } else if (arg == "--no-bare-cr") {
      options.driver.script.bare_cr = false;
    } else if (arg == "--tls") {
      options.driver.tls = true;
    } else if (arg == "--tls-ca") {
      const char* v = value();
      if (v == nullptr) return "--tls-ca takes a path";
      options.driver.tls_ca_file = v;
    } else if (arg == "--quiet") {
      flags.quiet = true;
    } else if (arg == "--port") {
      if (!number(n) || n == 0 || n > 65535) return "--port takes a port number";
      flags.port = std::uint16_t(n);
    } else if (arg == "--print-server-args") {
      flags.print_server_args = true;
    } else {
      return "unknown option " + arg;
    }
  }
  return check_flags(flags);
}

// What the flags mean together; what does not go together, or "".
std::string check_flags(Flags& flags) {
  SessionOptions& options = flags.options;
  if (!options.driver.only_connections.empty()) {
    if (!flags.rounds_given) options.rounds = 1;
    options.driver.concurrency = std::uint32_t(options.driver.only_connections.size());
    options.replays_max = 0;
  }
  if (!options.driver.tls_ca_file.empty() && (flags.port == 0 || !options.driver.tls)) {
    return "--tls-ca goes with --tls and --port (fresh servers get fresh certificates)";
  }
  if (flags.port != 0) {
    if (flags.seconds == 0 && !flags.rounds_given) return "--port needs --seconds or --rounds";
    if (options.driver.tls && options.driver.tls_ca_file.empty()) return "--tls with --port needs --tls-ca";
    if (!options.driver.only_connections.empty()) return "--port and --connection: one at a time";
  }
  return {};
}

// Random seeds (the first one given, if any) until the time is up.
bool run_for(const Flags& flags) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(flags.seconds);
  std::uint64_t sessions = 0;
  do {
    if (!run(flags.options, flags.seeded && sessions == 0 ? flags.seed : random_seed(), flags.quiet)) return false;
    ++sessions;
  } while (std::chrono::steady_clock::now() < until);
  std::cout << "hostile_driver: " << sessions << " seeds passed" << (flags.options.driver.tls ? " over TLS" : "")
            << " in " << flags.seconds << " s" << std::endl;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  if (const std::string wrong = parse_flags(argc, argv, flags); !wrong.empty()) return usage(wrong.c_str());
  if (flags.print_server_args) {
    const char* separator = "";
    for (const std::string& a : socket_test::hostile::server_args(flags.options)) {
      std::cout << separator << a;
      separator = " ";
    }
    std::cout << std::endl;
    return 0;
  }
  if (flags.port != 0) {
    return drive_running(flags.options, flags.port, flags.seed, flags.seeded, flags.seconds, flags.rounds_given) ? 0
                                                                                                                  : 1;
  }
  if (flags.seconds == 0) return run(flags.options, flags.seeded ? flags.seed : random_seed(), flags.quiet) ? 0 : 1;
  return run_for(flags) ? 0 : 1;
}
