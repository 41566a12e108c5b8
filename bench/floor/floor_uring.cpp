// floor-uring: the cheapest HTTP/1.1 responder we can write with io_uring.
// Multishot accept, multishot recv into a provided buffer ring, one sendmsg of
// all owed responses per recv completion, at most one send in flight per
// connection. See floor_common.hpp for why it exists.
//
//   floor-uring [--port N] [--uring LIST]
//
// --uring takes the server's values (core/uring/features.hpp), so that a
// variation is named the same way on both; the ring's set-up follows them
// (single issuer, defer or coop taskrun, sqpoll, no-sqarray) and so does
// its wait (min-wait), and so do its receive buffers (recv-bundle,
// incremental-buffers: core/uring/receive_buffers.hpp, the server's own).
// Multishot accept and receive into a buffer ring are what this responder
// is made of: a value that turns them off is refused.
#include "floor_common.hpp"

#include <liburing.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/uring/compat.hpp"
#include "core/uring/features.hpp"
#include "core/uring/receive_buffers.hpp"
#include "core/uring/ring.hpp"

namespace {

using namespace floor_bench;

constexpr unsigned sq_entries = 1024;
constexpr unsigned cq_entries = 8 * sq_entries;
constexpr unsigned cqes_per_reap_max = 256;
constexpr unsigned recv_buffers = 1024;        // a power of two (buffer ring rule)
constexpr std::uint32_t recv_buffer_bytes = 2048;  // a pipelined batch of 16 wrk requests is ~800 bytes
constexpr std::uint32_t connections_max = 4096;
constexpr std::uint32_t refused_room = 256;  // fixed-files: accepted past connections_max, refused at once
static_assert((recv_buffers & (recv_buffers - 1)) == 0);
static_assert(connections_max < (1u << 24));

// user_data layout: op (8 bits) | connection slot (24 bits) | generation (32 bits).
// The generation makes a completion for a freed-and-reused slot a loud bug.
enum Op : std::uint8_t { op_accept = 1, op_recv, op_send, op_signal, op_shutdown };

std::uint64_t pack(Op op, std::uint32_t slot, std::uint32_t gen) {
    return (std::uint64_t{op} << 56) | (std::uint64_t{slot} << 32) | gen;
}
Op op_of(std::uint64_t ud) { return static_cast<Op>(ud >> 56); }
std::uint32_t slot_of(std::uint64_t ud) { return static_cast<std::uint32_t>(ud >> 32) & 0xffffff; }
std::uint32_t gen_of(std::uint64_t ud) { return static_cast<std::uint32_t>(ud); }

struct Conn {
    int fd = -1;
    std::uint32_t gen = 0;
    bool recv_armed = false;
    bool send_in_flight = false;
    bool peer_done = false;  // EOF seen: answer what was asked, then close
    bool aborted = false;    // an error: send nothing more, close
    RequestCounter counter;
    SendProgress progress;
    // Owned by the in-flight sendmsg until its completion arrives. One send at
    // a time: a second one could overtake a short first one and reorder bytes.
    msghdr msg{};
    iovec iov[responses_per_send_max];
};

struct Cqe {
    std::uint64_t user_data;
    std::int32_t res;
    std::uint32_t flags;
};

struct Server {
    io_uring ring{};
    int listen_fd = -1;
    int signal_fd = -1;
    bool stop = false;
    bool min_wait = false;  // --uring min-wait: wait for a batch (core/uring/ring.hpp)
    bool fixed_files = false;  // --uring fixed-files: connections are direct descriptors
    // The server's receive buffers: a provided-buffer ring, its bundles
    // and incremental buffers handed out as pieces of one buffer each.
    ringhttp::uring::ReceiveBuffers buffers;
    signalfd_siginfo siginfo{};
    std::vector<Conn> conns = std::vector<Conn>(connections_max);
    std::vector<std::uint32_t> free_slots;

