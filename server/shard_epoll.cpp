// The shard on the epoll backend (core/epoll/backend.hpp).

#include "core/epoll/backend.hpp"
#include "server/shard.ipp"
#include "server/shard_db.ipp"

namespace ringhttp::server {

template class Shard<epoll::Backend>;

}  // namespace ringhttp::server
