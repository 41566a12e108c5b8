#include "server/middleware/rate_limiter.hpp"

#include <algorithm>
#include <bit>
#include <cassert>

namespace ringhttp::server {
namespace {

constexpr std::uint64_t ms_per_s = 1000;

// ceil(a / b) without the overflow of (a + b - 1) / b.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// The splitmix64 finalizer (Stafford's Mix13): a bijection whose every
// output bit depends on every input bit, so the low bits that pick a set are
// as good as the high ones. Unkeyed: someone who knows it can aim distinct
// addresses at one set and evict a chosen victim early (see the header on
// eviction); a per-process seed would close that.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58'476d'1ce4'e5b9;
  x ^= x >> 27;
  x *= 0x94d0'49bb'1331'11eb;
  x ^= x >> 31;
  return x;
}

// Rotating lo keeps the fold injective for keys that differ in only one
// half (an IPv6 /64 varies lo, IPv4-mapped keys vary lo's low 32 bits).
constexpr std::uint64_t hash_of(const ClientKey& client) { return mix64(client.hi ^ std::rotl(client.lo, 32)); }

}  // namespace

RateLimiter::RateLimiter(const RateLimit& policy) : policy_(policy) {
  if (!enabled()) return;
  assert(policy_.window_ms > 0);
  assert(policy_.addresses_max > 0);
  assert(policy_.addresses_max <= rate_limit_addresses_max_limit);
  // Two 32-bit factors: the product fits 64 bits whatever the policy.
  bucket_ticks_ = std::uint64_t{policy_.requests} * policy_.window_ms;
  assert(bucket_ticks_ < free_way_ticks);
  sets_ = std::bit_ceil(static_cast<std::size_t>(ceil_div(policy_.addresses_max, ways_per_set)));
  assert(std::has_single_bit(sets_));
  assert(capacity() >= policy_.addresses_max);
  table_ = std::make_unique<Set[]>(sets_);
}

RateDecision RateLimiter::take(const ClientKey& client, std::uint64_t now_ms) {
  if (!enabled()) return RateDecision{.allowed = true, .limit = 0, .remaining = 0, .reset_s = 0, .retry_after_s = 0};
  Entry& entry = find_or_insert(client, now_ms);
  refill(entry, now_ms);
  const bool allowed = entry.ticks >= token_ticks();
  if (allowed) entry.ticks -= token_ticks();
  return decide(entry, allowed);
}

RateLimiter::Entry& RateLimiter::find_or_insert(const ClientKey& client, std::uint64_t now_ms) {
  Set& set = table_[hash_of(client) & (sets_ - 1)];
  Entry* slot = nullptr;
  for (Entry& way : set.ways) {
    if (way.ticks == free_way_ticks) {
      slot = &way;
      ++tracked_;
      break;
    }
    if (way.client == client) return way;
  }
  if (slot == nullptr) {
    slot = &set.ways[0];
    for (Entry& candidate : set.ways) {
      if (candidate.last_ms < slot->last_ms) slot = &candidate;
    }
    ++evictions_;
  }
  assert(tracked_ <= capacity());
  *slot = Entry{.client = client, .ticks = bucket_ticks_, .last_ms = now_ms};
  return *slot;
}

void RateLimiter::refill(Entry& entry, std::uint64_t now_ms) const {
  // The same millisecond adds nothing; an earlier one (a clock that went
  // backwards) adds nothing either, and last_ms stays the latest time seen so
  // the interval is not counted twice when the clock catches up.
  if (now_ms <= entry.last_ms) return;
  // One window refills an empty bucket, so a longer gap cannot add more;
  // capping first keeps the product below bucket_ticks_.
  const std::uint64_t elapsed_ms = std::min<std::uint64_t>(now_ms - entry.last_ms, policy_.window_ms);
  const std::uint64_t added_ticks = elapsed_ms * policy_.requests;
  assert(entry.ticks <= bucket_ticks_);
  entry.ticks += std::min(added_ticks, bucket_ticks_ - entry.ticks);
  entry.last_ms = now_ms;
}

RateDecision RateLimiter::decide(const Entry& entry, bool allowed) const {
  assert(entry.ticks <= bucket_ticks_);
  assert(allowed || entry.ticks < token_ticks());
  // Ticks come back at `requests` per ms, so `requests * 1000` per second.
  const std::uint64_t ticks_per_s = std::uint64_t{policy_.requests} * ms_per_s;
  const std::uint64_t missing_ticks = bucket_ticks_ - entry.ticks;
  // remaining <= requests, and both waits are at most ceil(window_ms / 1000)
  // seconds, so every field fits 32 bits.
  RateDecision decision{
      .allowed = allowed,
      .limit = policy_.requests,
      .remaining = static_cast<std::uint32_t>(entry.ticks / token_ticks()),
      .reset_s = static_cast<std::uint32_t>(ceil_div(missing_ticks, ticks_per_s)),
      .retry_after_s = 0,
  };
  if (!allowed) {
    // The deficit is > 0, so the wait rounds up to at least one second.
    decision.retry_after_s = static_cast<std::uint32_t>(ceil_div(token_ticks() - entry.ticks, ticks_per_s));
    assert(decision.retry_after_s >= 1);
  }
  return decision;
}

}  // namespace ringhttp::server
