#include "client/results/environment.hpp"

#include <sys/utsname.h>

#include <fstream>

#include "core/alloc/allocator_name.hpp"
#include "core/net/cpu.hpp"
#include "ringhttp_config.hpp"

namespace ringhttp::client {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("model name")) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return "unknown";
}

}  // namespace

Environment describe_environment(const std::string& uring_features) {
  Environment env;
  env.version = RINGHTTP_VERSION;
  utsname name{};
  env.kernel = ::uname(&name) == 0 ? name.release : "unknown";
  env.cpu_model = cpu_model();
  env.cores = net::online_cpus();
  env.uring = uring_features;
  env.allocator = alloc::allocator_name();
  return env;
}

}  // namespace ringhttp::client
