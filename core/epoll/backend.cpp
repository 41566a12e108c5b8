#include "core/epoll/backend.hpp"

#include <linux/io_uring.h>  // the completion flags both backends hand out
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "core/io/backend.hpp"
#include "core/io/user_data.hpp"

namespace ringhttp::epoll {
namespace {

using io::Op;

// What an event is for, in the user_data layout: a connection's socket
// (Op::recv), the listener (Op::accept), the tick's timer, the wake's
// eventfd, or a database connection's socket (Op::db_read).
std::uint64_t event_data(std::uint32_t slot, std::uint32_t generation, Op kind = Op::recv) {
  return io::encode({kind, slot, generation});
}

constexpr std::uint32_t buffer_flags(std::uint16_t id) {
  return io::completion_flags::buffer | (std::uint32_t(id) << io::completion_flags::buffer_id_shift);
}

}  // namespace

Backend::~Backend() {
  if (epfd_ >= 0) ::close(epfd_);
  if (timer_fd_ >= 0) ::close(timer_fd_);
  if (buffers_ != nullptr) ::munmap(buffers_, buffers_bytes_);
}

std::string Backend::init(const Config& config) {
  assert(config.recv_buffers > 0 && config.recv_buffers <= 65536 && config.recv_buffer_bytes > 0);
  epfd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) return std::string("epoll_create1: ") + std::strerror(errno);
  sockets_.resize(config.slots);
  ready_.reserve(config.slots);
  done_.reserve(std::size_t(config.slots) * 4);
  buffer_bytes_ = config.recv_buffer_bytes;
  buffers_bytes_ = std::size_t(config.recv_buffers) * config.recv_buffer_bytes;
  without_pwait2_ = config.without_pwait2;
  timer_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (timer_fd_ < 0) return std::string("timerfd_create: ") + std::strerror(errno);
  void* mem = ::mmap(nullptr, buffers_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return std::string("receive buffers: ") + std::strerror(errno);
  buffers_ = static_cast<char*>(mem);
  // Taken from the back: buffer 0 first, the warmest after that.
  free_buffers_.reserve(config.recv_buffers);
  for (std::uint32_t i = config.recv_buffers; i > 0; --i) free_buffers_.push_back(std::uint16_t(i - 1));
  return {};
}

int Backend::open_socket(int family, std::uint32_t) { return io::open_stream_socket(family, SOCK_NONBLOCK, syscalls_); }

void Backend::close(int fd, std::uint32_t slot) {
  assert(slot < sockets_.size());
  Socket& s = sockets_[slot];
  assert(!s.recv_armed && !s.send_waiting && !s.connecting && "closed with an operation waiting");
  // Closing the descriptor takes it out of the epoll set. A slot still on
  // ready_ stays there (in_ready kept) and is skipped: its fd is gone.
  const bool in_ready = s.in_ready;
  s = Socket{};
  s.in_ready = in_ready;
  syscalls_.add(io::Syscall::close);
  ::close(fd);
}

void Backend::close_accepted(int fd) {
  syscalls_.add(io::Syscall::close);
  ::close(fd);
}

Backend::Socket& Backend::socket_of(std::uint64_t tag) {
  const std::uint32_t slot = io::decode(tag).slot;
  assert(slot < sockets_.size());
  return sockets_[slot];
}

void Backend::add(Socket& s, std::uint32_t slot, bool out) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (out ? EPOLLOUT : 0u);
  ev.data.u64 = event_data(slot, s.generation);
  syscalls_.add(io::Syscall::epoll_ctl);
  const int rc = ::epoll_ctl(epfd_, EPOLL_CTL_ADD, s.fd, &ev);
  assert(rc == 0 && "epoll_ctl(ADD) refused a new socket");
  (void)rc;
  s.added = true;
  s.wants_out = out;
}

void Backend::want_out(Socket& s, std::uint32_t slot, bool out) {
  if (!s.added || s.wants_out == out) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET | (out ? EPOLLOUT : 0u);
  ev.data.u64 = event_data(slot, s.generation);
  syscalls_.add(io::Syscall::epoll_ctl);
  (void)::epoll_ctl(epfd_, EPOLL_CTL_MOD, s.fd, &ev);
  s.wants_out = out;
}

