// Runs client code on many threads at once and collects what went wrong.
#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace socket_test {

// Calls client(i) for i in [0, count) on `count` threads; returns one message
// per client that threw (an empty vector means every client succeeded).
inline std::vector<std::string> run_clients(int count, const std::function<void(int)>& client) {
  std::mutex mutex;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      try {
        client(i);
      } catch (const std::exception& e) {
        const std::lock_guard lock(mutex);
        errors.push_back("client " + std::to_string(i) + ": " + e.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return errors;
}

}  // namespace socket_test
