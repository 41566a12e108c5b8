// Debian's nginx as a peer for the tests: on a free loopback port of its own
// for as long as a test runs, plain HTTP or HTTPS with a throwaway CA that
// the openssl command makes, HTTP/1.1 or HTTP/2, with an optional [::1] and
// Unix-socket listener and an access log that the test reads back
// (requests, connections and TLS resumptions as the server saw them).
//
// What it serves, on every listener:
//   default server (localhost, 127.0.0.1, anything else):
//     /        "Hello, World!" (any path not below)
//     /host    the request's Host header, as sent
//     /close   "closing", with Connection: close (keepalive_timeout 0)
//   server_name a.test: "vhost a" for every request
//   server_name b.test: "vhost b" for every request
// chosen by Host (and, over TLS, the certificate by SNI; it covers every
// name). Keep-alive connections last keepalive_requests (100,000 unless
// told) requests.
//
// Everything lives in a temp dir of its own (removed by the destructor):
// nginx.conf, error.log, access.log, nginx.sock, and with TLS the keys and
// certificates. nginx runs with master_process off and daemon off as the
// current user, killed (SIGKILL) by the destructor, or by the kernel if the
// test process dies (PR_SET_PDEATHSIG).
#pragma once

#include <sys/types.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace socket_test {

struct NginxOptions {
  // HTTPS on every listener (also the Unix socket: TLS over it, as curl's
  // --unix-socket with an https:// URL does). TLSv1.2 and TLSv1.3, session
  // tickets on and a shared session cache, so both kinds of resumption work.
  bool tls = false;
  // Also listen on [::1] on the same port, when this machine has ::1
  // (has_ipv6_loopback()); listens_on_ipv6() says whether it does.
  bool ipv6 = false;
  // Also listen on a Unix-domain socket (unix_socket_path()).
  bool unix_socket = false;
  // One line a request in access_log_path() (see Nginx::LogLine).
  bool access_log = false;
  // HTTP/2 on every listener (nginx 1.22's "listen ... http2"): with TLS,
  // h2 chosen by ALPN (http/1.1 still offered); without, h2c by prior
  // knowledge only (an HTTP/1.1 request then fails).
  bool http2 = false;
  // Requests a keep-alive connection may carry before nginx closes it
  // (nginx's own default is 1,000).
  std::uint32_t keepalive_requests = 100'000;
  // With tls: TLS 1.2 alone, so that a TLS 1.2 cipher is chosen.
  bool tls12_only = false;
};

// Whether the tests can start one: /usr/sbin/nginx is executable and the
// openssl command is on PATH. tools/install-deps.sh installs both
// (nginx-light, openssl), so a test that needs nginx asserts this and fails,
// naming the package, where either is missing: ASSERT_TRUE(nginx_installed()).
testing::AssertionResult nginx_installed();

class Nginx {
 public:
  static constexpr const char* nginx_path = "/usr/sbin/nginx";

  // One line of the access log: log_format
  //   $connection $connection_requests $ssl_session_reused $ssl_protocol $host $request
  // ("-" for a variable without a value, e.g. the TLS ones over plain HTTP).
  struct LogLine {
    std::string connection;           // nginx's serial number of the connection
    std::string connection_requests;  // 1 for the connection's first request
    std::string ssl_session_reused;   // "r" resumed, "." full handshake, "-" plain HTTP
    std::string ssl_protocol;         // "TLSv1.3", "TLSv1.2" or "-"
    std::string host;                 // $host: the Host header's name (lower case, no port) or the server name
    std::string request;              // the request line, e.g. "GET / HTTP/1.1"
  };

  // Makes the certificates (with TLS), writes the config, starts nginx and
  // waits (30 s at most) until every listener accepts. Throws
  // std::runtime_error with the reason (openssl's output, nginx's error log)
  // when it cannot.
  explicit Nginx(NginxOptions options = {});
  ~Nginx();
  Nginx(const Nginx&) = delete;
  Nginx& operator=(const Nginx&) = delete;

  const NginxOptions& options() const { return options_; }
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // "http://127.0.0.1:PORT/" or "https://..."; `path` starts with "/".
  std::string url(const std::string& path = "/") const;
  // The same with a host name in place of 127.0.0.1 (e.g. "localhost",
  // "a.test": the caller resolves or connects to 127.0.0.1 itself).
  std::string url_for(const std::string& host, const std::string& path = "/") const;
  // Whether nginx listens on [::1] too (asked for, and this machine has ::1);
  // url_ipv6() is "http://[::1]:PORT/..." (or https).
  bool listens_on_ipv6() const { return ipv6_; }
  std::string url_ipv6(const std::string& path = "/") const;
  // The Unix socket's path; "" without options.unix_socket.
  const std::string& unix_socket_path() const { return unix_socket_path_; }

  // Whether a TCP connect to 127.0.0.1:port() succeeds now.
  bool accepts() const;

  // The fixture's files.
  const std::string& dir() const { return dir_; }
  std::string error_log_path() const { return dir_ + "/error.log"; }
  std::string error_log() const;  // its contents, for failure messages
  // TLS only ("" otherwise): the CA that signed the server's certificate
  // (PEM), its key, the server's certificate and key, and a second CA that
  // signed nothing here, for "wrong CA" tests.
  const std::string& ca_file() const { return ca_file_; }
  const std::string& ca_key_file() const { return ca_key_file_; }
  const std::string& cert_file() const { return cert_file_; }
  const std::string& key_file() const { return key_file_; }
  const std::string& wrong_ca_file() const { return wrong_ca_file_; }

  // The access log ("" and empty without options.access_log). nginx writes a
  // request's line when it has finished it, which can be just after the
  // client has read the response: wait for a count with eventually().
  const std::string& access_log_path() const { return access_log_path_; }
  std::vector<LogLine> access_log() const;
  std::size_t logged_requests() const;     // lines
  std::size_t logged_connections() const;  // distinct $connection values
  // Lines whose $ssl_session_reused is "r" (requests on a resumed TLS
  // session), and the distinct connections among them.
  std::size_t logged_resumed_requests() const;
  std::size_t logged_resumed_connections() const;

 private:
  void make_certificates();
  void write_config() const;
  bool start();  // false: nginx exited (e.g. the port was taken in the meantime)
  void stop();

  NginxOptions options_;
  std::string dir_;
  std::uint16_t port_ = 0;
  bool ipv6_ = false;
  pid_t pid_ = -1;
  std::string unix_socket_path_;
  std::string access_log_path_;
  std::string ca_file_;
  std::string ca_key_file_;
  std::string cert_file_;
  std::string key_file_;
  std::string wrong_ca_file_;
};

}  // namespace socket_test
