#include "core/uring/features.hpp"

#include <liburing.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/uring/compat.hpp"
#include "core/uring/ring.hpp"
#include "core/io/user_data.hpp"

namespace ringhttp::uring {
namespace {

// Opcodes without which neither server nor client can run, with the kernel
// that introduced them.
constexpr struct {
  int opcode;
  const char* name;
} required_opcodes[] = {
    {IORING_OP_ACCEPT, "accept (5.5)"},      {IORING_OP_RECV, "recv (5.6)"},
    {IORING_OP_SENDMSG, "sendmsg (5.3)"},    {IORING_OP_ASYNC_CANCEL, "async_cancel (5.5)"},
    {IORING_OP_TIMEOUT, "timeout (5.4)"},    {IORING_OP_READ, "read (5.6)"},
    {IORING_OP_SHUTDOWN, "shutdown (5.11)"}, {IORING_OP_CONNECT, "connect (5.5)"},
};

class ScratchRing {
 public:
  explicit ScratchRing(std::uint32_t flags) {
    io_uring_params params{};
    params.flags = flags;
    status_ = queue_init(8, ring_, params);
  }
  ~ScratchRing() {
    if (status_ == 0) io_uring_queue_exit(&ring_);
  }
  ScratchRing(const ScratchRing&) = delete;
  ScratchRing& operator=(const ScratchRing&) = delete;
  bool ok() const { return status_ == 0; }
  int status() const { return status_; }
  io_uring* get() { return &ring_; }

  // Submits one prepared SQE and waits for its first completion.
  int run_one(io_uring_sqe* sqe, unsigned* cqe_flags = nullptr) {
    sqe->user_data = io::encode({io::Op::probe, 0, 0});
    io_uring_submit(&ring_);
    io_uring_cqe* cqe = nullptr;
    if (io_uring_wait_cqe(&ring_, &cqe) < 0) return -EIO;
    const int res = cqe->res;
    if (cqe_flags != nullptr) *cqe_flags = cqe->flags;
    io_uring_cqe_seen(&ring_, cqe);
    return res;
  }

 private:
  io_uring ring_{};
  int status_ = -1;
};

bool probe_multishot_accept(ScratchRing& ring) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool supported = false;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(listener, 1) == 0) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
    io_uring_prep_multishot_accept(sqe, listener, nullptr, nullptr, 0);
    sqe->user_data = io::encode({io::Op::probe, 1, 0});
    io_uring_submit(ring.get());
    // An unsupported multishot accept fails at once with -EINVAL; a supported
    // one stays pending, so cancel it and look at the first completion.
    io_uring_sqe* cancel = io_uring_get_sqe(ring.get());
    io_uring_prep_cancel64(cancel, io::encode({io::Op::probe, 1, 0}), 0);
    cancel->user_data = io::encode({io::Op::probe, 2, 0});
    io_uring_submit(ring.get());
    for (int seen = 0; seen < 2; ++seen) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(ring.get(), &cqe) < 0) break;
      if (io::decode(cqe->user_data).slot == 1) supported = cqe->res == -ECANCELED;
      io_uring_cqe_seen(ring.get(), cqe);
    }
  }
  ::close(listener);
  return supported;
}

struct ScratchBufRing {
  io_uring_buf_ring* ring = nullptr;
  size_t bytes = 0;
};

