// The shard on the epoll backend (core/epoll/backend.hpp).

#include "core/epoll/backend.hpp"
#include "server/shard.ipp"
#include "server/shard_close.ipp"
#include "server/shard_db.ipp"
#include "server/shard_input.ipp"
#include "server/shard_output.ipp"
#include "server/shard_respond.ipp"
#include "server/shard_tls.ipp"

namespace ringhttp::server {

template class Shard<epoll::Backend>;

}  // namespace ringhttp::server
