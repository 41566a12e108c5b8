// What every shard shares whatever its backend: its thread's start and
// stop, and the choice of backend.

#include <sys/eventfd.h>
#include <unistd.h>

#include "core/epoll/backend.hpp"
#include "core/uring/backend.hpp"
#include "server/shard.hpp"

namespace ringhttp::server {

ShardBase::~ShardBase() {
  if (thread_.joinable()) thread_.join();
}

void ShardBase::start(std::latch& ready) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | eventfd_flags_);
  thread_ = std::thread([this, &ready] {
    const bool ok = setup();
    ready.count_down();
    if (ok) run();
  });
}

void ShardBase::request_stop() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ShardBase::join() {
  if (thread_.joinable()) thread_.join();
}

std::unique_ptr<ShardBase> make_shard(io::BackendKind backend, const Options& options, const AppConfig& app_config,
                                      const Cors& cors, int index, int listen_fd, const uring::Features& features,
                                      const SendPath& send, tls::ServerContext* tls, ShardCounters& counters,
                                      std::span<const ShardCounters* const> all_shards) {
  if (backend == io::BackendKind::epoll) {
    return std::make_unique<Shard<epoll::Backend>>(options, app_config, cors, index, listen_fd, features, send, tls,
                                                   counters, all_shards);
  }
  return std::make_unique<Shard<uring::Backend>>(options, app_config, cors, index, listen_fd, features, send, tls,
                                                 counters, all_shards);
}

}  // namespace ringhttp::server
