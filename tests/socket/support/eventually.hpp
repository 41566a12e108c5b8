// Bounded waiting for "eventually" conditions: poll until true or until the
// deadline. The deadline is a hang guard, never a performance assertion.
#pragma once

#include <chrono>
#include <thread>

namespace socket_test {

template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds deadline = std::chrono::seconds(5),
                std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace socket_test
