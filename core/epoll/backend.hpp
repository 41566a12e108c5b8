#pragma once
// The epoll backend of a connection's owner (core/io/completion.hpp; the
// interface, io::Backend, in core/io/backend.hpp): the same completions as
// io_uring's, made from readiness by the system calls a careful epoll loop
// makes, so that the code above it is unchanged and "what does io_uring buy?"
// is measured on the same application.
//
// - Edge-triggered: a socket is added once (EPOLLIN | EPOLLRDHUP | EPOLLET),
//   with EPOLLOUT only while a connect or a send waits for room.
// - One epoll_pwait2 per loop, for a batch of events, only when no
//   completion is already waiting to be handed out.
// - A receive is "armed" as on io_uring; while it is and the socket is
//   readable, recv() runs into a buffer of the owner's pool until it returns
//   less than a buffer (the socket is then drained: a later arrival is a new
//   edge) or EAGAIN. Each recv that returns data is one completion, flagged
//   as a provided buffer's, with completion_flags::more while a multishot
//   receive stays armed. The pool empty: -ENOBUFS, the receive disarmed, as on
//   io_uring. An idle connection holds no receive buffer.
// - A send is attempted at once; its result (a byte count, short or whole,
//   or -errno) is a completion handed out with the next batch. EAGAIN waits
//   for EPOLLOUT and tries again then.
// - A cancel takes back what is still waiting (the receive, a send or a
//   connect waiting for EPOLLOUT), which completes with -ECANCELED; the
//   cancel completes with 0, or -ENOENT when nothing was waiting, as
//   io_uring's does.
// - The server's: its listener (non-blocking, edge-triggered) is drained
//   by accept4 while an accept is armed; its tick is a timerfd, its wake an
//   eventfd read once readable; a shutdown is made at once. A database
//   connection's socket (libpq's, which reads at most a buffer a call) is
//   level-triggered and one-shot, as io_uring's poll: a poll is an
//   epoll_ctl that arms it, and a send or receive that meets EAGAIN waits
//   the same way.

#include <linux/time_types.h>
#include <sys/epoll.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/io/completion.hpp"
#include "core/net/address.hpp"

namespace ringhttp::epoll {

class Backend {
 public:
  static constexpr io::BackendKind kind = io::BackendKind::epoll;
  // Events taken per epoll_pwait2.
  static constexpr int events_max = 256;
  // Batches handed out from waiting completions alone before epoll is asked
  // again (with no wait), so that a stream of sends completing cannot delay
  // receives.
  static constexpr std::uint32_t local_batches_max = 16;

  struct Config {
    std::uint32_t recv_buffers = 0;
    std::uint32_t recv_buffer_bytes = 0;
    std::uint32_t slots = 0;
    // Wait with epoll_wait (millisecond timeouts) from the start, as the
    // backend does by itself where epoll_pwait2 is missing (Linux < 5.11,
    // valgrind 3.19). For the tests of that path.
    bool without_pwait2 = false;
  };
  // One provided buffer's worth of a receive, the same shape as the
  // io_uring backend's. A receive here is always one piece.
  struct Received {
    const char* data;
    std::uint32_t len;
    std::int32_t buffer_id;
  };

  Backend() = default;
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  std::string init(const Config& config);

  // A non-blocking stream socket; `slot` matters to io_uring's fixed-files only.
  int open_socket(int family, std::uint32_t slot);
  // Closes the slot's socket; what waited on it is forgotten (the owner
  // closes only once nothing of it is in flight).
  void close(int fd, std::uint32_t slot);
  // Closes an accepted socket refused before it took a slot.
  void close_accepted(int fd);

  void connect(int fd, const net::Address& address, std::uint64_t tag);
  bool receive(int fd, std::uint64_t tag, bool multishot = true);
  void send(int fd, const char* data, std::size_t len, std::uint64_t tag);
  void cancel(std::uint64_t target, std::uint64_t tag);

  // The server's (as the io_uring backend's). Every send mode is a sendmsg.
  // `peer` is io_uring's with fixed-files (which epoll has not): not filled.
  void accept(int listen_fd, std::uint64_t tag, bool multishot, sockaddr* peer = nullptr,
              socklen_t* peer_len = nullptr);
  void timeout(__kernel_timespec* ts, std::uint64_t tag);
  void read(int fd, void* data, unsigned len, std::uint64_t tag);
  void shutdown(int fd, int how, std::uint64_t tag);
  void reset(int fd, std::uint64_t tag);
  void send_message(int fd, msghdr* msg, io::SendMode mode, std::uint64_t tag, bool zc_report_usage = false);
  void poll(int fd, bool write, std::uint64_t tag);
  void send_from(int fd, const char* data, std::size_t len, std::uint64_t tag);
  void receive_into(int fd, char* data, std::size_t len, std::uint64_t tag);
  std::uint64_t sq_full_flushes() const { return 0; }

