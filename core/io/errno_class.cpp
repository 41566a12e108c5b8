#include "core/io/errno_class.hpp"

#include <cerrno>

namespace ringhttp::io {

ErrnoClass classify(std::int32_t res) {
  if (res >= 0) return ErrnoClass::ok;
  switch (-res) {
    case ECANCELED: return ErrnoClass::cancelled;
    case EINTR:
    case EAGAIN:
    case ECONNABORTED: return ErrnoClass::retry;
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOBUFS:
    case EADDRNOTAVAIL: return ErrnoClass::exhausted;
    case EBADF:
    case EFAULT:
    case EINVAL:
    case ENOTSOCK:
    case EOPNOTSUPP:
    case EISCONN: return ErrnoClass::bug;
    default: return ErrnoClass::peer_gone;  // EPIPE, ECONNRESET, ETIMEDOUT, ECONNREFUSED, EHOSTUNREACH, ...
  }
}

const char* name(ErrnoClass c) {
  switch (c) {
    case ErrnoClass::ok: return "ok";
    case ErrnoClass::cancelled: return "cancelled";
    case ErrnoClass::retry: return "retry";
    case ErrnoClass::peer_gone: return "peer_gone";
    case ErrnoClass::exhausted: return "exhausted";
    case ErrnoClass::bug: return "bug";
  }
  return "?";
}

}  // namespace ringhttp::io
