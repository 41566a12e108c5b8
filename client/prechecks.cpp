#include "client/prechecks.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "client/load/placement.hpp"
#include "client/results/cpu_time.hpp"
#include "client/tls_config.hpp"
#include "core/tls/context.hpp"
#include "core/tls/session.hpp"

namespace ringhttp::client {
namespace {

// A plain blocking connect before any worker starts, so that a server that
// is not there gets one clear message instead of a table of zeros. The
// target's addresses are tried in order; `first` is the one that accepted,
// where every connection goes first. Returns the connected descriptor (or
// -1 with `error` set).
int connect_blocking(const net::Address& address, std::uint64_t timeout_ns, std::string& error) {
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    error = std::string("socket: ") + std::strerror(errno);
    return -1;
  }
  int rc = ::connect(fd, address.get(), address.length);
  int failure = rc == 0 ? 0 : errno;
  if (failure == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, int(timeout_ns / 1'000'000));
    socklen_t len = sizeof failure;
    if (ready <= 0) {
      failure = ETIMEDOUT;
    } else {
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &len);
    }
  }
  if (failure == 0) return fd;
  ::close(fd);
  error = std::strerror(failure);
  return -1;
}

// `connected` is the socket that reached `first`, left open for the
// checks of the protocol spoken on it (TLS, h2c): one connection in all.
std::string check_reachable(const Options& options, std::uint32_t& first, int& connected) {
  const std::vector<net::Address>& addresses = options.target.addresses;
  std::string failures;
  for (std::uint32_t i = 0; i < addresses.size(); ++i) {
    std::string error;
    const int fd = connect_blocking(addresses[i], options.connect_timeout_ns, error);
    if (fd >= 0) {
      connected = fd;
      first = i;
      return {};
    }
    if (addresses.size() == 1) return "cannot connect to " + addresses[i].to_string() + ": " + error;
    failures.append(failures.empty() ? "" : "; ").append(addresses[i].to_string()).append(": ").append(error);
  }
  return "cannot connect to " + options.target.host + " (" + failures + ")";
}

