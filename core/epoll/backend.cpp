#include "core/epoll/backend.hpp"

#include <linux/io_uring.h>  // the completion flags both backends hand out
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/uring/user_data.hpp"

namespace ringhttp::epoll {
namespace {

std::uint64_t event_data(std::uint32_t slot, std::uint32_t generation) {
  return (std::uint64_t(slot) << 32) | generation;
}

constexpr std::uint32_t buffer_flags(std::uint16_t id) {
  return IORING_CQE_F_BUFFER | (std::uint32_t(id) << IORING_CQE_BUFFER_SHIFT);
}

}  // namespace

Backend::~Backend() {
  if (epfd_ >= 0) ::close(epfd_);
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
  void* mem = ::mmap(nullptr, buffers_bytes_, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return std::string("receive buffers: ") + std::strerror(errno);
  buffers_ = static_cast<char*>(mem);
  // Taken from the back: buffer 0 first, the warmest after that.
  free_buffers_.reserve(config.recv_buffers);
  for (std::uint32_t i = config.recv_buffers; i > 0; --i) free_buffers_.push_back(std::uint16_t(i - 1));
  return {};
}

int Backend::open_socket(int family) { return io::open_stream_socket(family, SOCK_NONBLOCK, syscalls_); }

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

Backend::Socket& Backend::socket_of(std::uint64_t tag) {
  const std::uint32_t slot = uring::decode(tag).slot;
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
  const uring::Tag t = uring::decode(tag);
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

bool Backend::receive(int, std::uint64_t tag, bool multishot) {
  Socket& s = socket_of(tag);
  assert(s.fd >= 0 && !s.recv_armed);
  s.recv_armed = true;
  s.recv_multishot = multishot;
  s.recv_tag = tag;
  if (s.readable) mark_ready(s, uring::decode(tag).slot);
  return multishot;
}

void Backend::send(int, const char* data, std::size_t len, std::uint64_t tag) {
  Socket& s = socket_of(tag);
  assert(s.fd >= 0 && !s.send_waiting);
  s.send_tag = tag;
  s.send_data = data;
  s.send_len = len;
  try_send(s, uring::decode(tag).slot);
}

void Backend::try_send(Socket& s, std::uint32_t slot) {
  while (true) {
    syscalls_.add(io::Syscall::send);
    const ssize_t n = ::send(s.fd, s.send_data, s.send_len, MSG_NOSIGNAL);
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
  const uring::Tag t = uring::decode(target);
  assert(t.slot < sockets_.size());
  Socket& s = sockets_[t.slot];
  std::int32_t res = -ENOENT;
  if (s.fd >= 0 && s.generation == t.generation) {
    if (t.op == uring::Op::recv && s.recv_armed && s.recv_tag == target) {
      s.recv_armed = false;
      complete(target, -ECANCELED);
      res = 0;
    } else if (t.op == uring::Op::send && s.send_waiting && s.send_tag == target) {
      s.send_waiting = false;
      if (!s.connecting) want_out(s, t.slot, false);
      complete(target, -ECANCELED);
      res = 0;
    } else if (t.op == uring::Op::connect && s.connecting && s.connect_tag == target) {
      s.connecting = false;
      complete(target, -ECANCELED);
      res = 0;
    }
  }
  complete(tag, res);
}

Backend::Received Backend::received(std::uint32_t, std::uint32_t flags) const {
  assert((flags & IORING_CQE_F_BUFFER) != 0);
  const auto id = std::uint16_t(flags >> IORING_CQE_BUFFER_SHIFT);
  return {buffers_ + std::size_t(id) * buffer_bytes_, id};
}

void Backend::give_back(std::int32_t buffer_id) {
  assert(buffer_id >= 0 && free_buffers_.size() < free_buffers_.capacity());
  free_buffers_.push_back(std::uint16_t(buffer_id));
}

void Backend::give_back_flags(std::uint32_t flags) {
  if ((flags & IORING_CQE_F_BUFFER) != 0) give_back(std::int32_t(flags >> IORING_CQE_BUFFER_SHIFT));
}

void Backend::mark_ready(Socket& s, std::uint32_t slot) {
  if (s.in_ready) return;
  s.in_ready = true;
  ready_.push_back(slot);
}

void Backend::on_event(const epoll_event& ev) {
  const auto slot = std::uint32_t(ev.data.u64 >> 32);
  const auto generation = std::uint32_t(ev.data.u64);
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
          flags |= IORING_CQE_F_MORE;
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

std::uint32_t Backend::reap(std::span<io::Completion> out, const __kernel_timespec* wait) {
  assert(!out.empty());
  std::uint32_t n = hand_out(out, 0);
  const bool work_waiting = n > 0 || !ready_.empty();
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
    syscalls_.add(io::Syscall::epoll_wait);
    const int count = ::epoll_pwait2(epfd_, events, events_max, timeout, nullptr);
    for (int i = 0; i < count; ++i) on_event(events[i]);
    n = hand_out(out, n);
  }
  return read_ready(out, n);
}

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out) { return reap(out, nullptr); }

std::uint32_t Backend::submit_and_reap(std::span<io::Completion> out, __kernel_timespec timeout) {
  return reap(out, &timeout);
}

}  // namespace ringhttp::epoll
