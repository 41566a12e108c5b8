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

}  // namespace socket_test
