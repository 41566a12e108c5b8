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
  // Direct descriptors (5.19): connections live in the ring's own file
  // table, not the process's (accepted into it with IORING_FILE_INDEX_ALLOC,
  // or a client's socket placed at its slot), and every operation on them
  // names the slot with IOSQE_FIXED_FILE, which spares the kernel looking
  // the descriptor up and counting references on each one; the ring's own
  // descriptor is registered too (5.18), sparing the same on each
  // io_uring_enter.
  bool fixed_files = false;
  // IORING_SETUP_SQPOLL (5.11 unprivileged): a kernel thread polls the SQ.
  // Opt-in only: no profile turns it on, so `all` and every profile leave it
  // off unless "sqpoll" is named. The kernel refuses it together with
  // DEFER_TASKRUN and COOP_TASKRUN, so where it is on those two are off.
  bool sqpoll = false;
  // IORING_SETUP_NO_SQARRAY (6.6): the kernel takes submissions in ring
  // order, without the index array liburing would otherwise fill and the
  // kernel read for each one.
  bool no_sqarray = false;
  // IORING_FEAT_MIN_TIMEOUT (6.12): each wait asks for a batch of
  // completions (Ring::min_wait_batch) and returns once it has come, or
  // Ring::min_wait_us after the first one, whichever is sooner: fewer
  // wake-ups under load, at most that much later at low load. A trade of
  // latency, so opt-in like sqpoll: no profile turns it on. Off with sqpoll
  // (the poller's ring is waited on differently).
  bool min_wait = false;
  // IORING_FEAT_MIN_TIMEOUT as a capability: a wait may take min_wait_usec,
  // so the client's batching wait (--batch-wait, which sets it per wait)
  // can be had. In `all` and 6.12, not in older profiles: a profile shows
  // what that kernel would have cost. Not a feature in use by itself, so
  // the start-up line does not list it. Off with sqpoll.
  bool min_timeout = false;
  // IORING_RECVSEND_BUNDLE (6.10, IORING_FEAT_RECVSEND_BUNDLE): one receive
  // completion may take several provided buffers at once (ReceiveBuffers
  // hands them out one at a time). Needs bufring.
  bool recv_bundle = false;
  // IOU_PBUF_RING_INC (6.12): a provided buffer is consumed in part, each
  // receive's bytes right after the last one's, so a small receive does not
  // use up a whole buffer. Needs bufring.
  bool incremental_buffers = false;

  // Features newer than 6.1, and fixed-files, that the user asked for by
  // name (a switch, or a profile other than `all`), as bits: when this
  // kernel lacks one, stderr says so. `all` asks for nothing by name: it is whatever the kernel has.
  static constexpr std::uint32_t asked_no_sqarray = 1u << 0;
  static constexpr std::uint32_t asked_min_wait = 1u << 1;
  static constexpr std::uint32_t asked_recv_bundle = 1u << 2;
  static constexpr std::uint32_t asked_incremental_buffers = 1u << 3;
  static constexpr std::uint32_t asked_fixed_files = 1u << 4;
  std::uint32_t asked = 0;

  // Everything but sqpoll and min-wait, which must be asked for.
  static Features all() {
    Features f;
    f.single_issuer = f.defer_taskrun = f.coop_taskrun = true;
    f.multishot_accept = f.multishot_recv = f.bufring = true;
    f.fixed_files = true;
    f.no_sqarray = true;
    f.recv_bundle = true;
    f.incremental_buffers = true;
    f.min_timeout = true;
    return f;
  }
  Features intersect(const Features& other) const;
  // Comma-separated names of the features that are on, for the start-up line.
  std::string describe() const;
};

// Zero-copy send (IORING_OP_SENDMSG_ZC, 6.1). Not a --uring feature: it
// changes no ring setup, and the server's --send zc is what asks for it.
struct ZeroCopySend {
  bool available = false;
  bool report_usage = false;  // IORING_SEND_ZC_REPORT_USAGE (6.2) accepted
  std::string why_not;        // when not available, for the fallback's stderr line
};

// Tries one zero-copy sendmsg on a loopback TCP pair (AF_UNIX sockets do not
// take zero-copy sends) and waits for its notification; with usage
// reporting first, then without.
ZeroCopySend probe_zero_copy_send();

// Probes the running kernel by really trying each feature on a scratch ring
// and scratch sockets. Throws std::runtime_error when io_uring itself or an
// opcode ringhttp cannot do without is missing.
Features probe_kernel();

// Parses a --uring value: a comma-separated list whose optional first item
// is a profile ("5.10", "5.19", "6.0", "6.1", "6.6", "6.10", "6.12",
// "all"; "all" when there is none), followed by switches applied to that
// profile in order: "no-FEATURE" turns a feature of 6.1 or before off
// (no-fixed-files...), "fixed-files" turns that one on (on 5.10),
// "sqpoll", "no-sqarray", "min-wait", "recv-bundle" and
// "incremental-buffers" turn theirs on, "sqarray", "no-recv-bundle" and
// "no-incremental-buffers" turn theirs off: "sqpoll", "all,min-wait",
// "all,sqpoll", "5.19,sqpoll", "no-bufring", "6.0,no-bufring,sqpoll",
// "6.1,no-sqarray", "6.1,recv-bundle", "all,no-incremental-buffers".
// Returns false and fills `error` on an unknown name, an empty item, or a
// profile that is not first.
bool parse_switches(std::string_view text, Features& wanted, std::string& error);

// One line for stderr when something asked for by name could not be had
// here (sqpoll refused by the kernel or for this user, a 6.6 or later
// feature on an older kernel), or empty. Features
// that are on by default and missing are simply off, as the start-up line
// shows; this is for what the user explicitly turned on.
std::string unavailable_note(const Features& wanted, const Features& kernel);

// Setup flags for io_uring_queue_init_params that match `features`.
std::uint32_t setup_flags(const Features& features);

}  // namespace ringhttp::uring
