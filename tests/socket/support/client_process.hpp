// Runs the client binary to completion for one test and keeps what it said.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace socket_test {

struct ClientRun {
  int exit_code = -1;  // -1: killed (signal or past the deadline)
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs `client args...` and waits for it (30 s at most, then SIGKILL).
// `env`: "NAME=VALUE" added to its environment.
ClientRun run_client(const std::vector<std::string>& args,
                     std::chrono::milliseconds deadline = std::chrono::seconds(30),
                     const std::vector<std::string>& env = {});

// The client binary: $RINGHTTP_CLIENT, or build/client/client from the cwd.
std::string client_path();

// The client's arguments with the backend the suite runs the client on:
// $RINGHTTP_CLIENT_BACKEND (uring or epoll) as --backend, put first, or
// else $RINGHTTP_URING (a --uring value) as --uring. Left as they are when
// neither is set, for `merge`, or when the test chose its own backend or
// --uring profile (tests of io_uring itself).
std::vector<std::string> with_suite_backend(std::vector<std::string> args);

// The client's arguments over HTTPS when the suite runs so
// (support/suite_tls.hpp): a target http://127.0.0.1:PORT of a server
// serving HTTPS for the suite becomes https://, with the run's CA.
std::vector<std::string> with_suite_tls(std::vector<std::string> args);

}  // namespace socket_test
