// Shared pieces of the two floor responders: the fixed response, the
// request counter, the listening socket and the command line.
//
// A floor responder is the control row of the benchmark: the least CPU any
// HTTP/1.1 server can spend per request on this machine. It never parses a
// request; it only counts request ends ("\r\n\r\n") and answers each with the
// same static bytes. Anything a real server spends above this is its own cost.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace floor_bench {

// The same header set as ringhttp's /plaintext, byte for byte the same
// length (133 bytes), so that the control puts as many bytes on the wire as
// the server under test: every byte costs the kernel on both sides of the
// loopback and the load generator's parser. An origin server must send Date;
// a floor keeps no clock, so its Date is fixed (only its length matters).
inline constexpr char response[] =
    "HTTP/1.1 200 OK\r\n"
    "Server: floor/v1\r\n"
    "Content-Type: text/plain\r\n"
    "Date: Thu, 01 Jan 2026 00:00:00 GMT\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "Hello, World!";
inline constexpr std::size_t response_bytes = sizeof(response) - 1;
static_assert(response_bytes == 133, "keep the floor's response as long as ringhttp's /plaintext");

// Responses gathered into one send at most. wrk pipelines 16 per batch, so two
// batches fit; more pending responses simply take another send.
inline constexpr std::size_t responses_per_send_max = 64;

inline constexpr int listen_backlog = 4096;

// Counts request ends ("\r\n\r\n") in a byte stream that arrives in arbitrary
// chunks. `state` is how many bytes of the terminator the previous chunk ended
// with (0..3), so a terminator split across reads is still found once.
struct RequestCounter {
    std::uint32_t state = 0;

    std::size_t feed(const char* data, std::size_t len) {
        std::size_t found = 0;
        std::uint32_t s = state;
        for (std::size_t i = 0; i < len; ++i) {
            const char c = data[i];
            if (c == '\r') {
                s = (s == 2) ? 3 : 1;
            } else if (c == '\n' && (s == 1 || s == 3)) {
                if (s == 3) {
                    ++found;
                    s = 0;
                } else {
                    s = 2;
                }
            } else {
                s = 0;
            }
        }
        state = s;
        return found;
    }
};

// Progress of sending `pending` copies of the response: `offset` bytes of the
// first copy have already left (a short write stopped inside it).
struct SendProgress {
    std::uint64_t pending = 0;
    std::size_t offset = 0;

    // Fills iov with up to iov_max copies, the first trimmed by offset.
    std::size_t fill(struct iovec* iov, std::size_t iov_max) const {
        const std::size_t n = pending < iov_max ? static_cast<std::size_t>(pending) : iov_max;
        for (std::size_t i = 0; i < n; ++i) {
            iov[i].iov_base = const_cast<char*>(response);
            iov[i].iov_len = response_bytes;
        }
        if (n > 0) {
            iov[0].iov_base = const_cast<char*>(response) + offset;
            iov[0].iov_len = response_bytes - offset;
        }
        return n;
    }

    // Accounts for `sent` bytes having left, starting at the current offset.
    void consume(std::size_t sent) {
        const std::size_t total = offset + sent;
        const std::size_t done = total / response_bytes;
        if (done > pending) {
            std::fprintf(stderr, "floor: bug: sent more than pending\n");
            std::abort();
        }
        pending -= done;
        offset = total % response_bytes;
    }
};

inline int parse_port(int argc, char** argv) {
    int port = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--port" && i + 1 < argc) {
            char* end = nullptr;
            const long v = std::strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0 || v > 65535) {
                std::fprintf(stderr, "bad --port %s\n", argv[i]);
                std::exit(2);
            }
            port = static_cast<int>(v);
        } else {
            std::fprintf(stderr, "usage: %s [--port N]   (0 = ephemeral)\n", argv[0]);
            std::exit(2);
        }
    }
    return port;
}

inline void die(const char* what) {
    std::fprintf(stderr, "%s: %s\n", what, std::strerror(errno));
    std::exit(1);
}

// Binds 127.0.0.1:port (non-blocking when asked), listens, and prints the one
// line the benchmark script waits for.
inline int listen_loopback(int port, const char* name, bool nonblocking, const std::string& details = "") {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) die("socket");
    const int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) die("SO_REUSEADDR");
    // Responses leave as soon as they are written (Nagle would hold back one
    // written while an earlier one is unacknowledged). Linux copies
    // TCP_NODELAY to every socket accepted here, as the server's listeners
    // do (core/net/listen.cpp).
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("bind");
    if (listen(fd, listen_backlog) != 0) die("listen");
    socklen_t len = sizeof addr;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) die("getsockname");
    std::printf("%s listening on 127.0.0.1:%u%s\n", name, ntohs(addr.sin_port), details.c_str());
    std::fflush(stdout);
    return fd;
}

}  // namespace floor_bench
