// HdrHistogram's own reader, Debian's libhdrhistogram-java, for the tests
// that check the client's histograms and interval logs against it. It and
// a java to run it are test dependencies (tools/install-deps.sh installs
// both): without them those tests fail and say what to install, never skip.
#pragma once

#include <unistd.h>

#include <string>

#include "support/shell.hpp"

namespace socket_test {

// Debian's libhdrhistogram-java (2.1.11 in Debian 12).
inline constexpr const char* hdrhistogram_jar = "/usr/share/java/hdrhistogram.jar";
// A hang guard for one run of the JVM, never a performance bound: it starts
// in about a second here, and much slower on a loaded machine is fine.
inline constexpr int java_timeout_s = 300;

// Why HdrHistogram's reader cannot run here, or empty when it can.
inline std::string hdrhistogram_missing() {
  if (::access(hdrhistogram_jar, R_OK) != 0) {
    return std::string(hdrhistogram_jar) + " is missing: install libhdrhistogram-java (tools/install-deps.sh)";
  }
  const ShellRun java = run_shell("java -version");
  if (java.exit_code != 0) {
    return "java does not run (exit " + std::to_string(java.exit_code) +
           "): install default-jre-headless (tools/install-deps.sh)\n" + java.output;
  }
  return {};
}

}  // namespace socket_test
