#include "support/nginx.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include "support/certificates.hpp"
#include "support/eventually.hpp"
#include "support/ipv6.hpp"
#include "support/shell.hpp"

namespace socket_test {
namespace {

constexpr int start_attempts = 5;  // each with a fresh port, when the last one was taken in the meantime

// An executable `name` in one of $PATH's directories.
bool on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) throw std::runtime_error("nginx fixture: cannot write " + path);
}

// A port that was free on 127.0.0.1 (and on ::1 when `also_ipv6`) a moment
// ago; nginx binds it next (start() tries again if it lost the race).
std::uint16_t free_port(bool also_ipv6) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    ::close(fd);
    if (!bound) continue;
    const std::uint16_t port = ntohs(addr.sin_port);
    if (!also_ipv6) return port;
    const int fd6 = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in6 addr6{};
    addr6.sin6_family = AF_INET6;
    addr6.sin6_addr = in6addr_loopback;
    addr6.sin6_port = htons(port);
    const bool bound6 = ::bind(fd6, reinterpret_cast<sockaddr*>(&addr6), sizeof addr6) == 0;
    ::close(fd6);
    if (bound6) return port;
  }
  throw std::runtime_error("nginx fixture: no free loopback port");
}

bool connects(int family, const sockaddr* addr, socklen_t len) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool ok = ::connect(fd, addr, len) == 0;
  ::close(fd);
  return ok;
}

bool connects_ipv6(std::uint16_t port) {
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  addr.sin6_port = htons(port);
  return connects(AF_INET6, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
}

bool connects_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return connects(AF_UNIX, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
}

}  // namespace

testing::AssertionResult nginx_installed() {
  if (::access(Nginx::nginx_path, X_OK) != 0) {
    return testing::AssertionFailure() << "needs nginx at " << Nginx::nginx_path
                                       << " (Debian: nginx-light; tools/install-deps.sh installs it)";
  }
  if (!on_path("openssl")) {
    return testing::AssertionFailure() << "needs the openssl command (Debian: openssl; tools/install-deps.sh installs it)";
  }
  return testing::AssertionSuccess();
}

