// The nginx fixture itself (support/nginx.hpp), so that the client's tests
// against it can trust it: what each server and path answers, over plain
// HTTP, HTTPS (a tiny OpenSSL client over a blocking socket), [::1] and the
// Unix socket; that its CA verifies its certificate for every name and the
// other CA does not; that the access log counts requests, connections and
// resumed TLS sessions as they were made.
#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <memory>
#include <string>

#include "support/connection.hpp"
#include "support/eventually.hpp"
#include "support/ipv6.hpp"
#include "support/nginx.hpp"

namespace socket_test {
namespace {

// tools/install-deps.sh installs nginx and openssl: without them the test
// fails, naming the package.
#define SKIP_WITHOUT_NGINX() ASSERT_TRUE(nginx_installed())

std::string get(const std::string& path, const std::string& host, bool close = false) {
  return "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n";
}

// The body of one response that ended the connection (Content-Length framed).
std::string body_of(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? "<no head in: " + response + ">" : response.substr(end + 4);
}

// A blocking stream socket connected to 127.0.0.1:port, [::1]:port or a
// Unix socket, with a 5 s receive timeout; -1 when it cannot connect.
int connect_tcp(std::uint16_t port, bool ipv6 = false) {
  const int fd = ::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  int rc = -1;
  if (ipv6) {
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_loopback;
    addr.sin6_port = htons(port);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } else {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port);
    rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  }
  if (rc != 0) ::close(fd);
  return rc == 0 ? fd : -1;
}

int connect_unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` and reads until the peer closes; closes fd.
std::string plain_exchange(int fd, const std::string& request) {
  std::string out;
  if (fd < 0) return out;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == ssize_t(request.size())) {
    char chunk[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd, chunk, sizeof chunk, 0)) > 0) out.append(chunk, std::size_t(n));
  }
  ::close(fd);
  return out;
}

struct SessionFree {
  void operator()(SSL_SESSION* session) const { SSL_SESSION_free(session); }
};
using Session = std::unique_ptr<SSL_SESSION, SessionFree>;

struct TlsOptions {
  std::string ca_file;           // the only trusted CA
  std::string sni;               // server name sent; "" none
  std::string verify_name;       // DNS name or IP address the certificate must cover; "" none
  SSL_SESSION* offer = nullptr;  // a session to resume
  int max_version = 0;           // e.g. TLS1_2_VERSION; 0: OpenSSL's highest
  bool tickets = true;           // false: SSL_OP_NO_TICKET (TLS 1.2 resumes by session ID then)
};

struct TlsExchange {
  bool handshake = false;
  long verify_result = X509_V_OK;
  bool resumed = false;
  std::string protocol;
  std::string response;  // everything read until the server closed
  std::string error;
  Session session;  // after the response: with TLS 1.3, the tickets came with it
};

// SIGPIPE held back on this thread for as long as it lives: OpenSSL's socket
// BIO writes with write(), which raises it on a Unix socket whose peer has
// closed (a TCP one only after a reset). One that came is consumed.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &before_);
  }
  ~SigpipeBlocked() {
    const timespec none{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &none) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
  sigset_t before_;
};

// A TLS client over a connected blocking socket (closed here): the
// handshake, verified against options.ca_file, then `request` and
// everything the server sends until it closes.
TlsExchange tls_exchange(int fd, const TlsOptions& options, const std::string& request) {
  const SigpipeBlocked no_sigpipe;
  TlsExchange result;
  if (fd < 0) {
    result.error = "no connection";
    return result;
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  SSL_CTX_load_verify_locations(ctx.get(), options.ca_file.c_str(), nullptr);
  if (options.max_version != 0) SSL_CTX_set_max_proto_version(ctx.get(), options.max_version);
  if (!options.tickets) SSL_CTX_set_options(ctx.get(), SSL_OP_NO_TICKET);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), SSL_free);
  SSL_set_fd(ssl.get(), fd);
  if (!options.sni.empty()) SSL_set_tlsext_host_name(ssl.get(), options.sni.c_str());
  if (!options.verify_name.empty()) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl.get());
    if (X509_VERIFY_PARAM_set1_ip_asc(param, options.verify_name.c_str()) != 1) {
      SSL_set1_host(ssl.get(), options.verify_name.c_str());
    }
  }
  if (options.offer != nullptr) SSL_set_session(ssl.get(), options.offer);
  ERR_clear_error();
  result.handshake = SSL_connect(ssl.get()) == 1;
  result.verify_result = SSL_get_verify_result(ssl.get());
  if (!result.handshake) {
    char text[256];
    ERR_error_string_n(ERR_get_error(), text, sizeof text);
    result.error = text;
    ::close(fd);
    return result;
  }
  result.resumed = SSL_session_reused(ssl.get()) == 1;
  result.protocol = SSL_get_version(ssl.get());
  if (SSL_write(ssl.get(), request.data(), int(request.size())) == int(request.size())) {
    char chunk[4096];
    int n = 0;
    while ((n = SSL_read(ssl.get(), chunk, sizeof chunk)) > 0) result.response.append(chunk, std::size_t(n));
  }
  result.session.reset(SSL_get1_session(ssl.get()));
  // Without it SSL_free marks the session not resumable. The server has
  // usually gone by now: the write may fail (EPIPE), which is fine.
  SSL_shutdown(ssl.get());
  ::close(fd);
  return result;
}

// Plain HTTP: one keep-alive connection reaches all three servers, /host
// echoes the Host header as sent, /close ends the connection; the access log
// has each request on one connection, then a second connection.
TEST(Nginx, plain_http_serves_each_server_and_path_and_the_log_counts_them) {
  SKIP_WITHOUT_NGINX();
  Nginx nginx({.access_log = true});
  {
    Connection connection(nginx.port());
    connection.send_all(get("/", "localhost"));
    EXPECT_EQ(connection.read_response().body, "Hello, World!");
    connection.send_all(get("/anything", "127.0.0.1"));
    EXPECT_EQ(connection.read_response().body, "Hello, World!");
    connection.send_all(get("/", "a.test"));
    EXPECT_EQ(connection.read_response().body, "vhost a");
    connection.send_all(get("/host", "b.test:8080"));
    EXPECT_EQ(connection.read_response().body, "vhost b");
    connection.send_all(get("/host", "Example.Test:1234"));
    EXPECT_EQ(connection.read_response().body, "Example.Test:1234");
    connection.send_all(get("/close", "localhost"));
    const Response closing = connection.read_response();
    EXPECT_EQ(closing.body, "closing");
    EXPECT_TRUE(closing.has_token("Connection", "close"));
    EXPECT_TRUE(connection.expect_closed());
  }
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 6; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 1u);
  EXPECT_EQ(nginx.logged_resumed_requests(), 0u);
  const auto lines = nginx.access_log();
  EXPECT_EQ(lines[0].connection_requests, "1");
  EXPECT_EQ(lines[5].connection_requests, "6");
  EXPECT_EQ(lines[0].ssl_session_reused, "-");
  EXPECT_EQ(lines[0].ssl_protocol, "-");
  EXPECT_EQ(lines[2].host, "a.test");
  EXPECT_EQ(lines[4].host, "example.test");
  EXPECT_EQ(lines[5].request, "GET /close HTTP/1.1");

  EXPECT_EQ(body_of(plain_exchange(connect_tcp(nginx.port()), get("/", "localhost", true))), "Hello, World!");
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 7; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 2u);
}

// The default keep-alive limit is 100,000 requests; the option sets another.
TEST(Nginx, keepalive_requests_ends_a_connection_after_that_many) {
  SKIP_WITHOUT_NGINX();
  Nginx nginx({.keepalive_requests = 2});
  Connection connection(nginx.port());
  connection.send_all(get("/", "localhost"));
  EXPECT_FALSE(connection.read_response().has_token("Connection", "close"));
  connection.send_all(get("/", "localhost"));
  EXPECT_TRUE(connection.read_response().has_token("Connection", "close"));
  EXPECT_TRUE(connection.expect_closed());
}

// The fixture's CA verifies the certificate for every name it serves (and
// not for another); SNI a.test and b.test reach their servers.
TEST(Nginx, https_verifies_with_the_fixtures_ca_for_each_name) {
  SKIP_WITHOUT_NGINX();
  Nginx nginx({.tls = true});
  ASSERT_FALSE(nginx.ca_file().empty());
  EXPECT_EQ(nginx.url("/x"), "https://127.0.0.1:" + std::to_string(nginx.port()) + "/x");
  const TlsExchange plain_ip = tls_exchange(
      connect_tcp(nginx.port()), {.ca_file = nginx.ca_file(), .verify_name = "127.0.0.1"}, get("/", "127.0.0.1", true));
  ASSERT_TRUE(plain_ip.handshake) << plain_ip.error << " verify " << plain_ip.verify_result;
  EXPECT_EQ(body_of(plain_ip.response), "Hello, World!");
  EXPECT_EQ(plain_ip.protocol, "TLSv1.3");

  const TlsExchange localhost = tls_exchange(
      connect_tcp(nginx.port()), {.ca_file = nginx.ca_file(), .sni = "localhost", .verify_name = "localhost"},
      get("/host", "localhost:" + std::to_string(nginx.port()), true));
  ASSERT_TRUE(localhost.handshake) << localhost.error;
  EXPECT_EQ(body_of(localhost.response), "localhost:" + std::to_string(nginx.port()));

  for (const auto& [name, body] : {std::pair{"a.test", "vhost a"}, std::pair{"b.test", "vhost b"}}) {
    const TlsExchange vhost =
        tls_exchange(connect_tcp(nginx.port()), {.ca_file = nginx.ca_file(), .sni = name, .verify_name = name},
                     get("/", name, true));
    ASSERT_TRUE(vhost.handshake) << name << ": " << vhost.error;
    EXPECT_EQ(body_of(vhost.response), body) << name;
  }

  // TLS 1.2 is served too.
  const TlsExchange tls12 = tls_exchange(connect_tcp(nginx.port()),
                                         {.ca_file = nginx.ca_file(), .sni = "a.test", .max_version = TLS1_2_VERSION},
                                         get("/", "a.test", true));
  ASSERT_TRUE(tls12.handshake) << tls12.error;
  EXPECT_EQ(tls12.protocol, "TLSv1.2");
  EXPECT_EQ(body_of(tls12.response), "vhost a");

  const TlsExchange other_name =
      tls_exchange(connect_tcp(nginx.port()), {.ca_file = nginx.ca_file(), .sni = "c.test", .verify_name = "c.test"},
                   get("/", "c.test"));
  EXPECT_FALSE(other_name.handshake);
  EXPECT_EQ(other_name.verify_result, X509_V_ERR_HOSTNAME_MISMATCH);
}

TEST(Nginx, https_fails_verification_with_the_wrong_ca) {
  SKIP_WITHOUT_NGINX();
  Nginx nginx({.tls = true});
  ASSERT_FALSE(nginx.wrong_ca_file().empty());
  ASSERT_NE(nginx.wrong_ca_file(), nginx.ca_file());
  const TlsExchange exchange = tls_exchange(
      connect_tcp(nginx.port()), {.ca_file = nginx.wrong_ca_file(), .sni = "localhost", .verify_name = "localhost"},
      get("/", "localhost", true));
  EXPECT_FALSE(exchange.handshake);
  EXPECT_EQ(exchange.verify_result, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY) << exchange.error;
  EXPECT_TRUE(exchange.response.empty());
}

// A second connection offering the first one's session is resumed, by a
// TLS 1.3 ticket and by a TLS 1.2 session ID from the shared cache; the
// access log counts the resumed requests and connections.
TEST(Nginx, a_tls_session_resumes_by_ticket_and_by_session_id_and_the_log_counts_it) {
  SKIP_WITHOUT_NGINX();
  Nginx nginx({.tls = true, .access_log = true});
  struct Way {
    const char* name;
    int max_version;
    bool tickets;
    const char* protocol;
  };
  for (const Way way :
       {Way{"TLS 1.3 ticket", 0, true, "TLSv1.3"}, Way{"TLS 1.2 session ID", TLS1_2_VERSION, false, "TLSv1.2"}}) {
    SCOPED_TRACE(way.name);
    const TlsOptions options{
        .ca_file = nginx.ca_file(), .sni = "localhost", .max_version = way.max_version, .tickets = way.tickets};
    TlsExchange first = tls_exchange(connect_tcp(nginx.port()), options, get("/", "localhost", true));
    ASSERT_TRUE(first.handshake) << first.error;
    EXPECT_FALSE(first.resumed);
    EXPECT_EQ(first.protocol, way.protocol);
    EXPECT_EQ(body_of(first.response), "Hello, World!");
    ASSERT_TRUE(first.session);
    TlsOptions again = options;
    again.offer = first.session.get();
    const TlsExchange second = tls_exchange(connect_tcp(nginx.port()), again, get("/", "localhost", true));
    ASSERT_TRUE(second.handshake) << second.error;
    EXPECT_TRUE(second.resumed);
    EXPECT_EQ(body_of(second.response), "Hello, World!");
  }
  ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 4; })) << nginx.logged_requests();
  EXPECT_EQ(nginx.logged_connections(), 4u);
  EXPECT_EQ(nginx.logged_resumed_requests(), 2u);
  EXPECT_EQ(nginx.logged_resumed_connections(), 2u);
  const auto lines = nginx.access_log();
  EXPECT_EQ(lines[0].ssl_session_reused, ".");
  EXPECT_EQ(lines[0].ssl_protocol, "TLSv1.3");
  EXPECT_EQ(lines[1].ssl_session_reused, "r");
  EXPECT_EQ(lines[3].ssl_session_reused, "r");
  EXPECT_EQ(lines[3].ssl_protocol, "TLSv1.2");
}

// The Unix socket serves the same servers: plain, and TLS over it.
TEST(Nginx, the_unix_socket_serves_the_same_servers) {
  SKIP_WITHOUT_NGINX();
  {
    Nginx nginx({.unix_socket = true, .access_log = true});
    ASSERT_FALSE(nginx.unix_socket_path().empty());
    EXPECT_EQ(body_of(plain_exchange(connect_unix(nginx.unix_socket_path()), get("/", "localhost", true))),
              "Hello, World!");
    EXPECT_EQ(body_of(plain_exchange(connect_unix(nginx.unix_socket_path()), get("/", "b.test", true))), "vhost b");
    EXPECT_EQ(body_of(plain_exchange(connect_unix(nginx.unix_socket_path()), get("/host", "x.test", true))), "x.test");
    ASSERT_TRUE(eventually([&] { return nginx.logged_requests() == 3; })) << nginx.logged_requests();
    EXPECT_EQ(nginx.logged_connections(), 3u);
  }
  Nginx nginx({.tls = true, .unix_socket = true});
  const TlsExchange exchange =
      tls_exchange(connect_unix(nginx.unix_socket_path()),
                   {.ca_file = nginx.ca_file(), .sni = "a.test", .verify_name = "a.test"}, get("/", "a.test", true));
  ASSERT_TRUE(exchange.handshake) << exchange.error;
  EXPECT_EQ(body_of(exchange.response), "vhost a");
}

TEST(Nginx, ipv6_listens_on_the_same_port_with_a_certificate_for_its_address) {
  SKIP_WITHOUT_NGINX();
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback (::1) here";
  Nginx nginx({.tls = true, .ipv6 = true});
  ASSERT_TRUE(nginx.listens_on_ipv6());
  EXPECT_EQ(nginx.url_ipv6("/host"), "https://[::1]:" + std::to_string(nginx.port()) + "/host");
  const std::string host = "[::1]:" + std::to_string(nginx.port());
  const TlsExchange exchange = tls_exchange(
      connect_tcp(nginx.port(), true), {.ca_file = nginx.ca_file(), .verify_name = "::1"}, get("/host", host, true));
  ASSERT_TRUE(exchange.handshake) << exchange.error << " verify " << exchange.verify_result;
  EXPECT_EQ(body_of(exchange.response), host);

  Nginx plain({.ipv6 = true});
  ASSERT_TRUE(plain.listens_on_ipv6());
  EXPECT_EQ(body_of(exchange_over_ipv6(plain.port(), get("/", "localhost", true))), "Hello, World!");
}

}  // namespace
}  // namespace socket_test
