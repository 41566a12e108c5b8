#include "core/tls/stream.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>

#include "core/io/send_cursor.hpp"

namespace ringhttp::tls {

void Outbox::sent() {
  assert(sending > 0 && sending <= len);
  const std::uint32_t rest = len - sending;
  if (rest > 0) std::memmove(data, data + sending, rest);
  len = rest;
  sending = 0;
}

std::size_t encrypt(Session& session, Outbox& out, const char* data, std::size_t len) {
  Wire wire = out.wire();
  std::size_t taken = 0;
  while (taken < len) {
    const std::size_t n = session.write(wire, data + taken, len - taken);
    if (n == 0) break;
    taken += n;
  }
  out.wrote(wire);
  return taken;
}

std::size_t encrypt(Session& session, Outbox& out, msghdr& msg, std::size_t left) {
  std::size_t taken = 0;
  while (taken < left) {
    assert(msg.msg_iovlen > 0);
    const iovec& v = msg.msg_iov[0];
    const std::size_t n = encrypt(session, out, static_cast<const char*>(v.iov_base), std::min(v.iov_len, left - taken));
    if (n == 0) break;
    io::advance_iovecs(msg, n);
    taken += n;
  }
  return taken;
}

Session::Status handshake(Session& session, Outbox& out) {
  Wire wire = out.wire();
  const Session::Status status = session.handshake(wire);
  out.wrote(wire);
  return status;
}

bool queue_close(Session& session, Outbox& out) {
  Wire wire = out.wire();
  const bool queued = session.close(wire);
  out.wrote(wire);
  return queued;
}

}  // namespace ringhttp::tls
