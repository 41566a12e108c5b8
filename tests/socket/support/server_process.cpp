#include "support/server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "support/child_environment.hpp"
#include "support/suite_tls.hpp"

namespace socket_test {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto startup_line_deadline = 30s;  // a hang guard: ASan, on a loaded machine, starts slowly

std::runtime_error errno_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// Everything execv needs, built before fork so that the child only makes
// async-signal-safe calls.
struct ExecArgs {
  std::vector<std::string> strings;
  std::vector<char*> argv;

  explicit ExecArgs(std::vector<std::string> all) : strings(std::move(all)) {
    for (auto& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
  }
};

// Parses the port of "... MARKER127.0.0.1:PORT ..." (also "[::1]:PORT").
std::optional<std::uint16_t> parse_port(const std::string& line, const std::string& marker = "listening on ") {
  const auto at = line.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const auto begin = at + marker.size();
  const auto end = line.find(' ', begin);
  const std::string endpoint = line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  char* last = nullptr;
  const unsigned long port = std::strtoul(endpoint.c_str() + colon + 1, &last, 10);
  if (last == endpoint.c_str() + colon + 1 || *last != '\0' || port == 0 || port > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(port);
}

}  // namespace

bool ExitStatus::exited_zero() const { return reaped && WIFEXITED(raw) && WEXITSTATUS(raw) == 0; }

std::string ExitStatus::describe() const {
  if (!reaped) return "still running at the deadline (killed with SIGKILL)";
  if (WIFEXITED(raw)) return "exited with status " + std::to_string(WEXITSTATUS(raw));
  if (WIFSIGNALED(raw)) return std::string("killed by signal ") + strsignal(WTERMSIG(raw));
  return "unknown wait status " + std::to_string(raw);
}

std::string server_path() {
  if (const char* env = std::getenv("RINGHTTP_SERVER"); env != nullptr && *env != '\0') return env;
  return "build/server/server";
}

ServerProcess::ServerProcess(std::vector<std::string> args) : ServerProcess(ServerOptions{.args = std::move(args)}) {}

ServerProcess::ServerProcess(ServerOptions options) {
  start(options);
  try {
    read_startup_line();
  } catch (...) {
    kill_and_reap();
    throw;
  }
  // The rest of stdout is read and dropped so that the server never blocks
  // on a full pipe; the thread ends when the server's stdout closes.
  stdout_drain_ = std::thread([fd = stdout_fd_] {
    char sink[4096];
    while (true) {
      const ssize_t n = ::read(fd, sink, sizeof sink);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      break;
    }
  });
}

ServerProcess::~ServerProcess() {
  if (tls_) remove_tls_port(port_);
  kill_and_reap();
  if (stdout_drain_.joinable()) stdout_drain_.join();
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

void ServerProcess::start(const ServerOptions& options) {
  const std::string path = options.binary.empty() ? server_path() : options.binary;
  if (::access(path.c_str(), X_OK) != 0) {
    throw errno_error("server binary " + path + " is not executable (set RINGHTTP_SERVER)");
  }
  std::vector<std::string> all{path, "--port", "0"};
  if (options.binary.empty()) all.insert(all.end(), {"--address", "127.0.0.1"});
  // The backend the suite runs the server on ($RINGHTTP_SERVER_BACKEND),
  // unless the test chose its own, or an io_uring profile or send mode
  // (tests of io_uring itself).
  const char* backend = std::getenv("RINGHTTP_SERVER_BACKEND");
  bool chose = !options.binary.empty();
  std::string send_mode;
  for (std::size_t i = 0; i < options.args.size(); ++i) {
    const std::string& a = options.args[i];
    if (a == "--send" && i + 1 < options.args.size()) send_mode = options.args[i + 1];
    if (a.starts_with("--send=")) send_mode = a.substr(std::strlen("--send="));
    chose = chose || a.starts_with("--backend") || a.starts_with("--uring");
  }
  chose = chose || !send_mode.empty();
  if (backend != nullptr && *backend != '\0' && !chose) all.push_back(std::string("--backend=") + backend);
  // The io_uring features the suite runs with ($RINGHTTP_URING, a --uring
  // value), under the same rule; never with the epoll backend.
  const char* uring = std::getenv("RINGHTTP_URING");
  const bool on_epoll = backend != nullptr && std::string_view(backend) == "epoll";
  if (uring != nullptr && *uring != '\0' && !chose && !on_epoll) all.push_back(std::string("--uring=") + uring);
  // HTTPS for the suite ($RINGHTTP_SERVER_TLS, support/suite_tls.hpp),
  // unless the test chose its own TLS, or zero-copy sends (which TLS does
  // not go with), or another responder.
  bool chose_tls = !options.binary.empty() || send_mode == "zc";
  for (const std::string& a : options.args) chose_tls = chose_tls || a.starts_with("--tls");
  tls_ = suite_tls() && !chose_tls;
  if (tls_) {
    const Certificates& files = suite_certificates();
    all.insert(all.end(), {"--tls-cert", files.cert_file, "--tls-key", files.key_file});
  }
  all.insert(all.end(), options.args.begin(), options.args.end());
  ExecArgs exec_args(std::move(all));
  std::vector<std::string> env_strings = environment_with(options.env);
  const std::vector<char*> envp = pointers_to(env_strings);

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw errno_error("pipe2");
  const pid_t parent = ::getpid();

  pid_ = ::fork();
  if (pid_ < 0) throw errno_error("fork");
  if (pid_ == 0) {
    // Child: async-signal-safe calls only.
    // Never outlive a crashed test run. (The signal follows the forking
    // *thread*; tests start servers from their main thread.)
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(126);
    ::dup2(pipe_fds[1], STDOUT_FILENO);  // dup2 clears FD_CLOEXEC on the copy
    ::close_range(3, ~0U, 0);            // the test's own sockets must not count against the server
    if (options.fd_limit) {
      const rlimit limit{*options.fd_limit, *options.fd_limit};
      if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(125);
    }
    ::execve(exec_args.argv[0], exec_args.argv.data(), envp.data());
    const char message[] = "socket_tests: execv of the server failed\n";
    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, message, sizeof message - 1);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  stdout_fd_ = pipe_fds[0];
}

void ServerProcess::read_startup_line() {
  const auto deadline = Clock::now() + startup_line_deadline;
  std::string received;
  while (received.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left <= 0ms) {
      throw std::runtime_error("server printed no start-up line within 10 s (got \"" + received + "\")");
    }
    pollfd p{stdout_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) throw errno_error("poll on server stdout");
    if (ready <= 0) continue;
    char chunk[512];
    const ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const ExitStatus status = wait_exit(2s);
      throw std::runtime_error("server closed stdout before its start-up line (\"" + received + "\"); it " +
                               status.describe());
    }
    received.append(chunk, static_cast<std::size_t>(n));
  }
  startup_line_ = received.substr(0, received.find('\n'));
  const auto port = parse_port(startup_line_);
  if (!port) throw std::runtime_error("cannot parse \"listening on ADDR:PORT\" in \"" + startup_line_ + "\"");
  port_ = *port;
  if (tls_) add_tls_port(port_);
  if (startup_line_.find(" metrics=") != std::string::npos) {
    metrics_port_ = parse_port(startup_line_, " metrics=");
    if (!metrics_port_) throw std::runtime_error("cannot parse \"metrics=ADDR:PORT\" in \"" + startup_line_ + "\"");
  }
}

void ServerProcess::signal(int signal) {
  if (exit_) throw std::runtime_error("signal to a server that already exited");
  if (::kill(pid_, signal) != 0) throw errno_error("kill");
}

ExitStatus ServerProcess::wait_exit(std::chrono::milliseconds deadline) {
  if (exit_) return *exit_;
  const auto until = Clock::now() + deadline;
  while (true) {
    int raw = 0;
    const pid_t r = ::waitpid(pid_, &raw, WNOHANG);
    if (r == pid_) {
      exit_ = ExitStatus{true, raw};
      return *exit_;
    }
    if (r < 0 && errno != EINTR) throw errno_error("waitpid");
    if (Clock::now() >= until) {
      kill_and_reap();
      exit_ = ExitStatus{false, 0};
      return *exit_;
    }
    std::this_thread::sleep_for(5ms);
  }
}

ExitStatus ServerProcess::stop(int signal) {
  this->signal(signal);
  return wait_exit();
}

void ServerProcess::kill_and_reap() {
  if (pid_ <= 0 || exit_) return;
  ::kill(pid_, SIGKILL);
  int raw = 0;
  while (::waitpid(pid_, &raw, 0) < 0 && errno == EINTR) {
  }
  exit_ = ExitStatus{true, raw};
}

}  // namespace socket_test
