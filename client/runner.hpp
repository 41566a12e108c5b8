#pragma once
// One whole run: probe io_uring, check that the target answers, start the
// workers, sample CPU time at the measured window's edges, merge the
// workers' figures and print the report. Returns the exit status.

#include "client/options.hpp"

namespace ringhttp::client {

int run(const Options& options);

}  // namespace ringhttp::client
