#include "support/client_process.hpp"

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

using Clock = std::chrono::steady_clock;

std::runtime_error errno_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

std::string client_path() {
  if (const char* env = std::getenv("RINGHTTP_CLIENT"); env != nullptr && *env != '\0') return env;
  return "build/client/client";
}

std::vector<std::string> with_suite_tls(std::vector<std::string> args) {
  if (!suite_tls()) return args;
  constexpr std::string_view plain = "http://127.0.0.1:";
  for (std::string& a : args) {
    if (!a.starts_with(plain)) continue;
    const std::string_view rest = std::string_view(a).substr(plain.size());
    const std::size_t digits = rest.find_first_not_of("0123456789");
    const int port = std::atoi(std::string(rest.substr(0, digits)).c_str());
    if (port <= 0 || port > 65535 || !is_tls_port(std::uint16_t(port))) continue;
    a = "https://127.0.0.1:" + std::string(rest);  // the certificate names 127.0.0.1
    args.insert(args.begin(), {"--cacert", suite_certificates().ca_file});
    return args;
  }
  return args;
}

std::vector<std::string> with_suite_backend(std::vector<std::string> args) {
  const char* backend = std::getenv("RINGHTTP_CLIENT_BACKEND");
  const char* uring = std::getenv("RINGHTTP_URING");
  if (!args.empty() && args.front() == "merge") return args;
  for (const std::string& a : args) {
    if (a.starts_with("--backend") || a.starts_with("--uring")) return args;
  }
  if (backend != nullptr && *backend != '\0') {
    args.insert(args.begin(), std::string("--backend=") + backend);
  } else if (uring != nullptr && *uring != '\0') {
    args.insert(args.begin(), std::string("--uring=") + uring);
  }
  return args;
}

ClientRun run_client(const std::vector<std::string>& given_args, std::chrono::milliseconds deadline,
                     const std::vector<std::string>& env) {
  const std::vector<std::string> args = with_suite_tls(with_suite_backend(given_args));
  const std::string path = client_path();
  if (::access(path.c_str(), X_OK) != 0) throw errno_error("client binary " + path + " (set RINGHTTP_CLIENT)");
  // Everything execv needs is built before fork: the child makes
  // async-signal-safe calls only.
  std::vector<std::string> strings{path};
  strings.insert(strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = environment_with(env);
  const std::vector<char*> envp = pointers_to(env_strings);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0) throw errno_error("pipe2");
  const pid_t pid = ::fork();
  if (pid < 0) throw errno_error("fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::close_range(3, ~0U, 0);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  ClientRun run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&run.out, &run.err};
  int open_count = 2;
  const auto until = Clock::now() + deadline;
  bool killed = false;
  while (open_count > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      killed = true;
      break;
    }
    const int ready = ::poll(fds, 2, int(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[4096];
      const ssize_t n = ::read(fds[i].fd, chunk, sizeof chunk);
      if (n > 0) {
        sinks[i]->append(chunk, std::size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) ::close(p.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  run.exit_code = !killed && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace socket_test
