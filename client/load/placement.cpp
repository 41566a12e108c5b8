#include "client/load/placement.hpp"

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string_view>

#include "core/net/cpu.hpp"

namespace ringhttp::client {
namespace {

// The Cpus_allowed_list of one task, or empty.
std::vector<int> task_cpus(const std::string& status_path) {
  std::ifstream in(status_path);
  std::string line;
  constexpr std::string_view key = "Cpus_allowed_list:";
  while (std::getline(in, line)) {
    if (!line.starts_with(key)) continue;
    std::string_view list(line);
    list.remove_prefix(key.size());
    while (!list.empty() && (list.front() == ' ' || list.front() == '\t')) list.remove_prefix(1);
    std::vector<int> cpus;
    std::string error;
    if (net::parse_cpu_list(list, cpus, error)) return cpus;
    return {};
  }
  return {};
}

}  // namespace

std::vector<int> server_cpus(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* tasks = ::opendir(dir.c_str());
  if (tasks == nullptr) return {};
  std::set<int> pinned;
  std::set<int> any;
  while (const dirent* entry = ::readdir(tasks)) {
    if (entry->d_name[0] == '.') continue;
    const std::vector<int> cpus = task_cpus(dir + "/" + entry->d_name + "/status");
    if (cpus.size() == 1) pinned.insert(cpus.front());
    any.insert(cpus.begin(), cpus.end());
  }
  ::closedir(tasks);
  const std::set<int>& chosen = pinned.empty() ? any : pinned;
  return {chosen.begin(), chosen.end()};
}

std::string shared_cpu_warning(const std::vector<int>& thread_cpus, const std::vector<int>& server, pid_t pid) {
  std::string out;
  for (std::size_t i = 0; i < thread_cpus.size(); ++i) {
    if (std::find(server.begin(), server.end(), thread_cpus[i]) == server.end()) continue;
    out += "client: warning: thread " + std::to_string(i) + " runs on CPU " + std::to_string(thread_cpus[i]) +
           ", which the server (pid " + std::to_string(pid) + ", on CPUs " + net::format_cpu_list(server) +
           ") runs on too: both get about half of it and every figure is off; put them on different CPUs "
           "(--cpus, taskset)\n";
  }
  return out;
}

}  // namespace ringhttp::client
