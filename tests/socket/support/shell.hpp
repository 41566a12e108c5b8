// Runs a shell command to completion for a test that checks how a program
// ends (its exit status and what it wrote), e.g. a start-up that must fail.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace socket_test {

struct ShellRun {
  int exit_code = -1;  // -1: not run, or killed by a signal
  std::string output;  // stdout and stderr together
};

inline ShellRun run_shell(const std::string& command) {
  ShellRun ran;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) ran.output.append(buffer, n);
  const int status = ::pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

}  // namespace socket_test