// Blocking from here, each send and receive bounded by `limit_ns`.
void make_blocking(int fd, std::uint64_t limit_ns) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const timeval limit{long(limit_ns / 1'000'000'000), long(limit_ns % 1'000'000'000 / 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

// https: one handshake before any worker starts, with the run's settings,
// so that a certificate that does not verify (or a server that does not
// speak TLS) stops the run with OpenSSL's reason rather than a stream of
// tls errors. With --http2, the server must also choose h2 by ALPN. On
// `fd`, connected to `address`, which it closes.
std::string check_tls(const Options& options, const net::Address& address, int fd) {
  std::string error;
  const std::unique_ptr<tls::ClientContext> context = tls::ClientContext::make(tls_config(options), error);
  if (context == nullptr) {
    ::close(fd);
    return "TLS: " + error;
  }
  const std::string failed = "TLS handshake with " + options.target.host + " (" + address.to_string() + ") failed: ";
  make_blocking(fd, options.connect_timeout_ns);
  tls::Session session;
  std::string result;
  if (!context->start(session, options.target.host, error)) result = failed + error;
  // The session writes each flight here, and reads from `input`.
  std::vector<char> out(tls::wire_out_record_bytes);
  char input[16 * 1024];
  tls::Wire wire;
  wire.out = out.data();
  wire.out_cap = out.size();
  while (result.empty()) {
    const tls::Session::Status status = session.handshake(wire);
    const bool wrote = wire.out_len > 0;
    for (std::size_t offset = 0; offset < wire.out_len;) {
      ssize_t sent = 0;
      do {
        sent = ::send(fd, wire.out + offset, wire.out_len - offset, MSG_NOSIGNAL);
      } while (sent < 0 && errno == EINTR);
      if (sent <= 0) {
        result = failed + "send: " + std::strerror(errno);
        break;
      }
      offset += std::size_t(sent);
    }
    wire.out_len = 0;
    if (!result.empty() || status == tls::Session::Status::done) break;
    if (status != tls::Session::Status::want_io) {
      result = failed + session.error_reason();
      break;
    }
    // A call that wrote may have stopped for room, which the send has made:
    // call again before waiting for the server, as when input is left.
    if (wrote || wire.in_len > 0) continue;
    ssize_t n = 0;
    do {
      n = ::recv(fd, input, sizeof input, 0);
    } while (n < 0 && errno == EINTR);
    if (n <= 0) {
      result = failed + (n == 0 ? std::string("the server closed the connection")
                                : errno == EAGAIN ? std::string("no answer within the connect timeout")
                                                  : std::string(std::strerror(errno)));
      break;
    }
    wire.in = input;
    wire.in_len = std::size_t(n);
  }
  ::close(fd);
  // The server's no_application_protocol alert: it speaks none of what
  // ALPN offered, and --http2 offers h2 alone.
  const bool refused_alpn = ERR_GET_LIB(session.error_code()) == ERR_LIB_SSL &&
                            ERR_GET_REASON(session.error_code()) ==
                                SSL_AD_REASON_OFFSET + SSL_AD_NO_APPLICATION_PROTOCOL;
  if (!result.empty() && options.http2 && refused_alpn) {
    result += " (--http2 offers h2 alone: the server does not speak HTTP/2 over TLS)";
  }
  if (result.empty() && options.http2 && session.alpn() != "h2") {
    result = "--http2: " + options.target.host + " (" + address.to_string() + ") did not choose h2 by ALPN (it chose ";
    result += session.alpn().empty() ? std::string("none") : std::string(session.alpn());
    result += "): it does not speak HTTP/2 over TLS there";
  }
  return result;
}

// h2c: the connection preface and an empty SETTINGS, once before any
// worker starts. A server that speaks h2c answers with its SETTINGS
// (RFC 9113 section 3.4); one that speaks only HTTP/1.1 answers the
// preface as a bad request, and the run stops saying so rather than
// counting a failed connection per attempt. On `fd`, connected to
// `address`, which it closes.
std::string check_h2c(const Options& options, const net::Address& address, int fd) {
  make_blocking(fd, options.connect_timeout_ns);
  // The preface, then a SETTINGS frame's 9-byte header: length 0, type 4.
  static constexpr char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
  constexpr std::size_t preface_bytes = sizeof preface - 1;
  constexpr std::size_t frame_header_bytes = 9;
  constexpr char settings_type = 4;
  std::string result;
  if (::send(fd, preface, preface_bytes, MSG_NOSIGNAL) != ssize_t(preface_bytes)) {
    result = "send: " + std::string(std::strerror(errno));
  } else {
    char got[64];
    std::size_t have = 0;
    while (have < frame_header_bytes) {
      const ssize_t n = ::recv(fd, got + have, sizeof got - have, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      have += std::size_t(n);
    }
    if (have == 0) {
      result = "no answer to the HTTP/2 connection preface";
    } else if (have < frame_header_bytes || got[3] != settings_type) {
      std::string start;
      for (std::size_t i = 0; i < std::min<std::size_t>(have, 16); ++i) {
        start += got[i] >= 0x20 && got[i] < 0x7f ? got[i] : '.';
      }
      result = "the server answered the HTTP/2 preface with \"" + start + "\", not SETTINGS";
    }
  }
  ::close(fd);
  if (result.empty()) return result;
  return "--http2-prior-knowledge: " + options.target.host + " (" + address.to_string() + "): " + result +
         ": it does not speak h2c (HTTP/2 without TLS) there";
}

// Every connection is a descriptor, and a reconnect briefly holds two.
// The soft limit (often 1024) is raised toward the hard one; a run that
// cannot fit is refused rather than left to fail connects all along.
std::string raise_fd_limit(const Options& options) {
  constexpr rlim_t spare_fds = 64;  // stdio, rings, buffer files, a reconnect's overlap
  const std::uint32_t connections = shard_share(options).connections;
  const rlim_t needed = rlim_t(connections) + spare_fds;
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed) return {};
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
    return std::to_string(connections) + " connections need " + std::to_string(needed) +
           " descriptors, but the hard limit (ulimit -Hn) is " + std::to_string(limit.rlim_max);
  }
  limit.rlim_cur = needed;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return std::string("cannot raise the descriptor limit: ") + std::strerror(errno);
  return {};
}

}  // namespace

std::optional<int> check_before_start(const Options& options, std::uint32_t& first_address) {
  if (options.server_pid != 0 && !other_process_cpu_ns(options.server_pid)) {
    std::fprintf(stderr, "client: --server-pid %d: no such process (cannot read /proc/%d/stat)\n", options.server_pid,
                 options.server_pid);
    return 2;
  }
  if (options.server_pid != 0) {
    const std::string warning = shared_cpu_warning(options.cpus, server_cpus(options.server_pid), options.server_pid);
    if (!warning.empty()) std::fputs(warning.c_str(), stderr);
  }
  if (const std::string error = raise_fd_limit(options); !error.empty()) {
    std::fprintf(stderr, "client: %s\n", error.c_str());
    return 2;
  }
  // One connection for all the checks: it reaches the server, then speaks
  // the run's TLS or h2c, and carries no request.
  int fd = -1;
  if (const std::string error = check_reachable(options, first_address, fd); !error.empty()) {
    std::fprintf(stderr, "client: %s\n", error.c_str());
    return 1;
  }
  const net::Address& address = options.target.addresses[first_address];
  std::string error;
  if (options.target.scheme == Scheme::https) {
    error = check_tls(options, address, fd);
  } else if (options.http2_prior_knowledge) {
    error = check_h2c(options, address, fd);
  } else {
    ::close(fd);
  }
  if (!error.empty()) {
    std::fprintf(stderr, "client: %s\n", error.c_str());
    return 1;
  }
  return std::nullopt;
}

}  // namespace ringhttp::client
