#pragma once
// The checks made before any worker starts, so that a run that cannot work
// stops with one clear message instead of a table of zeros.

#include <cstdint>
#include <optional>

#include "client/options.hpp"

namespace ringhttp::client {

// Everything checked before any worker starts: the server's process, the
// descriptor limit, that the target answers (and, for https, completes a
// handshake). Sets `first_address` to the address that accepted. Returns
// the exit status when the run cannot go on, after saying why.
std::optional<int> check_before_start(const Options& options, std::uint32_t& first_address);

}  // namespace ringhttp::client