bool probe_bufring(ScratchRing& ring, ScratchBufRing& out) {
  constexpr unsigned entries = 2;
  out.bytes = entries * sizeof(io_uring_buf);
  void* mem = ::mmap(nullptr, out.bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return false;
  out.ring = static_cast<io_uring_buf_ring*>(mem);
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(mem);
  reg.ring_entries = entries;
  reg.bgid = 0;
  if (io_uring_register_buf_ring(ring.get(), &reg, 0) != 0) {
    ::munmap(mem, out.bytes);
    out.ring = nullptr;
    return false;
  }
  io_uring_buf_ring_init(out.ring);
  return true;
}

bool probe_multishot_recv(ScratchRing& ring, ScratchBufRing& bufs) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  static char storage[2][64];
  for (unsigned i = 0; i < 2; ++i) {
    io_uring_buf_ring_add(bufs.ring, storage[i], sizeof storage[i], static_cast<unsigned short>(i),
                          io_uring_buf_ring_mask(2), static_cast<int>(i));
  }
  io_uring_buf_ring_advance(bufs.ring, 2);
  io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
  io_uring_prep_recv_multishot(sqe, pair[0], nullptr, 0, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = 0;
  (void)!::write(pair[1], "x", 1);
  unsigned flags = 0;
  const int res = ring.run_one(sqe, &flags);
  const bool supported = res == 1 && (flags & IORING_CQE_F_MORE) != 0;
  // The peer's close is EOF, which ends the multishot receive: its last
  // completion is the one without F_MORE. Waiting for that one, instead of
  // for a quiet timeout, keeps this probe out of the server's cold start
  // (it cost 50 ms of every start).
  ::close(pair[1]);
  constexpr long last_completion_wait_ns = 50'000'000;  // a bound: EOF completes at once
  io_uring_cqe* cqe = nullptr;
  __kernel_timespec wait{0, last_completion_wait_ns};
  while (supported && io_uring_wait_cqe_timeout(ring.get(), &cqe, &wait) == 0) {
    const bool last = (cqe->flags & IORING_CQE_F_MORE) == 0;
    io_uring_cqe_seen(ring.get(), cqe);
    if (last) break;
  }
  ::close(pair[0]);
  return supported;
}

// A connected loopback TCP pair, blocking; both ends closed on destruction.
class TcpPair {
 public:
  TcpPair() {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(listener, 1) == 0 &&
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      sender_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (sender_ >= 0 && ::connect(sender_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
        receiver_ = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      }
    }
    ::close(listener);
  }
  ~TcpPair() {
    if (receiver_ >= 0) ::close(receiver_);
    if (sender_ >= 0) ::close(sender_);
  }
  TcpPair(const TcpPair&) = delete;
  TcpPair& operator=(const TcpPair&) = delete;
  bool ok() const { return sender_ >= 0 && receiver_ >= 0; }
  int sender() const { return sender_; }

 private:
  int sender_ = -1;
  int receiver_ = -1;
};

// One byte by zero-copy sendmsg; returns the result's res once the
// notification (if the result announced one) has arrived too.
int try_zero_copy_send(ScratchRing& ring, int fd, bool report_usage) {
  static char byte = 'z';
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
  io_uring_prep_sendmsg_zc(sqe, fd, &msg, MSG_NOSIGNAL);
  if (report_usage) sqe->ioprio |= IORING_SEND_ZC_REPORT_USAGE;
  unsigned flags = 0;
  const int res = ring.run_one(sqe, &flags);
  if ((flags & IORING_CQE_F_MORE) == 0) return res;
  // The iovec and the byte must outlive the notification, which on loopback
  // comes once the byte is acknowledged: wait for it (bounded, in case).
  __kernel_timespec wait{1, 0};
  io_uring_cqe* cqe = nullptr;
  while (io_uring_wait_cqe_timeout(ring.get(), &cqe, &wait) == 0) {
    const bool notification = (cqe->flags & IORING_CQE_F_NOTIF) != 0;
    io_uring_cqe_seen(ring.get(), cqe);
    if (notification) break;
  }
  return res;
}

// A ring without an SQ array, set up as Ring::init does (queue_init), runs
// a few batches of NOPs: the kernel takes the flag, and liburing 2.3 then
// submits in ring order without writing an array it does not have.
bool probe_no_sqarray() {
  io_uring ring{};
  io_uring_params params{};
  params.flags = IORING_SETUP_NO_SQARRAY;
  if (queue_init(4, ring, params) != 0) return false;
  bool ok = true;
  for (unsigned batch = 1; ok && batch <= 4; ++batch) {
    for (unsigned i = 0; i < batch; ++i) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      io_uring_prep_nop(sqe);
      sqe->user_data = io::encode({io::Op::probe, i, 0});
    }
    ok = io_uring_submit_and_wait(&ring, batch) == int(batch);
    io_uring_cqe* cqe = nullptr;
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe) {
      ok = ok && cqe->res == 0 && io::decode(cqe->user_data).slot == seen;
      ++seen;
    }
    io_uring_cq_advance(&ring, seen);
    ok = ok && seen == batch;
  }
  io_uring_queue_exit(&ring);
  return ok;
}

