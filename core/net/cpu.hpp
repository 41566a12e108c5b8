#pragma once
// CPU lists ("0,1", "0-3,8") and pinning the calling thread.

#include <string>
#include <string_view>
#include <vector>

namespace ringhttp::net {

bool parse_cpu_list(std::string_view text, std::vector<int>& out, std::string& error);
// Returns 0 or an errno value.
int pin_this_thread(int cpu);
int online_cpus();
// The CPUs the calling thread may run on (its affinity mask, which taskset
// and a cgroup's cpuset set), in increasing order; never empty.
std::vector<int> allowed_cpus();
// Empty when every CPU of `cpus` is in `allowed`, else a message naming the
// first that is not ("CPU 0 is not in this process's CPU mask (1)").
std::string cpus_outside(const std::vector<int>& cpus, const std::vector<int>& allowed);
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace ringhttp::net
