#pragma once
// CPU time spent, to report CPU per request: this process's from getrusage
// (every thread), and another process's (the server's) from /proc/PID/stat.

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace ringhttp::client {

// User + system time of this process, all threads, in nanoseconds.
std::uint64_t process_cpu_ns();

// utime + stime of `pid` from /proc/PID/stat, in nanoseconds (clock-tick
// resolution, usually 10 ms); nullopt when the process cannot be read.
std::optional<std::uint64_t> other_process_cpu_ns(pid_t pid);

}  // namespace ringhttp::client
