#pragma once
// A send's cursor over its iovecs: after a short write, the next send
// starts at exactly the next unsent byte.

#include <sys/socket.h>

#include <cstddef>

namespace ringhttp::io {

// Advances `msg`'s iovecs past `written` bytes. `written` is at most the
// iovecs' total; the iovecs themselves are modified only in the first one
// still partly unsent.
void advance_iovecs(msghdr& msg, std::size_t written);

}  // namespace ringhttp::io