void Backend::complete(std::uint64_t tag, std::int32_t res, std::uint32_t flags) {
  done_.push_back(io::Completion{tag, res, flags});
}

void Backend::connect(int fd, const net::Address& address, std::uint64_t tag) {
  const io::Tag t = io::decode(tag);
  Socket& s = socket_of(tag);
  const bool in_ready = s.in_ready;
  s = Socket{};
  s.in_ready = in_ready;
  s.fd = fd;
  s.generation = t.generation;
  syscalls_.add(io::Syscall::connect);
  if (::connect(fd, address.get(), address.length) == 0) {
    add(s, t.slot, false);
    return complete(tag, 0);
  }
  if (errno != EINPROGRESS) return complete(tag, -errno);
  add(s, t.slot, true);
  s.connecting = true;
  s.connect_tag = tag;
}

bool Backend::receive(int fd, std::uint64_t tag, bool multishot) {
  const io::Tag t = io::decode(tag);
  Socket& s = socket_of(tag);
  if (s.fd != fd || s.generation != t.generation) {
    // A socket not connected here (the server's, accepted): added now.
    assert(!s.recv_armed && !s.send_waiting && !s.connecting);
    const bool in_ready = s.in_ready;
    s = Socket{};
    s.in_ready = in_ready;
    s.fd = fd;
    s.generation = t.generation;
    add(s, t.slot, false);
  }
  assert(!s.recv_armed);
  s.recv_armed = true;
  s.recv_multishot = multishot;
  s.recv_tag = tag;
  if (s.readable) mark_ready(s, io::decode(tag).slot);
  return multishot;
}

void Backend::send_from(int fd, const char* data, std::size_t len, std::uint64_t tag) {
  assert(io::decode(tag).op == Op::db_send);
  DbSocket& d = db_of(tag, fd);
  assert(!d.send_waiting);
  d.send_waiting = true;
  d.send_tag = tag;
  d.send_data = data;
  d.send_len = len;
  if (!db_try_send(d)) db_arm(d, io::decode(tag).slot);
}

void Backend::send(int, const char* data, std::size_t len, std::uint64_t tag) {
  Socket& s = socket_of(tag);
  assert(s.fd >= 0 && !s.send_waiting);
  s.send_tag = tag;
  s.send_msg = nullptr;
  s.send_data = data;
  s.send_len = len;
  try_send(s, io::decode(tag).slot);
}

void Backend::send_message(int, msghdr* msg, io::SendMode, std::uint64_t tag, bool) {
  Socket& s = socket_of(tag);
  assert(s.fd >= 0 && !s.send_waiting);
  s.send_tag = tag;
  s.send_msg = msg;
  try_send(s, io::decode(tag).slot);
}

void Backend::try_send(Socket& s, std::uint32_t slot) {
  while (true) {
    syscalls_.add(io::Syscall::send);
    const ssize_t n = s.send_msg != nullptr ? ::sendmsg(s.fd, s.send_msg, MSG_NOSIGNAL)
                                            : ::send(s.fd, s.send_data, s.send_len, MSG_NOSIGNAL);
    if (n >= 0) {
      s.send_waiting = false;
      if (!s.connecting) want_out(s, slot, false);
      return complete(s.send_tag, std::int32_t(n));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      s.send_waiting = true;
      return want_out(s, slot, true);
    }
    s.send_waiting = false;
    if (!s.connecting) want_out(s, slot, false);
    return complete(s.send_tag, -errno);
  }
}

