#pragma once
// The checks of the flags the server and the client both take, written
// once: each stores into the field of the same name in either program's
// Options (cpus; wanted_features and uring_text; backend).

#include <string>
#include <string_view>

#include "core/io/completion.hpp"
#include "core/net/cpu.hpp"
#include "core/uring/features.hpp"

namespace ringhttp::cli {

// --cpus LIST: "0,1", "0-3".
template <typename Options>
bool store_cpus(std::string_view value, Options& out, std::string& error) {
  return net::parse_cpu_list(value, out.cpus, error);
}

// --uring [profile,]switches, kept as given for the start-up line.
template <typename Options>
bool store_uring(std::string_view value, Options& out, std::string& error) {
  if (!uring::parse_switches(value, out.wanted_features, error)) return false;
  out.uring_text = std::string(value);
  return true;
}

// --backend uring|epoll.
template <typename Options>
bool store_backend(std::string_view value, Options& out, std::string&) {
  return io::parse_backend(value, out.backend);
}

}  // namespace ringhttp::cli
