// Runs the real server binary as a child process for one test.
//
// The server is started with `--port 0 --address 127.0.0.1` plus the test's
// own flags; the port it picked is read from its start-up line. Whatever the
// test does, the destructor makes sure no server outlives it.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace socket_test {

struct ServerOptions {
  std::vector<std::string> args;   // flags after --port 0 --address 127.0.0.1
  std::optional<rlim_t> fd_limit;  // RLIMIT_NOFILE set in the child before exec
  // Another responder speaking the same start-up line (the bench floors):
  // its path, started with only `--port 0` before `args`. Empty: the server.
  std::string binary;
  std::vector<std::string> env;  // "NAME=VALUE" added to the child's environment (e.g. LD_PRELOAD)
};

// How a waited-for server ended.
struct ExitStatus {
  bool reaped = false;  // false: it had not exited by the deadline and was killed
  int raw = 0;          // waitpid status when reaped

  bool exited_zero() const;
  std::string describe() const;
};

class ServerProcess {
 public:
  // Starts the server and waits (10 s at most) for its start-up line;
  // throws std::runtime_error with the reason when there is none.
  explicit ServerProcess(ServerOptions options = {});
  explicit ServerProcess(std::vector<std::string> args);
  ~ServerProcess();

  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  std::uint16_t port() const { return port_; }
  // The port of `metrics=ADDR:PORT`, which ends the start-up line when the
  // server was given --metrics-address; nullopt without it.
  std::optional<std::uint16_t> metrics_port() const { return metrics_port_; }
  pid_t pid() const { return pid_; }
  // Whether it serves HTTPS for the suite (support/suite_tls.hpp).
  bool tls() const { return tls_; }
  const std::string& startup_line() const { return startup_line_; }

  // Sends `signal` without waiting.
  void signal(int signal);
  // Waits for the server to exit; past the deadline it is killed with
  // SIGKILL and the result says it was not reaped in time.
  ExitStatus wait_exit(std::chrono::milliseconds deadline = std::chrono::seconds(10));
  // signal() then wait_exit().
  ExitStatus stop(int signal = SIGTERM);

 private:
  void start(const ServerOptions& options);
  void read_startup_line();
  void kill_and_reap();

  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::optional<ExitStatus> exit_;
  std::string startup_line_;
  std::uint16_t port_ = 0;
  std::optional<std::uint16_t> metrics_port_;
  bool tls_ = false;
  std::thread stdout_drain_;
};

// The server binary: $RINGHTTP_SERVER, or build/server/server from the cwd.
std::string server_path();

}  // namespace socket_test