Nginx::Nginx(NginxOptions options) : options_(options) {
  if (const testing::AssertionResult installed = nginx_installed(); !installed) {
    throw std::runtime_error(std::string("nginx fixture: ") + installed.message());
  }
  std::string dir_template = testing::TempDir() + "ringhttp_nginx.XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) {
    throw std::runtime_error("nginx fixture: mkdtemp " + dir_template + ": " + std::strerror(errno));
  }
  dir_ = dir_template;
  try {
    if (options_.unix_socket) unix_socket_path_ = dir_ + "/nginx.sock";
    if (options_.access_log) access_log_path_ = dir_ + "/access.log";
    ipv6_ = options_.ipv6 && has_ipv6_loopback();
    if (options_.tls) make_certificates();
    bool started = false;
    for (int attempt = 0; attempt < start_attempts && !started; ++attempt) {
      port_ = free_port(ipv6_);
      write_config();
      started = start();
    }
    if (!started) throw std::runtime_error("nginx fixture: nginx exited at start:\n" + error_log());
  } catch (...) {
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

Nginx::~Nginx() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

// The certificates of support/certificates.hpp, in dir_.
void Nginx::make_certificates() {
  const Certificates files = socket_test::make_certificates(dir_);
  ca_file_ = files.ca_file;
  ca_key_file_ = files.ca_key_file;
  cert_file_ = files.cert_file;
  key_file_ = files.key_file;
  wrong_ca_file_ = files.wrong_ca_file;
}

void Nginx::write_config() const {
  const std::string port = std::to_string(port_);
  const std::string ssl = std::string(options_.tls ? " ssl" : "") + (options_.http2 ? " http2" : "");
  std::vector<std::string> listens = {"127.0.0.1:" + port};
  if (ipv6_) listens.push_back("[::1]:" + port);
  if (options_.unix_socket) listens.push_back("unix:" + unix_socket_path_);
  auto listen_lines = [&](const char* extra) {
    std::string lines;
    for (const auto& at : listens) lines += "    listen " + at + ssl + extra + ";\n";
    return lines;
  };
  std::ostringstream conf;
  conf << "daemon off; master_process off; worker_processes 1;\n"
       << "pid " << dir_ << "/nginx.pid; error_log " << dir_ << "/error.log;\n"
       << "events { worker_connections 1024; }\n"
       << "http {\n";
  if (options_.access_log) {
    conf
        << "  log_format fixture '$connection $connection_requests $ssl_session_reused $ssl_protocol $host $request';\n"
        << "  access_log " << access_log_path_ << " fixture;\n";
  } else {
    conf << "  access_log off;\n";
  }
  conf << "  client_body_temp_path " << dir_ << "/body; proxy_temp_path " << dir_ << "/proxy;\n"
       << "  fastcgi_temp_path " << dir_ << "/fastcgi; uwsgi_temp_path " << dir_ << "/uwsgi;\n"
       << "  scgi_temp_path " << dir_ << "/scgi;\n"
       << "  keepalive_requests " << options_.keepalive_requests << ";\n";
  if (options_.tls) {
    conf << "  ssl_certificate " << cert_file_ << "; ssl_certificate_key " << key_file_ << ";\n"
         << "  ssl_protocols " << (options_.tls12_only ? "TLSv1.2" : "TLSv1.2 TLSv1.3") << ";\n"
         << "  ssl_session_cache shared:SSL:1m; ssl_session_tickets on;\n";
  }
  conf << "  server {\n"
       << listen_lines(" default_server") << "    server_name localhost 127.0.0.1;\n"
       << "    location / { return 200 \"Hello, World!\"; }\n"
       << "    location = /host { return 200 \"$http_host\"; }\n"
       << "    location /close { keepalive_timeout 0; return 200 \"closing\"; }\n"
       << "  }\n"
       << "  server {\n"
       << listen_lines("") << "    server_name a.test;\n"
       << "    location / { return 200 \"vhost a\"; }\n"
       << "  }\n"
       << "  server {\n"
       << listen_lines("") << "    server_name b.test;\n"
       << "    location / { return 200 \"vhost b\"; }\n"
       << "  }\n"
       << "}\n";
  write_file(dir_ + "/nginx.conf", conf.str());
}

bool Nginx::start() {
  std::error_code ignored;
  std::filesystem::remove(error_log_path(), ignored);
  std::filesystem::remove(unix_socket_path_, ignored);  // nginx will not bind over a stale one
  // Everything the child needs, made before fork: it only makes
  // async-signal-safe calls.
  const std::string conf_path = dir_ + "/nginx.conf";
  const std::string error_path = error_log_path();
  const std::string output_path = dir_ + "/nginx.out";
  const std::string prefix = dir_ + "/";
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("nginx fixture: fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int out = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    // -e: the error log before the config is read (Debian's default,
    // /var/log/nginx/error.log, may not be writable).
    ::execl(nginx_path, nginx_path, "-p", prefix.c_str(), "-e", error_path.c_str(), "-c", conf_path.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Listening when every listener takes a connect; or gone.
  bool exited = false;
  const bool listening = eventually(
      [&] {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
          exited = true;
          pid_ = -1;
          return true;
        }
        return accepts() && (!ipv6_ || connects_ipv6(port_)) &&
               (unix_socket_path_.empty() || connects_unix(unix_socket_path_));
      },
      std::chrono::seconds(30), std::chrono::milliseconds(5));
  if (exited) {
    // Another port next time only if this one was taken; anything else is final.
    if (error_log().find("Address already in use") != std::string::npos) return false;
    throw std::runtime_error("nginx fixture: nginx exited at start:\n" + error_log() + read_file(output_path));
  }
  if (!listening) throw std::runtime_error("nginx fixture: nginx did not listen within 30 s:\n" + error_log());
  return true;
}

void Nginx::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string Nginx::url(const std::string& path) const { return url_for("127.0.0.1", path); }

std::string Nginx::url_for(const std::string& host, const std::string& path) const {
  return std::string(options_.tls ? "https://" : "http://") + host + ":" + std::to_string(port_) + path;
}

std::string Nginx::url_ipv6(const std::string& path) const { return url_for("[::1]", path); }

bool Nginx::accepts() const {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port_);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return connects(AF_INET, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
}

std::string Nginx::error_log() const { return read_file(error_log_path()); }

std::vector<Nginx::LogLine> Nginx::access_log() const {
  std::vector<LogLine> lines;
  if (access_log_path_.empty()) return lines;
  std::istringstream in(read_file(access_log_path_));
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty()) continue;
    std::istringstream fields(text);
    LogLine line;
    fields >> line.connection >> line.connection_requests >> line.ssl_session_reused >> line.ssl_protocol >> line.host;
    std::getline(fields >> std::ws, line.request);
    lines.push_back(std::move(line));
  }
  return lines;
}

std::size_t Nginx::logged_requests() const { return access_log().size(); }

std::size_t Nginx::logged_connections() const {
  std::set<std::string> connections;
  for (const auto& line : access_log()) connections.insert(line.connection);
  return connections.size();
}

std::size_t Nginx::logged_resumed_requests() const {
  std::size_t resumed = 0;
  for (const auto& line : access_log()) resumed += line.ssl_session_reused == "r" ? 1 : 0;
  return resumed;
}

std::size_t Nginx::logged_resumed_connections() const {
  std::set<std::string> connections;
  for (const auto& line : access_log()) {
    if (line.ssl_session_reused == "r") connections.insert(line.connection);
  }
  return connections.size();
}

}  // namespace socket_test