    // A full submission queue is normal: submit what is there and retry.
    io_uring_sqe* sqe() {
        io_uring_sqe* s = io_uring_get_sqe(&ring);
        if (s == nullptr) {
            io_uring_submit(&ring);
            s = io_uring_get_sqe(&ring);
        }
        if (s == nullptr) {
            std::fprintf(stderr, "floor-uring: bug: no SQE after submit\n");
            std::abort();
        }
        return s;
    }

    void init_ring(const ringhttp::uring::Features& features) {
        io_uring_params p{};
        p.flags = ringhttp::uring::setup_flags(features) | IORING_SETUP_CQSIZE;
        p.cq_entries = cq_entries;
        if (features.sqpoll) p.sq_thread_idle = ringhttp::uring::Ring::sq_thread_idle_ms;
        const int r = ringhttp::uring::queue_init(sq_entries, ring, p);
        if (r != 0) {
            errno = -r;
            die("io_uring_queue_init_params");
        }
    }

    // With fixed-files: a sparse file table the accepts fill (connections_max,
    // and room for those refused past it), and the ring's own descriptor
    // registered, as the server does (core/uring/backend.cpp).
    void init_files() {
        fixed_files = true;
        (void)io_uring_register_ring_fd(&ring);
        std::uint32_t table = connections_max + refused_room;
        if (rlimit limit{}; getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < table) {
            table = static_cast<std::uint32_t>(limit.rlim_cur);
        }
        const int r = io_uring_register_files_sparse(&ring, table);
        if (r != 0) {
            errno = -r;
            die("io_uring_register_files_sparse");
        }
    }

    void on_socket(io_uring_sqe* s) const {
        if (fixed_files) s->flags |= IOSQE_FIXED_FILE;
    }

    void close_socket(int fd) {
        if (!fixed_files) {
            close(fd);
            return;
        }
        const int none = -1;
        io_uring_register_files_update(&ring, static_cast<unsigned>(fd), &none, 1);
    }

    void init_buffers(const ringhttp::uring::Features& features) {
        const std::string error = buffers.init(&ring, features, recv_buffers, recv_buffer_bytes, connections_max);
        if (!error.empty()) {
            std::fprintf(stderr, "floor-uring: %s\n", error.c_str());
            std::exit(1);
        }
    }

