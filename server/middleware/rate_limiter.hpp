#pragma once
// A per-shard, per-client token bucket. Pure: no sockets, no clock; the
// caller passes the time, so tests drive every edge exactly. A client is a
// ClientKey (client_key.hpp): an IPv4 address, or an IPv6 /64.
//
// Each address has a bucket of `requests` tokens that refills continuously
// at `requests` per `window_ms`; a request takes one whole token or is
// refused. A new address starts with a full bucket.
//
// Tokens are kept in fixed point with 1/window_ms of a token as the unit
// (a "tick"): a request costs window_ms ticks, a full bucket holds
// requests * window_ms ticks, and each millisecond adds exactly `requests`
// ticks. Refill is therefore exact integer arithmetic with no remainder to
// lose (milli-tokens would drop the fraction of every refill at, say,
// 1 request per 3 s polled each millisecond, and never refill at all), and
// since both factors are 32-bit, no product can overflow 64 bits.
//
// Memory is bounded: the table is allocated once, in the constructor, as
// sets of `ways_per_set` entries; the number of sets is the smallest power
// of two with sets * ways_per_set >= addresses_max, so capacity() is
// addresses_max rounded up to that (4096 stays 4096; 1000 becomes 1024).
// take() never allocates.
//
// What eviction means: when an address's set is full, the entry used least
// recently is replaced, and the evicted address, if it comes back, starts
// again with a full bucket. An entry idle for at least one window is full
// anyway, so evicting it loses nothing. Under a flood of distinct clients
// (IPv6 is keyed by /64, so one host's 2^64 addresses are one client, but a
// /48 still holds 65536 /64s), an address can be evicted before its bucket
// has refilled and so get more than its budget: bounded memory is the
// price, and evictions() makes it visible. An address is evicted only when
// every other entry of its set was used more recently, so a flood evicts
// idle addresses before busy ones.
//
// Which set an address lands in is SipHash-2-4 of its key under a 128-bit
// secret drawn from getrandom(2) once per process. With a public hash,
// anyone could compute eight addresses that share a victim's set and, with
// one request from each, evict the victim and refill its bucket on demand.
// Without the secret, the addresses that share a set cannot be told apart
// from any others: evicting one chosen client takes a flood of the whole
// table, which evictions() shows.

#include <cstddef>
#include <cstdint>
#include <memory>

#include "server/middleware/client_key.hpp"
#include "server/middleware/siphash.hpp"

namespace ringhttp::server {

struct RateLimit {                     // the policy
  std::uint32_t requests = 0;          // tokens per window (the burst); 0 = limiter off
  std::uint32_t window_ms = 1000;      // refill: `requests` tokens per window, continuously
  std::uint32_t addresses_max = 4096;  // addresses tracked per shard (rounded up, see capacity())
};

// The most addresses one shard may track: 4 Mi entries of 32 bytes are
// 128 MiB per shard, already more than a limiter should cost. Options
// should refuse a larger value; the constructor asserts it.
inline constexpr std::uint32_t rate_limit_addresses_max_limit = 1u << 22;

struct RateDecision {
  bool allowed;
  std::uint32_t limit;          // policy.requests
  std::uint32_t remaining;      // whole tokens left after this request
  std::uint32_t reset_s;        // seconds (rounded up) until the bucket is full again
  std::uint32_t retry_after_s;  // when refused: seconds (rounded up, >= 1) until one token is back; 0 when allowed
};

// requests == 0 turns the limiter off rather than being an error, so a
// shard can hold a RateLimiter whatever the configuration: an off limiter
// allocates nothing, tracks nothing, and allows every request with
// limit = remaining = reset_s = retry_after_s = 0 (the caller sends no
// rate-limit headers then; enabled() says which). When on, window_ms and
// addresses_max must be > 0 and addresses_max <= rate_limit_addresses_max_limit;
// the constructor asserts it (validating them is the options' job).
class RateLimiter {
 public:
  // Ways per set: 8 entries of 32 bytes are four cache lines scanned per
  // request, and an address is evicted only after eight others have been
  // used in its set since its own last request (no hit rates were measured
  // against other sizes).
  static constexpr std::size_t ways_per_set = 8;

  // Both allocate the whole table here, once. The first keys the set index
  // with process_key(); the second with `key`, so that tests are
  // deterministic and can compare keys.
  explicit RateLimiter(const RateLimit& policy);
  RateLimiter(const RateLimit& policy, const SipKey& key);

  // The secret every limiter in this process is keyed with unless given
  // one: 128 bits from getrandom(2), drawn on first use. If getrandom
  // fails, the process says so on stderr and aborts: a limiter with a
  // guessable key is the attack this key exists to stop.
  static const SipKey& process_key();

  // One request from `client` at `now_ms` (any monotonic millisecond clock).
  // Time going backwards adds no tokens and moves no entry's clock back.
  RateDecision take(const ClientKey& client, std::uint64_t now_ms);  // never allocates

  // The set `client` lands in, from 0 to capacity() / ways_per_set - 1;
  // only when enabled(). Public so tests can show it depends on the key.
  std::size_t set_of(const ClientKey& client) const;

  bool enabled() const { return policy_.requests != 0; }
  std::size_t capacity() const { return sets_ * ways_per_set; }  // 0 when off
  std::size_t tracked() const { return tracked_; }               // addresses currently in the table
  std::uint64_t evictions() const { return evictions_; }         // entries replaced because a set was full

 private:
  // No bucket can hold this many ticks: the largest is (2^32 - 1)^2, which
  // is 2^64 - 2^33 + 1. So it marks a free way, and the all-zero key (::)
  // stays an address like any other.
  static constexpr std::uint64_t free_way_ticks = ~std::uint64_t{0};

  struct Entry {
    ClientKey client;
    std::uint64_t ticks = free_way_ticks;  // tokens * window_ms, <= bucket_ticks_; or free_way_ticks
    std::uint64_t last_ms = 0;             // when ticks was last brought up to date: the latest time seen
  };
  static_assert(sizeof(Entry) == 32, "two entries to a cache line; see ways_per_set");

  // A set fills from way 0 and a way is never freed (eviction replaces in
  // place), so the first free way ends the set's live entries.
  struct alignas(64) Set {
    Entry ways[ways_per_set];
  };
  static_assert(sizeof(Set) == 4 * 64, "a set is exactly four cache lines");

  Entry& find_or_insert(const ClientKey& client, std::uint64_t now_ms);
  void refill(Entry& entry, std::uint64_t now_ms) const;
  RateDecision decide(const Entry& entry, bool allowed) const;
  std::uint64_t token_ticks() const { return policy_.window_ms; }  // what one request costs

  RateLimit policy_;
  SipKey key_;                      // keys set_of(); see the header comment on eviction
  std::uint64_t bucket_ticks_ = 0;  // a full bucket: requests * window_ms
  std::size_t sets_ = 0;            // a power of two, or 0 when off
  std::unique_ptr<Set[]> table_;
  std::size_t tracked_ = 0;
  std::uint64_t evictions_ = 0;
};

}  // namespace ringhttp::server