void Backend::cancel(std::uint64_t target, std::uint64_t tag) {
  const io::Tag t = io::decode(target);
  std::int32_t res = -ENOENT;
  if (t.op == Op::accept) {
    if (listener_.armed && listener_.tag == target) {
      listener_.armed = false;
      complete(target, -ECANCELED);
      res = 0;
    }
    return complete(tag, res);
  }
  if (t.op == Op::db_read || t.op == Op::db_write || t.op == Op::db_send || t.op == Op::db_recv) {
    if (t.slot < db_.size() && db_[t.slot].generation == t.generation) {
      DbSocket& d = db_[t.slot];
      bool* waiting = t.op == Op::db_read    ? &d.poll_in
                      : t.op == Op::db_write ? &d.poll_out
                      : t.op == Op::db_send  ? &d.send_waiting
                                             : &d.recv_waiting;
      if (*waiting) {
        *waiting = false;
        complete(target, -ECANCELED);
        res = 0;
      }
    }
    return complete(tag, res);
  }
  assert(t.slot < sockets_.size());
  Socket& s = sockets_[t.slot];
  if (s.fd >= 0 && s.generation == t.generation) {
    if (t.op == io::Op::recv && s.recv_armed && s.recv_tag == target) {
      s.recv_armed = false;
      complete(target, -ECANCELED);
      res = 0;
    } else if (t.op == io::Op::send && s.send_waiting && s.send_tag == target) {
      s.send_waiting = false;
      if (!s.connecting) want_out(s, t.slot, false);
      complete(target, -ECANCELED);
      res = 0;
    } else if (t.op == io::Op::connect && s.connecting && s.connect_tag == target) {
      s.connecting = false;
      complete(target, -ECANCELED);
      res = 0;
    }
  }
  complete(tag, res);
}

Backend::Received Backend::received(std::uint32_t, std::uint32_t flags, std::int32_t res) const {
  assert((flags & io::completion_flags::buffer) != 0 && res > 0 && std::uint32_t(res) <= buffer_bytes_);
  const auto id = std::uint16_t(flags >> io::completion_flags::buffer_id_shift);
  return {buffers_ + std::size_t(id) * buffer_bytes_, std::uint32_t(res), id};
}

void Backend::give_back(std::int32_t buffer_id) {
  assert(buffer_id >= 0 && free_buffers_.size() < free_buffers_.capacity());
  free_buffers_.push_back(std::uint16_t(buffer_id));
}

void Backend::give_back_flags(std::uint32_t flags, std::int32_t) {
  if ((flags & io::completion_flags::buffer) != 0) give_back(std::int32_t(flags >> io::completion_flags::buffer_id_shift));
}

void Backend::mark_ready(Socket& s, std::uint32_t slot) {
  if (s.in_ready) return;
  s.in_ready = true;
  ready_.push_back(slot);
}