// The kernel says it takes min_wait_usec (IORING_FEAT_MIN_TIMEOUT), and a
// wait with it returns the NOP queued before it.
bool probe_min_wait() {
  ScratchRing ring(0);
  if (!ring.ok() || (ring.get()->features & IORING_FEAT_MIN_TIMEOUT) == 0) return false;
  io_uring_prep_nop(io_uring_get_sqe(ring.get()));
  __kernel_timespec timeout{1, 0};
  if (submit_and_wait_min(*ring.get(), 2, 10, &timeout) < 0) return false;
  io_uring_cqe* cqe = nullptr;
  const bool ok = io_uring_peek_cqe(ring.get(), &cqe) == 0 && cqe->res == 0;
  if (ok) io_uring_cqe_seen(ring.get(), cqe);
  return ok;
}

// A sparse file table (5.19) with a range the kernel allocates from, the
// ring's own descriptor registered (5.18), and one direct descriptor used
// and closed: a socket placed in the table, a shutdown naming it with
// IOSQE_FIXED_FILE (its peer then reads EOF), and close_direct.
bool probe_fixed_files() {
  ScratchRing ring(0);
  if (!ring.ok()) return false;
  if (io_uring_register_ring_fd(ring.get()) != 1) return false;
  if (io_uring_register_files_sparse(ring.get(), 2) != 0) return false;
  if (io_uring_register_file_alloc_range(ring.get(), 1, 1) != 0) return false;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return false;
  bool ok = io_uring_register_files_update(ring.get(), 0, &pair[0], 1) == 1;
  ::close(pair[0]);  // the table holds the socket now
  if (ok) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
    io_uring_prep_shutdown(sqe, 0, SHUT_WR);
    sqe->flags |= IOSQE_FIXED_FILE;
    ok = ring.run_one(sqe) == 0;
    char byte = 0;
    ok = ok && ::read(pair[1], &byte, 1) == 0;
    sqe = io_uring_get_sqe(ring.get());
    io_uring_prep_close_direct(sqe, 0);
    ok = ring.run_one(sqe) == 0 && ok;
  }
  ::close(pair[1]);
  return ok;
}

// Gives a scratch buffer ring's registration and memory back.
void release_bufring(ScratchRing& ring, ScratchBufRing& bufs, std::uint16_t group) {
  if (bufs.ring == nullptr) return;
  io_uring_unregister_buf_ring(ring.get(), group);
  ::munmap(bufs.ring, bufs.bytes);
  bufs.ring = nullptr;
}

// The kernel says it takes bundles (IORING_FEAT_RECVSEND_BUNDLE), and one
// bundle receive on a socket pair, with two 64-byte buffers queued and 100
// bytes waiting, takes both in one completion that names the first.
bool probe_recv_bundle() {
  ScratchRing ring(0);
  if (!ring.ok() || (ring.get()->features & IORING_FEAT_RECVSEND_BUNDLE) == 0) return false;
  ScratchBufRing bufs;
  if (!probe_bufring(ring, bufs)) return false;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    release_bufring(ring, bufs, 0);
    return false;
  }
  static char storage[2][64];
  for (unsigned i = 0; i < 2; ++i) {
    io_uring_buf_ring_add(bufs.ring, storage[i], sizeof storage[i], static_cast<unsigned short>(i),
                          io_uring_buf_ring_mask(2), static_cast<int>(i));
  }
  io_uring_buf_ring_advance(bufs.ring, 2);
  constexpr unsigned sent = 100;
  static_assert(sent > sizeof storage[0] && sent <= sizeof storage, "the bytes fill one buffer and spill into the next");
  char bytes[sent];
  std::memset(bytes, 'b', sizeof bytes);
  bool ok = ::write(pair[1], bytes, sizeof bytes) == ssize_t(sizeof bytes);
  if (ok) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
    io_uring_prep_recv(sqe, pair[0], nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    sqe->ioprio |= IORING_RECVSEND_BUNDLE;
    unsigned flags = 0;
    const int res = ring.run_one(sqe, &flags);
    ok = res == int(sent) && (flags & IORING_CQE_F_BUFFER) != 0 && (flags >> IORING_CQE_BUFFER_SHIFT) == 0;
  }
  ::close(pair[0]);
  ::close(pair[1]);
  release_bufring(ring, bufs, 0);
  return ok;
}