    void arm_accept() {
        io_uring_sqe* s = sqe();
        if (fixed_files) {
            io_uring_prep_multishot_accept_direct(s, listen_fd, nullptr, nullptr, 0);
        } else {
            io_uring_prep_multishot_accept(s, listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        }
        io_uring_sqe_set_data64(s, pack(op_accept, 0, 0));
    }

    void arm_signal() {
        io_uring_sqe* s = sqe();
        io_uring_prep_read(s, signal_fd, &siginfo, sizeof siginfo, 0);
        io_uring_sqe_set_data64(s, pack(op_signal, 0, 0));
    }

    void arm_recv(std::uint32_t slot) {
        Conn& c = conns[slot];
        io_uring_sqe* s = sqe();
        buffers.prep_recv(s, c.fd, slot, true);
        on_socket(s);
        io_uring_sqe_set_data64(s, pack(op_recv, slot, c.gen));
        c.recv_armed = true;
    }

    void start_send(std::uint32_t slot) {
        Conn& c = conns[slot];
        c.msg = msghdr{};
        c.msg.msg_iov = c.iov;
        c.msg.msg_iovlen = c.progress.fill(c.iov, responses_per_send_max);
        io_uring_sqe* s = sqe();
        io_uring_prep_sendmsg(s, c.fd, &c.msg, MSG_NOSIGNAL);
        on_socket(s);
        io_uring_sqe_set_data64(s, pack(op_send, slot, c.gen));
        c.send_in_flight = true;
    }

    // Frees the slot once nothing is in flight and nothing is owed. The
    // generation bump makes any later completion naming it a loud bug.
    void maybe_free(std::uint32_t slot) {
        Conn& c = conns[slot];
        if (c.recv_armed || c.send_in_flight) return;
        if (!c.aborted && !(c.peer_done && c.progress.pending == 0)) return;
        close_socket(c.fd);
        const std::uint32_t next_gen = c.gen + 1;
        c = Conn{};
        c.gen = next_gen;
        free_slots.push_back(slot);
    }

    // shutdown() ends an armed multishot recv (it completes without F_MORE).
    void abort_conn(std::uint32_t slot) {
        Conn& c = conns[slot];
        if (!c.aborted) {
            c.aborted = true;
            if (fixed_files) {
                // Queued; if the slot is closed first, it fails (ignored).
                io_uring_sqe* s = sqe();
                io_uring_prep_shutdown(s, c.fd, SHUT_RDWR);
                on_socket(s);
                s->flags |= IOSQE_CQE_SKIP_SUCCESS;
                io_uring_sqe_set_data64(s, pack(op_shutdown, 0, 0));
            } else {
                shutdown(c.fd, SHUT_RDWR);
            }
        }
        maybe_free(slot);
    }

    void on_accept(const Cqe& cqe) {
        if (!(cqe.flags & IORING_CQE_F_MORE)) arm_accept();
        if (cqe.res < 0) {
            std::fprintf(stderr, "floor-uring: accept: %s\n", std::strerror(-cqe.res));
            return;
        }
        if (free_slots.empty()) {
            close_socket(cqe.res);  // over connections_max: refuse
            return;
        }
        const std::uint32_t slot = free_slots.back();
        free_slots.pop_back();
        conns[slot].fd = cqe.res;  // TCP_NODELAY from the listener
        arm_recv(slot);
    }

    void on_recv(std::uint32_t slot, const Cqe& cqe) {
        Conn& c = conns[slot];
        if (!(cqe.flags & IORING_CQE_F_MORE)) c.recv_armed = false;
        if (cqe.res > 0) {
            if (!(cqe.flags & IORING_CQE_F_BUFFER)) {
                std::fprintf(stderr, "floor-uring: bug: recv data without a buffer\n");
                std::abort();
            }
            // Only the count of requests is kept, so each piece (a bundle's
            // buffer, an incremental buffer's part) goes back at once.
            auto piece = buffers.received(slot, cqe.flags, cqe.res);
            do {
                c.progress.pending += c.counter.feed(piece.data, piece.len);
                buffers.give_back(piece.buffer_id);
            } while (buffers.next(piece));
            if (!c.aborted && !c.send_in_flight && c.progress.pending > 0) start_send(slot);
        }
        if (c.recv_armed) return;
        if (c.aborted) {
            maybe_free(slot);
        } else if (cqe.res > 0 || cqe.res == -ENOBUFS) {
            arm_recv(slot);  // the multishot ended but the connection did not
        } else if (cqe.res == 0) {
            c.peer_done = true;
            maybe_free(slot);
        } else {
            abort_conn(slot);  // ECONNRESET and friends
        }
    }

    void on_send(std::uint32_t slot, const Cqe& cqe) {
        Conn& c = conns[slot];
        c.send_in_flight = false;
        if (cqe.res <= 0) return abort_conn(slot);  // EPIPE, ECONNRESET: the peer is gone
        c.progress.consume(static_cast<std::size_t>(cqe.res));
        if (!c.aborted && c.progress.pending > 0) return start_send(slot);  // short write, or newer requests
        maybe_free(slot);
    }

    void dispatch(const Cqe& cqe) {
        const Op op = op_of(cqe.user_data);
        if (op == op_accept) return on_accept(cqe);
        if (op == op_signal) {
            stop = true;
            return;
        }
        if (op == op_shutdown) return;  // an abort's, on a slot closed before it ran
        const std::uint32_t slot = slot_of(cqe.user_data);
        if (slot >= connections_max || conns[slot].gen != gen_of(cqe.user_data) || conns[slot].fd < 0) {
            std::fprintf(stderr, "floor-uring: bug: stale completion %llx\n",
                         static_cast<unsigned long long>(cqe.user_data));
            std::abort();
        }
        if (op == op_recv) return on_recv(slot, cqe);
        if (op == op_send) return on_send(slot, cqe);
        std::fprintf(stderr, "floor-uring: bug: unknown op in %llx\n", static_cast<unsigned long long>(cqe.user_data));
        std::abort();
    }

    // Reap a batch, advance the CQ once, then dispatch from a copy.
    int run() {
        io_uring_cqe* cqes[cqes_per_reap_max];
        Cqe batch[cqes_per_reap_max];
        while (!stop) {
            const int r = min_wait ? ringhttp::uring::submit_and_wait_min(ring, ringhttp::uring::Ring::min_wait_batch,
                                                                          ringhttp::uring::Ring::min_wait_us, nullptr)
                                   : io_uring_submit_and_wait(&ring, 1);
            if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY && r != -ETIME) {
                errno = -r;
                die("io_uring_submit_and_wait");
            }
            const unsigned n = io_uring_peek_batch_cqe(&ring, cqes, cqes_per_reap_max);
            for (unsigned i = 0; i < n; ++i) batch[i] = Cqe{cqes[i]->user_data, cqes[i]->res, cqes[i]->flags};
            io_uring_cq_advance(&ring, n);
            for (unsigned i = 0; i < n; ++i) dispatch(batch[i]);
        }
        return 0;
    }
};

struct Options {
    int port = 0;
    ringhttp::uring::Features wanted = ringhttp::uring::Features::all();
};

Options parse_options(int argc, char** argv) {
    Options out;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--uring" && i + 1 < argc) {
            std::string error;
            if (!ringhttp::uring::parse_switches(argv[++i], out.wanted, error)) {
                std::fprintf(stderr, "floor-uring: %s\n", error.c_str());
                std::exit(2);
            }
            if (!out.wanted.multishot_accept || !out.wanted.multishot_recv || !out.wanted.bufring) {
                std::fprintf(stderr,
                             "floor-uring: --uring %s turns off multishot accept, multishot receive or buffer "
                             "rings, which this responder is made of (6.0 and later profiles keep them)\n",
                             argv[i]);
                std::exit(2);
            }
        } else {
            rest.push_back(argv[i]);
        }
    }
    out.port = parse_port(int(rest.size()), rest.data());
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    const Options options = parse_options(argc, argv);
    const int port = options.port;

    // SIGTERM/SIGINT are read from a signalfd through the ring, so the loop
    // sees them as one more completion and returns cleanly.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) die("sigprocmask");
    signal(SIGPIPE, SIG_IGN);

    static Server server;
    server.free_slots.reserve(connections_max);
    for (std::uint32_t i = connections_max; i-- > 0;) server.free_slots.push_back(i);
    ringhttp::uring::Features kernel;
    try {
        kernel = ringhttp::uring::probe_kernel();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "floor-uring: %s\n", e.what());
        return 1;
    }
    const ringhttp::uring::Features features = kernel.intersect(options.wanted);
    if (const std::string note = ringhttp::uring::unavailable_note(options.wanted, kernel); !note.empty()) {
        std::fprintf(stderr, "floor-uring: %s\n", note.c_str());
    }
    if (!features.multishot_accept || !features.multishot_recv || !features.bufring) {
        std::fprintf(stderr, "floor-uring: this kernel lacks multishot accept, multishot receive or buffer rings\n");
        return 1;
    }
    server.init_ring(features);
    server.min_wait = features.min_wait;
    if (features.fixed_files) server.init_files();
    server.init_buffers(features);
    server.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (server.signal_fd < 0) die("signalfd");
    server.listen_fd = listen_loopback(port, "floor-uring", false, " uring=" + features.describe());
    server.arm_signal();
    server.arm_accept();
    const int rc = server.run();
    io_uring_queue_exit(&server.ring);
    return rc;
}
