// The shard on the io_uring backend (core/uring/backend.hpp).

#include "core/uring/backend.hpp"
#include "server/shard.ipp"
#include "server/shard_close.ipp"
#include "server/shard_db.ipp"
#include "server/shard_input.ipp"
#include "server/shard_output.ipp"
#include "server/shard_respond.ipp"
#include "server/shard_tls.ipp"

namespace ringhttp::server {

template class Shard<uring::Backend>;

}  // namespace ringhttp::server
