// Reading a file under /proc whose process or thread may be gone by the
// time it is read. An std::ifstream would throw there: the open can succeed
// and the read then fail (ESRCH), and libstdc++'s filebuf turns a failed
// read into an exception (basic_filebuf::underflow error reading the file).
// Thrown from a test between starting a thread and joining it, that
// exception destroys a joinable std::thread and aborts the whole suite.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace socket_test {

// The whole file, or "" when it cannot be opened or read whole.
inline std::string read_proc_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, std::size_t(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0) out.clear();
      break;
    }
  }
  ::close(fd);
  return out;
}

}  // namespace socket_test
