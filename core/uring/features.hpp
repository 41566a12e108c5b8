#pragma once
// io_uring features: what this kernel offers (probed at start-up), what the
// user switched off (--uring), and what is therefore in use. Server and
// client share this so a variation is named the same way everywhere.

#include <cstdint>
#include <string>
#include <string_view>

namespace ringhttp::uring {

struct Features {
  bool single_issuer = false;     // IORING_SETUP_SINGLE_ISSUER (6.0)
  bool defer_taskrun = false;     // IORING_SETUP_DEFER_TASKRUN (6.1), needs single_issuer
  bool coop_taskrun = false;      // IORING_SETUP_COOP_TASKRUN (5.19), used when defer is off
  bool multishot_accept = false;  // IORING_ACCEPT_MULTISHOT (5.19)
  bool multishot_recv = false;    // IORING_RECV_MULTISHOT (6.0), needs bufring
  bool bufring = false;           // registered provided-buffer rings (5.19)

  static Features all() { return {true, true, true, true, true, true}; }
  Features intersect(const Features& other) const;
  // Comma-separated names of the features that are on, for the start-up line.
  std::string describe() const;
};

// Probes the running kernel by really trying each feature on a scratch ring
// and scratch sockets. Throws std::runtime_error when io_uring itself or an
// opcode ringhttp cannot do without is missing.
Features probe_kernel();

// Parses a --uring value: a profile ("5.10", "5.19", "6.0", "6.1", "all") or
// a comma-separated list of "no-FEATURE" switches applied to "all". Returns
// false and fills `error` on an unknown name.
bool parse_switches(std::string_view text, Features& wanted, std::string& error);

// Setup flags for io_uring_queue_init_params that match `features`.
std::uint32_t setup_flags(const Features& features);

}  // namespace ringhttp::uring
