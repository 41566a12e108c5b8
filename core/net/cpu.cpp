#include "core/net/cpu.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "core/text/parse_number.hpp"

namespace ringhttp::net {
namespace {

bool parse_int(std::string_view text, int& out) { return text::parse_number(text, 0, CPU_SETSIZE - 1, out); }

}  // namespace

bool parse_cpu_list(std::string_view text, std::vector<int>& out, std::string& error) {
  out.clear();
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t dash = item.find('-');
    int first = 0;
    int last = 0;
    const bool ok = dash == std::string_view::npos
                        ? parse_int(item, first) && (last = first, true)
                        : parse_int(item.substr(0, dash), first) && parse_int(item.substr(dash + 1), last);
    if (!ok || last < first) {
      error = "bad CPU list item '" + std::string(item) + "' (expected e.g. 0,1 or 0-3)";
      return false;
    }
    for (int cpu = first; cpu <= last; ++cpu) out.push_back(cpu);
  }
  if (out.empty()) {
    error = "empty CPU list";
    return false;
  }
  return true;
}

int pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

int online_cpus() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : 1;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) out.push_back(cpu);
    }
  }
  if (out.empty()) {
    for (int cpu = 0; cpu < online_cpus(); ++cpu) out.push_back(cpu);
  }
  return out;
}

std::string cpus_outside(const std::vector<int>& cpus, const std::vector<int>& allowed) {
  for (const int cpu : cpus) {
    bool found = false;
    for (const int a : allowed) found = found || a == cpu;
    if (!found) {
      return "CPU " + std::to_string(cpu) + " is not in this process's CPU mask (" + format_cpu_list(allowed) +
             "; taskset or a cgroup's cpuset sets it)";
    }
  }
  return {};
}

std::string format_cpu_list(const std::vector<int>& cpus) {
  std::string out;
  for (const int cpu : cpus) {
    if (!out.empty()) out += ',';
    out += std::to_string(cpu);
  }
  return out;
}

}  // namespace ringhttp::net
