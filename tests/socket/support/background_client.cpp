#include "support/background_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "support/child_environment.hpp"
#include "support/client_process.hpp"
#include "support/eventually.hpp"

namespace socket_test {

namespace {
std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

BackgroundClient::BackgroundClient(std::vector<std::string> args) {
  static std::atomic<unsigned> count{0};
  dir_ = std::filesystem::temp_directory_path() /
         ("background_client_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
  std::filesystem::create_directories(dir_);
  args = with_suite_backend(std::move(args));
  args.insert(args.begin(), client_path());
  std::vector<std::string> env = environment_with({});
  std::vector<char*> argv = pointers_to(args);
  std::vector<char*> envp = pointers_to(env);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir_ / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, (dir_ / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const int rc = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start the client " + args[0]);
  }
}

BackgroundClient::~BackgroundClient() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void BackgroundClient::signal(int sig) const {
  if (pid_ > 0) ::kill(pid_, sig);
}

int BackgroundClient::wait() {
  if (pid_ <= 0) return -1;
  int status = 0;
  const bool exited = eventually([&] { return ::waitpid(pid_, &status, WNOHANG) == pid_; }, std::chrono::seconds(30));
  if (!exited) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return -1;
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string BackgroundClient::out() const { return read_file(dir_ / "out"); }
std::string BackgroundClient::err() const { return read_file(dir_ / "err"); }

}  // namespace socket_test
