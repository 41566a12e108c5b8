// Bounded waiting for "eventually" conditions: poll until true or until the
// deadline. The deadline is a hang guard, never a performance assertion.
#pragma once

#include <chrono>
#include <thread>

namespace socket_test {

// The default deadline: generous, because eventually() returns as soon as
// the condition holds, so a passing test never waits it out; only a failing
// one does. It has to hold under AddressSanitizer on a two-core machine that
// other processes keep busy, where a server that needs 50 ms when idle can
// need seconds (a scrape is a fresh connection, an accept, a request and a
// response, each possibly waiting for a CPU). 5 s did not always hold there.
inline constexpr std::chrono::milliseconds eventually_deadline = std::chrono::seconds(30);

template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds deadline = eventually_deadline,
                std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace socket_test
