#pragma once
// The machine a run was measured on, printed with every report: a figure
// without its machine is not a result.

#include <string>

namespace ringhttp::client {

struct Environment {
  std::string version;
  std::string kernel;     // uname release
  std::string cpu_model;  // /proc/cpuinfo "model name"
  int cores = 0;          // online CPUs
  std::string uring;      // io_uring features in use
  std::string allocator;
};

Environment describe_environment(const std::string& uring_features);

}  // namespace ringhttp::client