void Backend::accept(int listen_fd, std::uint64_t tag, bool multishot, sockaddr*, socklen_t*) {
  assert(!listener_.armed);
  if (!listener_.added) {
    // accept4 runs until EAGAIN: the listener must not block.
    syscalls_.add(io::Syscall::fcntl, 2);
    ::fcntl(listen_fd, F_SETFL, ::fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;
    ev.data.u64 = event_data(io::slot_max, 0, Op::accept);
    syscalls_.add(io::Syscall::epoll_ctl);
    (void)::epoll_ctl(epfd_, EPOLL_CTL_ADD, listen_fd, &ev);
    listener_.fd = listen_fd;
    listener_.added = true;
    listener_.readable = true;  // connections may be waiting already: look
  }
  listener_.armed = true;
  listener_.multishot = multishot;
  listener_.tag = tag;
}

std::uint32_t Backend::accept_ready(std::span<io::Completion> out, std::uint32_t n) {
  std::uint32_t accepted = 0;
  while (listener_.armed && listener_.readable && n < out.size() && accepted < accepts_per_batch_max) {
    syscalls_.add(io::Syscall::accept);
    const int fd = ::accept4(listener_.fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      ++accepted;
      out[n++] = io::Completion{listener_.tag, fd, listener_.multishot ? io::completion_flags::more : 0u};
      if (!listener_.multishot) listener_.armed = false;
      continue;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      listener_.readable = false;
      break;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    // Out of descriptors or memory: said once; the owner backs off (it
    // cancels the accept and arms it again later), the listener still
    // readable.
    out[n++] = io::Completion{listener_.tag, -errno, listener_.multishot ? io::completion_flags::more : 0u};
    if (!listener_.multishot) listener_.armed = false;
    break;
  }
  return n;
}

void Backend::add_reader(Reader& r, std::uint64_t data) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLET;
  ev.data.u64 = data;
  syscalls_.add(io::Syscall::epoll_ctl);
  (void)::epoll_ctl(epfd_, EPOLL_CTL_ADD, r.fd, &ev);
  r.added = true;
  r.readable = true;  // it may be readable already: a read says
}

void Backend::read_now(Reader& r) {
  while (r.armed && r.readable) {
    syscalls_.add(io::Syscall::read);
    const ssize_t n = ::read(r.fd, r.data, r.len);
    if (n >= 0) {
      r.armed = false;
      return complete(r.tag, std::int32_t(n));
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      r.readable = false;
      return;
    }
    r.armed = false;
    return complete(r.tag, -errno);
  }
}

void Backend::timeout(__kernel_timespec* ts, std::uint64_t tag) {
  if (!timer_.added) {
    timer_.fd = timer_fd_;
    add_reader(timer_, event_data(io::slot_max, 0, Op::tick));
  }
  itimerspec spec{};
  spec.it_value = timespec{time_t(ts->tv_sec), long(ts->tv_nsec)};
  syscalls_.add(io::Syscall::timerfd_settime);
  (void)::timerfd_settime(timer_fd_, 0, &spec, nullptr);
  timer_.armed = true;
  timer_.tag = tag;
}

void Backend::read(int fd, void* data, unsigned len, std::uint64_t tag) {
  // The one reader besides the timer: the shard's wake eventfd.
  if (!wake_.added) {
    wake_.fd = fd;
    add_reader(wake_, event_data(io::slot_max, 0, Op::wake));
  }
  assert(wake_.fd == fd && !wake_.armed);
  wake_.armed = true;
  wake_.data = data;
  wake_.len = len;
  wake_.tag = tag;
  read_now(wake_);
}

void Backend::reset(int fd, std::uint64_t tag) {
  const sockaddr unspecified{.sa_family = AF_UNSPEC, .sa_data = {}};
  syscalls_.add(io::Syscall::connect);
  complete(tag, ::connect(fd, &unspecified, sizeof unspecified) == 0 ? 0 : -errno);
}

void Backend::shutdown(int fd, int how, std::uint64_t tag) {
  syscalls_.add(io::Syscall::shutdown);
  complete(tag, ::shutdown(fd, how) == 0 ? 0 : -errno);
}

// ---------------------------------------------------------------------------
// Database connections' sockets.

Backend::DbSocket& Backend::db_of(std::uint64_t tag, int fd) {
  const io::Tag t = io::decode(tag);
  if (t.slot >= db_.size()) db_.resize(t.slot + 1);
  DbSocket& d = db_[t.slot];
  if (d.fd != fd || d.generation != t.generation) {
    // A new connection of the link (libpq closed the last one, which took
    // it out of the epoll set).
    assert(!d.poll_in && !d.poll_out && !d.send_waiting && !d.recv_waiting);
    d = DbSocket{};
    d.fd = fd;
    d.generation = t.generation;
  }
  return d;
}

void Backend::db_arm(DbSocket& d, std::uint32_t link) {
  const bool in = d.poll_in || d.recv_waiting;
  const bool out = d.poll_out || d.send_waiting;
  if (!in && !out) return;  // one-shot: disarmed by its last event already
  epoll_event ev{};
  ev.events = EPOLLONESHOT | (in ? EPOLLIN : 0u) | (out ? EPOLLOUT : 0u);
  ev.data.u64 = event_data(link, d.generation, Op::db_read);
  syscalls_.add(io::Syscall::epoll_ctl);
  if (!d.added || ::epoll_ctl(epfd_, EPOLL_CTL_MOD, d.fd, &ev) != 0) {
    syscalls_.add(io::Syscall::epoll_ctl, d.added ? 1 : 0);
    (void)::epoll_ctl(epfd_, EPOLL_CTL_ADD, d.fd, &ev);
    d.added = true;
  }
}

void Backend::poll(int fd, bool write, std::uint64_t tag) {
  DbSocket& d = db_of(tag, fd);
  if (write) {
    d.poll_out = true;
    d.poll_out_tag = tag;
  } else {
    d.poll_in = true;
    d.poll_in_tag = tag;
  }
  db_arm(d, io::decode(tag).slot);
}

bool Backend::db_try_send(DbSocket& d) {
  while (true) {
    syscalls_.add(io::Syscall::send);
    const ssize_t n = ::send(d.fd, d.send_data, d.send_len, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    d.send_waiting = false;
    complete(d.send_tag, n >= 0 ? std::int32_t(n) : -errno);
    return true;
  }
}

bool Backend::db_try_recv(DbSocket& d) {
  while (true) {
    syscalls_.add(io::Syscall::recv);
    const ssize_t n = ::recv(d.fd, d.recv_data, d.recv_len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    d.recv_waiting = false;
    complete(d.recv_tag, n >= 0 ? std::int32_t(n) : -errno);
    return true;
  }
}

void Backend::receive_into(int fd, char* data, std::size_t len, std::uint64_t tag) {
  DbSocket& d = db_of(tag, fd);
  assert(!d.recv_waiting);
  d.recv_waiting = true;
  d.recv_tag = tag;
  d.recv_data = data;
  d.recv_len = len;
  if (!db_try_recv(d)) db_arm(d, io::decode(tag).slot);
}

void Backend::on_db_event(std::uint32_t link, std::uint32_t events) {
  DbSocket& d = db_[link];
  const bool failed = (events & (EPOLLERR | EPOLLHUP)) != 0;
  if ((events & EPOLLIN) != 0 || failed) {
    if (d.poll_in) {
      d.poll_in = false;
      complete(d.poll_in_tag, std::int32_t(POLLIN | (failed ? POLLERR : 0)));
    }
    if (d.recv_waiting) db_try_recv(d);
  }
  if ((events & EPOLLOUT) != 0 || failed) {
    if (d.poll_out) {
      d.poll_out = false;
      complete(d.poll_out_tag, std::int32_t(POLLOUT | (failed ? POLLERR : 0)));
    }
    if (d.send_waiting) db_try_send(d);
  }
  db_arm(d, link);  // what still waits (one-shot: the event disarmed it all)
}

void Backend::on_event(const epoll_event& ev) {
  const io::Tag what = io::decode(ev.data.u64);
  switch (what.op) {
    case Op::accept: listener_.readable = true; return;
    case Op::tick: {
      // Expired: read to disarm the edge, then complete as io_uring's
      // timeout does.
      syscalls_.add(io::Syscall::read);
      (void)!::read(timer_fd_, &timer_value_, sizeof timer_value_);
      if (timer_.armed) {
        timer_.armed = false;
        complete(timer_.tag, -ETIME);
      }
      return;
    }
    case Op::wake:
      wake_.readable = true;
      return read_now(wake_);
    case Op::db_read:
      if (what.slot < db_.size() && db_[what.slot].generation == what.generation && db_[what.slot].fd >= 0) {
        on_db_event(what.slot, ev.events);
      }
      return;
    default: break;
  }
  const std::uint32_t slot = what.slot;
  const std::uint32_t generation = what.generation;
  if (slot >= sockets_.size()) return;
  Socket& s = sockets_[slot];
  if (s.fd < 0 || s.generation != generation) return;  // closed since (a later socket of the slot)
  const bool failed = (ev.events & (EPOLLERR | EPOLLHUP)) != 0;
  if (s.connecting && ((ev.events & EPOLLOUT) != 0 || failed)) {
    int error = 0;
    socklen_t len = sizeof error;
    syscalls_.add(io::Syscall::getsockopt);
    if (::getsockopt(s.fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
    s.connecting = false;
    if (!s.send_waiting) want_out(s, slot, false);
    complete(s.connect_tag, -error);
  }
  if ((ev.events & (EPOLLIN | EPOLLRDHUP)) != 0 || failed) {
    s.readable = true;
    // The peer's FIN came with this edge: read until recv says so, even
    // after a short read (no later edge would come for it).
    if ((ev.events & EPOLLRDHUP) != 0 || failed) s.peer_done = true;
    if (s.recv_armed) mark_ready(s, slot);
  }
  if (s.send_waiting && ((ev.events & EPOLLOUT) != 0 || failed)) try_send(s, slot);
}

std::uint32_t Backend::hand_out(std::span<io::Completion> out, std::uint32_t n) {
  while (n < out.size() && done_head_ < done_.size()) out[n++] = done_[done_head_++];
  if (done_head_ == done_.size()) {
    done_.clear();
    done_head_ = 0;
  }
  return n;
}

std::uint32_t Backend::read_ready(std::span<io::Completion> out, std::uint32_t n) {
  std::size_t i = 0;
  while (i < ready_.size() && n < out.size()) {
    Socket& s = sockets_[ready_[i]];
    s.in_ready = false;
    while (n < out.size() && s.fd >= 0 && s.recv_armed && s.readable) {
      if (free_buffers_.empty()) {
        // As a provided-buffer ring running dry: the receive ends, the
        // owner re-arms it once buffers came back.
        out[n++] = io::Completion{s.recv_tag, -ENOBUFS, 0};
        s.recv_armed = false;
        break;
      }
      const std::uint16_t id = free_buffers_.back();
      syscalls_.add(io::Syscall::recv);
      const ssize_t r = ::recv(s.fd, buffers_ + std::size_t(id) * buffer_bytes_, buffer_bytes_, 0);
      if (r > 0) {
        free_buffers_.pop_back();
        std::uint32_t flags = buffer_flags(id);
        if (s.recv_multishot) {
          flags |= io::completion_flags::more;
        } else {
          s.recv_armed = false;
        }
        // Less than a buffer: the socket is drained (an arrival after this
        // is a new edge), unless the FIN is still to be read.
        if (std::size_t(r) < buffer_bytes_ && !s.peer_done) s.readable = false;
        out[n++] = io::Completion{s.recv_tag, std::int32_t(r), flags};
      } else if (r == 0) {
        out[n++] = io::Completion{s.recv_tag, 0, 0};
        s.recv_armed = false;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        s.readable = false;
      } else if (errno != EINTR) {
        out[n++] = io::Completion{s.recv_tag, -errno, 0};
        s.recv_armed = false;
      }
    }
    if (s.fd >= 0 && s.recv_armed && s.readable) {
      s.in_ready = true;  // the batch is full: this one is read first next time
      break;
    }
    ++i;
  }
  ready_.erase(ready_.begin(), ready_.begin() + std::ptrdiff_t(i));
  return n;
}

int Backend::wait_for_events(epoll_event* events, const timespec* timeout) {
  syscalls_.add(io::Syscall::epoll_wait);
  int count = -1;
  if (!without_pwait2_) {
    count = ::epoll_pwait2(epfd_, events, events_max, timeout, nullptr);
    // Linux before 5.11, or a tool that does not know the call (valgrind
    // 3.19): epoll_wait from now on, its timeout in whole milliseconds,
    // rounded up so that a wait never ends before it is due.
    if (count < 0 && errno == ENOSYS) without_pwait2_ = true;
  }
  if (without_pwait2_) {
    int ms = -1;
    if (timeout != nullptr) {
      const long long total = (long long)timeout->tv_sec * 1000 + (timeout->tv_nsec + 999'999) / 1'000'000;
      ms = total > INT32_MAX ? INT32_MAX : int(total);
    }
    count = ::epoll_wait(epfd_, events, events_max, ms);
  }
  if (count < 0) {
    if (errno == EINTR) return 0;
    std::fprintf(stderr, "ringhttp: epoll_wait failed: %s\n", std::strerror(errno));
    std::abort();
  }
  return count;
}

std::uint32_t Backend::reap(std::span<io::Completion> out, const __kernel_timespec* wait) {
  assert(!out.empty());
  std::uint32_t n = hand_out(out, 0);
  const bool work_waiting = n > 0 || !ready_.empty() || (listener_.armed && listener_.readable);
  if (!work_waiting || ++local_batches_ >= local_batches_max) {
    local_batches_ = 0;
    epoll_event events[events_max];
    timespec zero{0, 0};
    timespec limit{};
    const timespec* timeout = nullptr;  // wait as long as it takes
    if (work_waiting) {
      timeout = &zero;
    } else if (wait != nullptr) {
      limit = timespec{time_t(wait->tv_sec), long(wait->tv_nsec)};
      timeout = &limit;
    }
    const int count = wait_for_events(events, timeout);
    for (int i = 0; i < count; ++i) on_event(events[i]);
    n = hand_out(out, n);
  }
  n = read_ready(out, n);
  return accept_ready(out, n);
}

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out) { return reap(out, nullptr); }

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout) {
  return reap(out, &timeout);
}

static_assert(io::Backend<Backend>, "core/io/backend.hpp: the interface every backend offers");

}  // namespace ringhttp::epoll
