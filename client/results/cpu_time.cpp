#include "client/results/cpu_time.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace ringhttp::client {
namespace {

std::uint64_t to_ns(const timeval& tv) {
  return std::uint64_t(tv.tv_sec) * 1'000'000'000 + std::uint64_t(tv.tv_usec) * 1000;
}

}  // namespace

std::uint64_t process_cpu_ns() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return to_ns(usage.ru_utime) + to_ns(usage.ru_stime);
}

std::optional<std::uint64_t> other_process_cpu_ns(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  // The command name (field 2) may hold spaces and parentheses: the fields
  // after it start at the last ')'. Then state is field 3, utime 14, stime 15.
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  std::uint64_t utime = 0;
  std::uint64_t stime = 0;
  for (int number = 3; number <= 15 && fields >> field; ++number) {
    if (number == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (number == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  if (!fields) return std::nullopt;
  const long ticks_per_s = ::sysconf(_SC_CLK_TCK);
  if (ticks_per_s <= 0) return std::nullopt;
  return (utime + stime) * (1'000'000'000 / std::uint64_t(ticks_per_s));
}

}  // namespace ringhttp::client
