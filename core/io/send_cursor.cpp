#include "core/io/send_cursor.hpp"

#include <sys/uio.h>

#include <cassert>

namespace ringhttp::io {

void advance_iovecs(msghdr& msg, std::size_t written) {
  while (written > 0) {
    assert(msg.msg_iovlen > 0 && "a send cannot write more than it was given");
    iovec& first = msg.msg_iov[0];
    if (written >= first.iov_len) {
      written -= first.iov_len;
      ++msg.msg_iov;
      --msg.msg_iovlen;
    } else {
      first.iov_base = static_cast<char*>(first.iov_base) + written;
      first.iov_len -= written;
      written = 0;
    }
  }
}

}  // namespace ringhttp::io
