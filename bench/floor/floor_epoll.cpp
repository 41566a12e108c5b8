// floor-epoll: the cheapest HTTP/1.1 responder we can write with epoll.
// Level-triggered epoll, one read per readable event, and all responses owed
// after that read leave in one sendmsg. See floor_common.hpp for why it exists.
#include "floor_common.hpp"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <vector>

namespace {

using namespace floor_bench;

constexpr std::size_t read_bytes_max = 64 * 1024;  // one read; level-triggered epoll re-reports the rest
constexpr int events_per_wait_max = 256;

struct Conn {
    bool open = false;
    bool want_write = false;  // registered for EPOLLOUT instead of EPOLLIN
    RequestCounter counter;
    SendProgress progress;
};

struct Server {
    int epfd = -1;
    int listen_fd = -1;
    int signal_fd = -1;
    std::vector<Conn> conns;  // indexed by fd
    char read_buf[read_bytes_max];

    void watch(int fd, std::uint32_t events, int op) {
        epoll_event ev{};
        ev.events = events;
        ev.data.fd = fd;
        if (epoll_ctl(epfd, op, fd, &ev) != 0) die("epoll_ctl");
    }

    void close_conn(int fd) {
        conns[static_cast<std::size_t>(fd)] = Conn{};
        close(fd);  // also removes it from the epoll set
    }

    void accept_all() {
        for (;;) {
            const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED) return;
                std::fprintf(stderr, "accept4: %s\n", std::strerror(errno));
                return;  // EMFILE and friends: try again on the next event
            }
            if (static_cast<std::size_t>(fd) >= conns.size()) conns.resize(static_cast<std::size_t>(fd) * 2 + 1);
            conns[static_cast<std::size_t>(fd)] = Conn{};
            conns[static_cast<std::size_t>(fd)].open = true;  // TCP_NODELAY from the listener
            watch(fd, EPOLLIN, EPOLL_CTL_ADD);
        }
    }

    // Sends what is owed. Returns false when the connection is gone. While a
    // write is blocked the connection waits for EPOLLOUT and stops reading,
    // so a client that never reads cannot make us count forever.
    bool flush(int fd, Conn& c) {
        iovec iov[responses_per_send_max];
        while (c.progress.pending > 0) {
            msghdr msg{};
            msg.msg_iov = iov;
            msg.msg_iovlen = c.progress.fill(iov, responses_per_send_max);
            const ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN) {
                    if (!c.want_write) watch(fd, EPOLLOUT, EPOLL_CTL_MOD);
                    c.want_write = true;
                    return true;
                }
                return false;  // EPIPE, ECONNRESET: the peer is gone
            }
            if (n == 0) return false;  // never for a stream socket; do not spin on it
            c.progress.consume(static_cast<std::size_t>(n));
        }
        if (c.want_write) watch(fd, EPOLLIN, EPOLL_CTL_MOD);
        c.want_write = false;
        return true;
    }

    bool on_readable(int fd, Conn& c) {
        const ssize_t n = read(fd, read_buf, sizeof read_buf);
        if (n == 0) return false;
        if (n < 0) return errno == EAGAIN || errno == EINTR;
        c.progress.pending += c.counter.feed(read_buf, static_cast<std::size_t>(n));
        return flush(fd, c);
    }

    void on_conn_event(int fd, std::uint32_t events) {
        Conn& c = conns[static_cast<std::size_t>(fd)];
        if (!c.open) return;  // closed earlier in this batch
        bool alive = true;
        if (c.want_write) {
            alive = flush(fd, c);
        } else if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
            // Read even on HUP: the last requests may arrive with the FIN.
            alive = on_readable(fd, c);
        }
        if (events & EPOLLERR) alive = false;
        if (!alive) close_conn(fd);
    }

    int run() {
        epoll_event events[events_per_wait_max];
        for (;;) {
            const int n = epoll_wait(epfd, events, events_per_wait_max, -1);
            if (n < 0) {
                if (errno == EINTR) continue;
                die("epoll_wait");
            }
            for (int i = 0; i < n; ++i) {
                const int fd = events[i].data.fd;
                if (fd == signal_fd) return 0;
                if (fd == listen_fd) {
                    accept_all();
                } else {
                    on_conn_event(fd, events[i].events);
                }
            }
        }
    }
};

}  // namespace

int main(int argc, char** argv) {
    const int port = parse_port(argc, argv);

    // SIGTERM/SIGINT arrive through a signalfd in the epoll set, so the
    // event loop sees them like any other event and returns cleanly.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) die("sigprocmask");
    signal(SIGPIPE, SIG_IGN);

    static Server server;  // the read buffer is large: keep it off the stack
    server.conns.resize(1024);
    server.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (server.epfd < 0) die("epoll_create1");
    server.signal_fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    if (server.signal_fd < 0) die("signalfd");
    server.watch(server.signal_fd, EPOLLIN, EPOLL_CTL_ADD);
    server.listen_fd = listen_loopback(port, "floor-epoll", true);
    server.watch(server.listen_fd, EPOLLIN, EPOLL_CTL_ADD);
    return server.run();
}
