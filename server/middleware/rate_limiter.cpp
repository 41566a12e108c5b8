#include "server/middleware/rate_limiter.hpp"

#include <sys/random.h>

#include <algorithm>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ringhttp::server {
namespace {

constexpr std::uint64_t ms_per_s = 1000;

// ceil(a / b) without the overflow of (a + b - 1) / b.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// getrandom(2) without flags blocks only until the kernel's pool has been
// seeded once at boot, then never; it may be interrupted by a signal, and
// a read of 16 bytes is never short once it returns, but both are handled.
SipKey draw_random_key() {
  std::uint8_t bytes[sizeof(SipKey)];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "ringhttp: getrandom(2) failed, so the rate limiter has no secret key: %s\n",
                   n < 0 ? std::strerror(errno) : "no bytes");
      std::abort();
    }
    got += std::size_t(n);
  }
  SipKey key;
  std::memcpy(&key.k0, bytes, sizeof key.k0);
  std::memcpy(&key.k1, bytes + sizeof key.k0, sizeof key.k1);
  return key;
}

}  // namespace

const SipKey& RateLimiter::process_key() {
  // A function-local static: drawn once, on first use, safely even when
  // several shards build their limiters at the same time.
  static const SipKey key = draw_random_key();
  return key;
}

RateLimiter::RateLimiter(const RateLimit& policy) : RateLimiter(policy, process_key()) {}

RateLimiter::RateLimiter(const RateLimit& policy, const SipKey& key) : policy_(policy), key_(key) {
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

std::size_t RateLimiter::set_of(const ClientKey& client) const {
  assert(enabled());
  // sets_ is a power of two, and every bit of SipHash's output is as
  // unpredictable as any other, so the low bits make a fair index.
  return std::size_t(siphash24(key_, client.hi, client.lo) & (sets_ - 1));
}

RateLimiter::Entry& RateLimiter::find_or_insert(const ClientKey& client, std::uint64_t now_ms) {
  Set& set = table_[set_of(client)];
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
