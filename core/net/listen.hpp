#pragma once
// Listening sockets: with SO_REUSEPORT, one per shard, so the kernel spreads
// new connections over shards and no accept queue is shared; or one alone.

#include "core/net/address.hpp"

namespace ringhttp::net {

// Kernel backlog per listener; the kernel caps it at net.core.somaxconn.
inline constexpr int listen_backlog = 4096;

// Returns the fd, or -errno. When the address has port 0 the kernel picks
// one; read it back with bound_address() and reuse it for the next shards.
// TCP_NODELAY is set on it, and so on every socket it accepts.
int listen_reuseport(const Address& address);
// A listener of its own, without SO_REUSEPORT, for an address served by
// one thread (--metrics-address): a second process binding the same port
// fails with EADDRINUSE instead of silently taking half its connections.
// Returns the fd, or -errno.
int listen_exclusive(const Address& address, int backlog);
bool bound_address(int fd, Address& out);
// Whether anyone has `address` bound now: a socket is bound to it without
// SO_REUSEPORT and closed at once. SO_REUSEPORT listeners would otherwise
// join a running server's (ours or another program's) and silently take
// part of its connections. 0 when free, else -errno (-EADDRINUSE).
int probe_free(const Address& address);

}  // namespace ringhttp::net