  // The receive seam every backend offers the engine: a completion's first
  // piece, the next (never here: epoll has no bundles), the buffers of a
  // completion no owner takes.
  Received received(std::uint32_t slot, std::uint32_t flags, std::int32_t res) const;
  static bool next_received(Received&) { return false; }
  void give_back(std::int32_t buffer_id);
  void give_back_flags(std::uint32_t flags, std::int32_t res);

  std::uint32_t submit_and_reap(std::span<io::Completion> out);
  std::uint32_t submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout);
  // No batching wait here: epoll_pwait2 returns with the events ready
  // (uring::Ring::set_batch_wait is io_uring's).
  static bool can_batch_wait() { return false; }
  static void set_batch_wait(std::uint32_t, std::uint32_t) {}

  const io::SyscallCounts& syscalls() const { return syscalls_; }
  void reset_syscalls() { syscalls_ = {}; }

 private:
  // What waits on one slot's socket.
  struct Socket {
    int fd = -1;
    const msghdr* send_msg = nullptr;  // a corked batch (send_message), else send_data below
    std::uint32_t generation = 0;  // the slot's generation when it was added (events carry it)
    bool added = false;            // in the epoll set
    bool wants_out = false;        // EPOLLOUT in its interest mask
    bool readable = false;         // an edge said so and no recv has drained it since
    bool peer_done = false;        // the edge carried the peer's FIN (or an error): read to the end
    bool recv_armed = false;
    bool recv_multishot = false;
    bool in_ready = false;  // on ready_: armed and readable, to be read
    bool connecting = false;
    bool send_waiting = false;  // a send that met EAGAIN, retried on EPOLLOUT
    std::uint64_t recv_tag = 0;
    std::uint64_t connect_tag = 0;
    std::uint64_t send_tag = 0;
    const char* send_data = nullptr;
    std::size_t send_len = 0;
  };

  // The listener, the tick's timer and the wake's eventfd: one each.
  struct Listener {
    int fd = -1;
    bool added = false;
    bool readable = false;
    bool armed = false;
    bool multishot = false;
    std::uint64_t tag = 0;
  };
  struct Reader {
    int fd = -1;
    bool added = false;
    bool readable = false;
    bool armed = false;
    void* data = nullptr;
    unsigned len = 0;
    std::uint64_t tag = 0;
  };
  // A database connection's socket: polls, and a send or receive waiting
  // for room or data.
  struct DbSocket {
    int fd = -1;
    std::uint32_t generation = 0;
    bool added = false;
    bool poll_in = false, poll_out = false;
    bool send_waiting = false, recv_waiting = false;
    std::uint64_t poll_in_tag = 0, poll_out_tag = 0, send_tag = 0, recv_tag = 0;
    const char* send_data = nullptr;
    std::size_t send_len = 0;
    char* recv_data = nullptr;
    std::size_t recv_len = 0;
  };
  // Accepts handed out per batch at most, so that a flood of connections
  // cannot crowd out the receives of those already open.
  static constexpr std::uint32_t accepts_per_batch_max = 64;

  Socket& socket_of(std::uint64_t tag);
  DbSocket& db_of(std::uint64_t tag, int fd);
  void db_arm(DbSocket& s, std::uint32_t link);
  bool db_try_send(DbSocket& s);
  bool db_try_recv(DbSocket& s);
  void on_db_event(std::uint32_t link, std::uint32_t events);
  void read_now(Reader& r);
  void add_reader(Reader& r, std::uint64_t data);
  std::uint32_t accept_ready(std::span<io::Completion> out, std::uint32_t n);
  void add(Socket& s, std::uint32_t slot, bool out);
  void want_out(Socket& s, std::uint32_t slot, bool out);
  void complete(std::uint64_t tag, std::int32_t res, std::uint32_t flags = 0);
  void try_send(Socket& s, std::uint32_t slot);
  void on_event(const epoll_event& ev);
  void mark_ready(Socket& s, std::uint32_t slot);
  std::uint32_t reap(std::span<io::Completion> out, const __kernel_timespec* wait);
  int wait_for_events(epoll_event* events, const timespec* timeout);
  std::uint32_t read_ready(std::span<io::Completion> out, std::uint32_t n);
  std::uint32_t hand_out(std::span<io::Completion> out, std::uint32_t n);

  int epfd_ = -1;
  int timer_fd_ = -1;
  Listener listener_;
  Reader timer_;
  std::uint64_t timer_value_ = 0;
  Reader wake_;
  std::vector<DbSocket> db_;
  std::vector<Socket> sockets_;
  std::vector<std::uint32_t> ready_;  // slots to read from
  std::vector<io::Completion> done_;  // completions made, not yet handed out
  std::size_t done_head_ = 0;
  std::uint32_t local_batches_ = 0;
  bool without_pwait2_ = false;
  // The receive buffer pool.
  char* buffers_ = nullptr;
  std::size_t buffers_bytes_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::vector<std::uint16_t> free_buffers_;
  io::SyscallCounts syscalls_;
};

}  // namespace ringhttp::epoll
