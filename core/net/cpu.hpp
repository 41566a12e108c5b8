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
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace ringhttp::net
