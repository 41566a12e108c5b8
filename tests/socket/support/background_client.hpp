// The client binary started in the background, its stdout and stderr in
// files, so a test can act while it runs (signal it, load the server beside
// it) and then read what it reported.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace socket_test {

class BackgroundClient {
 public:
  // Starts `client args...` ($RINGHTTP_CLIENT); throws std::runtime_error
  // when it cannot be started.
  explicit BackgroundClient(std::vector<std::string> args);
  // Kills and reaps it if it is still running, and removes its files.
  ~BackgroundClient();
  BackgroundClient(const BackgroundClient&) = delete;
  BackgroundClient& operator=(const BackgroundClient&) = delete;

  void signal(int sig) const;
  // Waits for it to exit, 30 s at most (then it is killed); returns its
  // exit status, or -1 when it was killed or did not exit in time.
  int wait();
  std::string out() const;
  std::string err() const;

 private:
  std::filesystem::path dir_;
  pid_t pid_ = -1;
};

}  // namespace socket_test
