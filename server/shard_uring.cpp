// The shard on the io_uring backend (core/uring/backend.hpp).

#include "core/uring/backend.hpp"
#include "server/shard.ipp"
#include "server/shard_db.ipp"

namespace ringhttp::server {

template class Shard<uring::Backend>;

}  // namespace ringhttp::server