// A buffer ring registered with IOU_PBUF_RING_INC, one 64-byte buffer in
// it: two receives of a few bytes each land one after the other in that
// buffer, both completions saying the kernel keeps it (IORING_CQE_F_BUF_MORE).
bool probe_incremental_buffers() {
  ScratchRing ring(0);
  if (!ring.ok()) return false;
  constexpr unsigned entries = 1;
  const size_t ring_bytes = entries * sizeof(io_uring_buf);
  void* mem = ::mmap(nullptr, ring_bytes, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  if (mem == MAP_FAILED) return false;
  ScratchBufRing bufs{static_cast<io_uring_buf_ring*>(mem), ring_bytes};
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<std::uint64_t>(mem);
  reg.ring_entries = entries;
  reg.bgid = 0;
  reg.pad = IOU_PBUF_RING_INC;  // `flags` in newer headers than liburing 2.3's
  if (io_uring_register_buf_ring(ring.get(), &reg, 0) != 0) {
    ::munmap(mem, ring_bytes);
    return false;
  }
  io_uring_buf_ring_init(bufs.ring);
  static char storage[64];
  io_uring_buf_ring_add(bufs.ring, storage, sizeof storage, 0, io_uring_buf_ring_mask(entries), 0);
  io_uring_buf_ring_advance(bufs.ring, 1);
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    release_bufring(ring, bufs, 0);
    return false;
  }
  bool ok = true;
  const char* const pieces[] = {"abc", "defg"};
  std::size_t offset = 0;
  for (const char* piece : pieces) {
    const std::size_t len = std::strlen(piece);
    ok = ok && ::write(pair[1], piece, len) == ssize_t(len);
    if (!ok) break;
    io_uring_sqe* sqe = io_uring_get_sqe(ring.get());
    io_uring_prep_recv(sqe, pair[0], nullptr, 0, 0);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = 0;
    unsigned flags = 0;
    const int res = ring.run_one(sqe, &flags);
    ok = res == int(len) && (flags & IORING_CQE_F_BUFFER) != 0 && (flags >> IORING_CQE_BUFFER_SHIFT) == 0 &&
         (flags & IORING_CQE_F_BUF_MORE) != 0 && std::memcmp(storage + offset, piece, len) == 0;
    offset += len;
  }
  ::close(pair[0]);
  ::close(pair[1]);
  release_bufring(ring, bufs, 0);
  return ok;
}

}  // namespace

ZeroCopySend probe_zero_copy_send() {
  ZeroCopySend out;
  ScratchRing ring(0);
  if (!ring.ok()) {
    out.why_not = std::string("io_uring setup failed: ") + std::strerror(-ring.status());
    return out;
  }
  io_uring_probe* probe = io_uring_get_probe_ring(ring.get());
  const bool listed = probe != nullptr && io_uring_opcode_supported(probe, IORING_OP_SENDMSG_ZC);
  if (probe != nullptr) io_uring_free_probe(probe);
  if (!listed) {
    out.why_not = "this kernel has no IORING_OP_SENDMSG_ZC (6.1)";
    return out;
  }
  TcpPair pair;
  if (!pair.ok()) {
    out.why_not = "no loopback TCP connection to try it on";
    return out;
  }
  // Usage reporting came a release later (6.2); without it a notification
  // cannot say whether the kernel copied, but the send itself works.
  int res = try_zero_copy_send(ring, pair.sender(), true);
  out.report_usage = res == 1;
  if (res == -EINVAL) res = try_zero_copy_send(ring, pair.sender(), false);
  out.available = res == 1;
  if (!out.available) out.why_not = std::string("a zero-copy sendmsg failed: ") + std::strerror(res < 0 ? -res : EIO);
  return out;
}

