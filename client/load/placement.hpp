#pragma once
// Where the server under measurement runs, read from /proc, so the client
// can tell when one of its threads would share a CPU with it: both would
// then run at about half speed and every figure would be wrong by about 2x.

#include <sys/types.h>

#include <string>
#include <vector>

namespace ringhttp::client {

// The CPUs `pid`'s threads are pinned to (tasks whose affinity is a single
// CPU); when none is pinned, every CPU any of its threads may run on.
// Empty when /proc/PID/task cannot be read.
std::vector<int> server_cpus(pid_t pid);

// A warning for each of the client's `thread_cpus` that is also one of
// `server`; empty when they are apart.
std::string shared_cpu_warning(const std::vector<int>& thread_cpus, const std::vector<int>& server, pid_t pid);

}  // namespace ringhttp::client
