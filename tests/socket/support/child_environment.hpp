// The environment a test's child process (server or client) starts with:
// the test's own, with some variables added or replaced.
#pragma once

#include <string>
#include <vector>

namespace socket_test {

// environ, where each "NAME=VALUE" of `extra` replaces NAME or is added.
std::vector<std::string> environment_with(const std::vector<std::string>& extra);

// A null-terminated array of pointers into `strings`, for execve; built
// before fork so that the child only makes async-signal-safe calls.
std::vector<char*> pointers_to(std::vector<std::string>& strings);

}  // namespace socket_test