Features Features::intersect(const Features& other) const {
  Features out;
  out.single_issuer = single_issuer && other.single_issuer;
  out.defer_taskrun = defer_taskrun && other.defer_taskrun && out.single_issuer;
  out.coop_taskrun = coop_taskrun && other.coop_taskrun;
  out.multishot_accept = multishot_accept && other.multishot_accept;
  out.bufring = bufring && other.bufring;
  out.multishot_recv = multishot_recv && other.multishot_recv && out.bufring;
  out.fixed_files = fixed_files && other.fixed_files;
  out.sqpoll = sqpoll && other.sqpoll;
  out.no_sqarray = no_sqarray && other.no_sqarray;
  out.min_wait = min_wait && other.min_wait && !out.sqpoll;
  out.min_timeout = min_timeout && other.min_timeout && !out.sqpoll;
  out.recv_bundle = recv_bundle && other.recv_bundle && out.bufring;
  out.incremental_buffers = incremental_buffers && other.incremental_buffers && out.bufring;
  out.asked = asked | other.asked;
  if (out.sqpoll) {
    // io_uring_setup refuses DEFER_TASKRUN, COOP_TASKRUN and TASKRUN_FLAG
    // with SQPOLL (-EINVAL): the poller thread issues the requests, so task
    // work is not deferred to the submitter's next wait, and completions are
    // signalled without an IPI anyway, which is what COOP_TASKRUN asks for.
    out.defer_taskrun = false;
    out.coop_taskrun = false;
  }
  return out;
}

