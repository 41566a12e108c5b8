#pragma once
// The epoll backend of a connection's owner (core/io/completion.hpp): the
// same completions as io_uring's, made from readiness by the system calls a
// careful epoll loop makes, so that the code above it is unchanged and
// "what does io_uring buy?" is measured on the same application.
//
// - Edge-triggered: a socket is added once (EPOLLIN | EPOLLRDHUP | EPOLLET),
//   with EPOLLOUT only while a connect or a send waits for room.
// - One epoll_pwait2 per loop, for a batch of events, only when no
//   completion is already waiting to be handed out.
// - A receive is "armed" as on io_uring; while it is and the socket is
//   readable, recv() runs into a buffer of the owner's pool until it returns
//   less than a buffer (the socket is then drained: a later arrival is a new
//   edge) or EAGAIN. Each recv that returns data is one completion, flagged
//   as a provided buffer's, with IORING_CQE_F_MORE while a multishot receive
//   stays armed. The pool empty: -ENOBUFS, the receive disarmed, as on
//   io_uring. An idle connection holds no receive buffer.
// - A send is attempted at once; its result (a byte count, short or whole,
//   or -errno) is a completion handed out with the next batch. EAGAIN waits
//   for EPOLLOUT and tries again then.
// - A cancel takes back what is still waiting (the receive, a send or a
//   connect waiting for EPOLLOUT), which completes with -ECANCELED; the
//   cancel completes with 0, or -ENOENT when nothing was waiting, as
//   io_uring's does.

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
  };
  struct Received {
    const char* data;
    std::int32_t buffer_id;
  };

  Backend() = default;
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  std::string init(const Config& config);

  int open_socket(int family);
  // Closes the slot's socket; what waited on it is forgotten (the owner
  // closes only once nothing of it is in flight).
  void close(int fd, std::uint32_t slot);

  void connect(int fd, const net::Address& address, std::uint64_t tag);
  bool receive(int fd, std::uint64_t tag, bool multishot = true);
  void send(int fd, const char* data, std::size_t len, std::uint64_t tag);
  void cancel(std::uint64_t target, std::uint64_t tag);

  Received received(std::uint32_t, std::uint32_t flags) const;
  void give_back(std::int32_t buffer_id);
  void give_back_flags(std::uint32_t flags);

  std::uint32_t submit_and_reap(std::span<io::Completion> out);
  std::uint32_t submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout);

  const io::SyscallCounts& syscalls() const { return syscalls_; }
  void reset_syscalls() { syscalls_ = {}; }

 private:
  // What waits on one slot's socket.
  struct Socket {
    int fd = -1;
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

  Socket& socket_of(std::uint64_t tag);
  void add(Socket& s, std::uint32_t slot, bool out);
  void want_out(Socket& s, std::uint32_t slot, bool out);
  void complete(std::uint64_t tag, std::int32_t res, std::uint32_t flags = 0);
  void try_send(Socket& s, std::uint32_t slot);
  void on_event(const epoll_event& ev);
  void mark_ready(Socket& s, std::uint32_t slot);
  std::uint32_t reap(std::span<io::Completion> out, const __kernel_timespec* wait);
  std::uint32_t read_ready(std::span<io::Completion> out, std::uint32_t n);
  std::uint32_t hand_out(std::span<io::Completion> out, std::uint32_t n);

  int epfd_ = -1;
  std::vector<Socket> sockets_;
  std::vector<std::uint32_t> ready_;  // slots to read from
  std::vector<io::Completion> done_;  // completions made, not yet handed out
  std::size_t done_head_ = 0;
  std::uint32_t local_batches_ = 0;
  // The receive buffer pool.
  char* buffers_ = nullptr;
  std::size_t buffers_bytes_ = 0;
  std::uint32_t buffer_bytes_ = 0;
  std::vector<std::uint16_t> free_buffers_;
  io::SyscallCounts syscalls_;
};

}  // namespace ringhttp::epoll
