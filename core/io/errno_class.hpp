#pragma once
// What a completion's negative result means, for every socket operation
// the server and the client submit: one classifier, used everywhere, so
// each handler decides by class and a bug is never mistaken for a peer
// that left.
//
//   cancelled  -ECANCELED: our own cancel (or a multishot ended by one).
//   retry      nothing is wrong with us or the peer: submit again now
//              (-EINTR, -EAGAIN, and -ECONNABORTED, a connection reset
//              before accept took it).
//   peer_gone  the connection is over from the network's side: reset,
//              broken pipe, unreachable, timed out, refused (a connect).
//   exhausted  the process or the kernel ran out of something (descriptors,
//              memory, socket buffers, ephemeral ports): back off, count it,
//              and try later; nothing the peer did.
//   bug        an operation we built wrongly (bad descriptor, bad address,
//              bad argument): no peer can cause these, so handlers assert.
//
// An errno not named here is treated as peer_gone: the connection is
// dropped and the process goes on, since asserting on an errno a future
// kernel might return for network reasons would be a remote crash.

#include <cstdint>

namespace ringhttp::io {

enum class ErrnoClass : std::uint8_t { ok, cancelled, retry, peer_gone, exhausted, bug };

// `res` is a CQE result: >= 0 is ok, else -errno.
ErrnoClass classify(std::int32_t res);

const char* name(ErrnoClass c);

}  // namespace ringhttp::io