std::string Features::describe() const {
  std::string out;
  auto add = [&out](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(single_issuer, "single-issuer");
  add(defer_taskrun, "defer-taskrun");
  add(coop_taskrun && !defer_taskrun, "coop-taskrun");
  add(multishot_accept, "multishot-accept");
  add(multishot_recv, "multishot-recv");
  add(bufring, "bufring");
  add(fixed_files, "fixed-files");
  add(sqpoll, "sqpoll");
  add(no_sqarray, "no-sqarray");
  add(min_wait, "min-wait");
  add(recv_bundle, "recv-bundle");
  add(incremental_buffers, "incremental-buffers");
  if (out.empty()) out = "basic";
  return out;
}

std::uint32_t setup_flags(const Features& features) {
  std::uint32_t flags = IORING_SETUP_SUBMIT_ALL;
  if (features.single_issuer) flags |= IORING_SETUP_SINGLE_ISSUER;
  // SQ_AFF and the poller's CPU are the ring's business (Ring::init).
  if (features.sqpoll) flags |= IORING_SETUP_SQPOLL;
  if (features.no_sqarray) flags |= IORING_SETUP_NO_SQARRAY;
  if (features.defer_taskrun) {
    flags |= IORING_SETUP_DEFER_TASKRUN;
  } else if (features.coop_taskrun) {
    flags |= IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
  }
  return flags;
}

Features probe_kernel() {
  ScratchRing plain(0);
  if (!plain.ok()) {
    throw std::runtime_error(std::string("io_uring is not available: ") + std::strerror(-plain.status()) +
                             " (is kernel.io_uring_disabled set?)");
  }
  io_uring_probe* probe = io_uring_get_probe_ring(plain.get());
  if (probe == nullptr) throw std::runtime_error("io_uring opcode probe failed (kernel older than 5.6?)");
  for (const auto& op : required_opcodes) {
    if (!io_uring_opcode_supported(probe, op.opcode)) {
      io_uring_free_probe(probe);
      throw std::runtime_error(std::string("io_uring lacks a required opcode: ") + op.name);
    }
  }
  io_uring_free_probe(probe);

  Features found;
  found.coop_taskrun = ScratchRing(IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG).ok();
  found.single_issuer = ScratchRing(IORING_SETUP_SINGLE_ISSUER).ok();
  found.defer_taskrun =
      found.single_issuer && ScratchRing(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN).ok();
  // Tried, not assumed: before 5.11, or where a security policy forbids it,
  // an unprivileged SQPOLL ring is refused (-EPERM).
  found.sqpoll = ScratchRing(IORING_SETUP_SQPOLL).ok();
  found.no_sqarray = probe_no_sqarray();
  found.min_wait = probe_min_wait();
  found.min_timeout = found.min_wait;
  found.recv_bundle = probe_recv_bundle();
  found.incremental_buffers = probe_incremental_buffers();
  found.multishot_accept = probe_multishot_accept(plain);
  found.fixed_files = probe_fixed_files();
  ScratchBufRing bufs;
  found.bufring = probe_bufring(plain, bufs);
  found.multishot_recv = found.bufring && probe_multishot_recv(plain, bufs);
  if (bufs.ring != nullptr) {
    io_uring_unregister_buf_ring(plain.get(), 0);
    ::munmap(bufs.ring, bufs.bytes);
  }
  return found;
}

namespace {

// Profiles keep what a kernel generation offered, so a 6.18 machine can show
// what an older kernel would have cost. Each feature arrived in (see the
// comments on Features): 5.19 COOP_TASKRUN, ACCEPT_MULTISHOT and provided-
// buffer rings, direct descriptors allocated by the kernel; 6.0
// RECV_MULTISHOT and SINGLE_ISSUER; 6.1 DEFER_TASKRUN; 6.6 NO_SQARRAY; 6.10
// RECVSEND_BUNDLE; 6.12 IOU_PBUF_RING_INC and IORING_FEAT_MIN_TIMEOUT (the
// client's batching wait). None turns sqpoll or min-wait on.
bool apply_profile(std::string_view name, Features& wanted) {
  if (name == "all") {
    wanted = Features::all();
  } else if (name == "6.12") {
    wanted = Features::all();
    wanted.asked = Features::asked_no_sqarray | Features::asked_recv_bundle | Features::asked_incremental_buffers;
  } else if (name == "6.10") {
    wanted = Features::all();
    wanted.incremental_buffers = wanted.min_timeout = false;
    wanted.asked = Features::asked_no_sqarray | Features::asked_recv_bundle;
  } else if (name == "6.6") {
    wanted = Features::all();
    wanted.recv_bundle = wanted.incremental_buffers = wanted.min_timeout = false;
    wanted.asked = Features::asked_no_sqarray;
  } else if (name == "6.1") {
    wanted = Features::all();
    wanted.recv_bundle = wanted.incremental_buffers = wanted.min_timeout = false;
    wanted.no_sqarray = false;
  } else if (name == "6.0") {
    wanted = Features::all();
    wanted.recv_bundle = wanted.incremental_buffers = wanted.min_timeout = false;
    wanted.no_sqarray = false;
    wanted.defer_taskrun = false;
  } else if (name == "5.19") {
    wanted = Features{};
    wanted.coop_taskrun = true;
    wanted.multishot_accept = true;
    wanted.bufring = true;
    wanted.fixed_files = true;
  } else if (name == "5.10") {
    wanted = Features{};
  } else {
    return false;
  }
  return true;
}

bool apply_switch(std::string_view name, Features& wanted) {
  if (name == "sqpoll") {
    wanted.sqpoll = true;
  } else if (name == "no-sqarray") {
    wanted.no_sqarray = true;
    wanted.asked |= Features::asked_no_sqarray;
  } else if (name == "min-wait") {
    wanted.min_wait = true;
    wanted.asked |= Features::asked_min_wait;
  } else if (name == "sqarray") {
    wanted.no_sqarray = false;
    wanted.asked &= ~Features::asked_no_sqarray;
  } else if (name == "recv-bundle") {
    wanted.recv_bundle = true;
    wanted.asked |= Features::asked_recv_bundle;
  } else if (name == "no-recv-bundle") {
    wanted.recv_bundle = false;
    wanted.asked &= ~Features::asked_recv_bundle;
  } else if (name == "incremental-buffers") {
    wanted.incremental_buffers = true;
    wanted.asked |= Features::asked_incremental_buffers;
  } else if (name == "no-incremental-buffers") {
    wanted.incremental_buffers = false;
    wanted.asked &= ~Features::asked_incremental_buffers;
  } else if (name == "no-defer-taskrun") {
    wanted.defer_taskrun = false;
  } else if (name == "no-coop-taskrun") {
    wanted.coop_taskrun = false;
  } else if (name == "no-single-issuer") {
    wanted.single_issuer = false;
    wanted.defer_taskrun = false;
  } else if (name == "no-multishot") {
    wanted.multishot_accept = false;
    wanted.multishot_recv = false;
  } else if (name == "no-multishot-accept") {
    wanted.multishot_accept = false;
  } else if (name == "no-multishot-recv") {
    wanted.multishot_recv = false;
  } else if (name == "fixed-files") {
    wanted.fixed_files = true;
    wanted.asked |= Features::asked_fixed_files;
  } else if (name == "no-fixed-files") {
    wanted.fixed_files = false;
    wanted.asked &= ~Features::asked_fixed_files;
  } else if (name == "no-bufring") {
    wanted.bufring = false;
    wanted.multishot_recv = false;
    wanted.recv_bundle = false;
    wanted.incremental_buffers = false;
  } else {
    return false;
  }
  return true;
}

constexpr const char* names_help =
    " (a profile first, optional: 5.10, 5.19, 6.0, 6.1, 6.6, 6.10, 6.12, all; then any of sqpoll, min-wait, "
    "no-sqarray, sqarray, fixed-files, no-fixed-files, recv-bundle, no-recv-bundle, incremental-buffers, "
    "no-incremental-buffers, no-defer-taskrun, no-coop-taskrun, no-single-issuer, no-multishot, "
    "no-multishot-accept, no-multishot-recv, no-bufring)";

}  // namespace

bool parse_switches(std::string_view text, Features& wanted, std::string& error) {
  wanted = Features::all();
  if (text.empty()) return true;
  for (std::size_t start = 0, index = 0;; ++index) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view name = text.substr(start, comma - start);
    Features profile;
    if (apply_profile(name, profile)) {
      if (index > 0) {
        error = "--uring: the profile '" + std::string(name) + "' must come first" + names_help;
        return false;
      }
      wanted = profile;
    } else if (!apply_switch(name, wanted)) {
      error = name.empty() ? std::string("--uring: empty item in '") + std::string(text) + "'" + names_help
                           : "unknown --uring switch '" + std::string(name) + "'" + names_help;
      return false;
    }
    if (comma == text.size()) return true;
    start = comma + 1;
  }
}

std::string unavailable_note(const Features& wanted, const Features& kernel) {
  std::string note;
  const auto add = [&note](const std::string& line) { note += (note.empty() ? "" : "; ") + line; };
  if (wanted.sqpoll && !kernel.sqpoll) {
    add("--uring sqpoll: this kernel or user may not create an SQPOLL ring (io_uring_setup refused "
        "IORING_SETUP_SQPOLL); running without it");
  }
  if (wanted.no_sqarray && (wanted.asked & Features::asked_no_sqarray) != 0 && !kernel.no_sqarray) {
    add("--uring no-sqarray: this kernel has no IORING_SETUP_NO_SQARRAY (6.6); running with the SQ array");
  }
  if (wanted.min_wait && (wanted.asked & Features::asked_min_wait) != 0 && !kernel.min_wait) {
    add("--uring min-wait: this kernel has no IORING_FEAT_MIN_TIMEOUT (6.12); waiting for one completion");
  }
  if (wanted.fixed_files && (wanted.asked & Features::asked_fixed_files) != 0 && !kernel.fixed_files) {
    add("--uring fixed-files: this kernel has no direct descriptors the kernel allocates (5.19); connections "
        "stay in the process's descriptor table");
  }
  if (wanted.recv_bundle && (wanted.asked & Features::asked_recv_bundle) != 0 && !kernel.recv_bundle) {
    add("--uring recv-bundle: this kernel has no IORING_RECVSEND_BUNDLE (6.10) or no buffer ring; one buffer "
        "per receive");
  }
  if (wanted.incremental_buffers && (wanted.asked & Features::asked_incremental_buffers) != 0 &&
      !kernel.incremental_buffers) {
    add("--uring incremental-buffers: this kernel has no IOU_PBUF_RING_INC (6.12) or no buffer ring; each "
        "receive takes a whole buffer");
  }
  return note;
}

}  // namespace ringhttp::uring
