// RateLimiter alone: the token bucket's arithmetic, exact to the
// millisecond, and the bounded table under an address flood. Time is
// passed in, so every case runs in microseconds.

#include "server/middleware/rate_limiter.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace ringhttp::server {
namespace {

constexpr ClientKey client_a{.hi = 0x2001'0db8'0000'0000, .lo = 1};
constexpr ClientKey client_b{.hi = 0x2001'0db8'0000'0000, .lo = 2};

// A distinct key per index, as a flood from many IPv6 /64s would send
// (client_key_of gives each /64 its own key and every address in it one).
constexpr ClientKey flood_key(std::uint64_t index) { return ClientKey{.hi = 0x2001'0db8'0000'0000 | index, .lo = 0}; }

// Two fixed secrets, so the tests that depend on which set a key lands in
// are deterministic.
constexpr SipKey key_a{.k0 = 0x0123'4567'89ab'cdef, .k1 = 0xfedc'ba98'7654'3210};
constexpr SipKey key_b{.k0 = 0x0f1e'2d3c'4b5a'6978, .k1 = 0x8796'a5b4'c3d2'e1f0};

sockaddr_storage ipv6_peer(const char* text) {
  sockaddr_storage storage{};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(storage);
  in6.sin6_family = AF_INET6;
  EXPECT_EQ(inet_pton(AF_INET6, text, &in6.sin6_addr), 1) << text;
  return storage;
}

// Takes until refused; returns how many were allowed (at most `limit_max`).
std::uint32_t drain(RateLimiter& limiter, const ClientKey& client, std::uint64_t now_ms,
                    std::uint32_t limit_max = 1'000'000) {
  std::uint32_t allowed = 0;
  while (allowed < limit_max && limiter.take(client, now_ms).allowed) ++allowed;
  return allowed;
}

TEST(RateLimit, burst_is_exactly_requests_then_refused) {
  RateLimiter limiter(RateLimit{.requests = 5, .window_ms = 1000});
  for (std::uint32_t i = 0; i < 5; ++i) {
    const RateDecision d = limiter.take(client_a, 0);
    EXPECT_TRUE(d.allowed) << i;
    EXPECT_EQ(d.limit, 5u);
    EXPECT_EQ(d.retry_after_s, 0u);
  }
  const RateDecision refused = limiter.take(client_a, 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.limit, 5u);
  EXPECT_EQ(refused.remaining, 0u);
  EXPECT_GE(refused.retry_after_s, 1u);
  EXPECT_EQ(refused.retry_after_s, 1u);  // one token is back after 200 ms
  EXPECT_EQ(refused.reset_s, 1u);
  // Refusals take nothing: still refused, still the same wait.
  EXPECT_FALSE(limiter.take(client_a, 0).allowed);
}

TEST(RateLimit, remaining_counts_down_exactly) {
  RateLimiter limiter(RateLimit{.requests = 100, .window_ms = 1000});
  for (std::uint32_t i = 0; i < 100; ++i) EXPECT_EQ(limiter.take(client_a, 0).remaining, 99 - i);
  EXPECT_EQ(limiter.take(client_a, 0).remaining, 0u);
}

TEST(RateLimit, a_full_window_gives_the_full_budget_back) {
  RateLimiter limiter(RateLimit{.requests = 5, .window_ms = 1000});
  EXPECT_EQ(drain(limiter, client_a, 0), 5u);
  EXPECT_EQ(drain(limiter, client_a, 1000), 5u);
  // A long idle gap fills the bucket, never beyond it.
  EXPECT_EQ(drain(limiter, client_a, 1'000'000), 5u);
}

TEST(RateLimit, half_a_window_gives_exactly_half_the_tokens) {
  RateLimiter limiter(RateLimit{.requests = 10, .window_ms = 1000});
  EXPECT_EQ(drain(limiter, client_a, 0), 10u);
  EXPECT_EQ(drain(limiter, client_a, 500), 5u);
  EXPECT_EQ(drain(limiter, client_a, 599), 0u);  // 99 ms is 0.99 of a token
  EXPECT_EQ(drain(limiter, client_a, 600), 1u);  // and the 100th ms completes it
}

TEST(RateLimit, refill_keeps_fractions_of_a_token_when_polled_every_ms) {
  // One token per 3 s is 1/3000 of a token per ms; a limiter that rounded
  // each refill down would never give one back to a client polling each ms.
  RateLimiter limiter(RateLimit{.requests = 1, .window_ms = 3000});
  EXPECT_TRUE(limiter.take(client_a, 0).allowed);
  for (std::uint64_t now_ms = 1; now_ms < 3000; ++now_ms)
    ASSERT_FALSE(limiter.take(client_a, now_ms).allowed) << now_ms;
  EXPECT_TRUE(limiter.take(client_a, 3000).allowed);
}

TEST(RateLimit, reset_s_is_the_wait_until_full_rounded_up) {
  RateLimiter per_minute(RateLimit{.requests = 60, .window_ms = 60'000});
  EXPECT_EQ(per_minute.take(client_a, 0).reset_s, 1u);  // one token is one second
  for (int i = 0; i < 58; ++i) per_minute.take(client_a, 0);
  EXPECT_EQ(per_minute.take(client_a, 0).reset_s, 60u);       // the 60th: empty, a whole window to full
  EXPECT_EQ(per_minute.take(client_a, 30'000).reset_s, 31u);  // 30 refilled, this one taken: 31 missing
  EXPECT_EQ(per_minute.take(client_a, 30'500).reset_s, 32u);  // 31.5 missing, rounded up

  RateLimiter odd_window(RateLimit{.requests = 1, .window_ms = 2500});
  const RateDecision first = odd_window.take(client_a, 0);
  EXPECT_EQ(first.remaining, 0u);
  EXPECT_EQ(first.reset_s, 3u);  // 2.5 s rounded up
  const RateDecision refused = odd_window.take(client_a, 2000);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 1u);  // 0.5 s rounded up
  EXPECT_EQ(refused.reset_s, 1u);
}

TEST(RateLimit, waiting_retry_after_s_is_enough) {
  RateLimiter limiter(RateLimit{.requests = 3, .window_ms = 10'000});
  EXPECT_EQ(drain(limiter, client_a, 0), 3u);
  const RateDecision refused = limiter.take(client_a, 0);
  EXPECT_EQ(refused.retry_after_s, 4u);  // a token per 3333.3 ms
  EXPECT_FALSE(limiter.take(client_a, 3333).allowed);
  EXPECT_TRUE(limiter.take(client_a, refused.retry_after_s * 1000ull).allowed);
}

TEST(RateLimit, addresses_are_independent) {
  RateLimiter limiter(RateLimit{.requests = 3, .window_ms = 1000});
  EXPECT_EQ(drain(limiter, client_a, 0), 3u);
  EXPECT_EQ(drain(limiter, client_b, 0), 3u);
  EXPECT_FALSE(limiter.take(client_a, 0).allowed);
  EXPECT_EQ(limiter.tracked(), 2u);
  EXPECT_EQ(limiter.evictions(), 0u);
}

TEST(RateLimit, the_all_zero_key_is_an_address_like_any_other) {
  // :: is what client_key_of gives non-IP peers; a free way is marked in
  // its ticks, not its key, so :: is tracked and limited like the rest.
  RateLimiter limiter(RateLimit{.requests = 1, .window_ms = 1000});
  EXPECT_TRUE(limiter.take(ClientKey{}, 0).allowed);
  EXPECT_FALSE(limiter.take(ClientKey{}, 0).allowed);
  EXPECT_EQ(limiter.tracked(), 1u);
}

TEST(RateLimit, ipv4_and_its_mapped_ipv6_share_a_bucket_other_ipv6_does_not) {
  sockaddr_storage v4{};
  auto& in4 = reinterpret_cast<sockaddr_in&>(v4);
  in4.sin_family = AF_INET;
  ASSERT_EQ(inet_pton(AF_INET, "203.0.113.9", &in4.sin_addr), 1);
  sockaddr_storage mapped{};
  auto& in6 = reinterpret_cast<sockaddr_in6&>(mapped);
  in6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "::ffff:203.0.113.9", &in6.sin6_addr), 1);
  sockaddr_storage other{};
  auto& other6 = reinterpret_cast<sockaddr_in6&>(other);
  other6.sin6_family = AF_INET6;
  ASSERT_EQ(inet_pton(AF_INET6, "2001:db8::203.0.113.9", &other6.sin6_addr), 1);

  RateLimiter limiter(RateLimit{.requests = 2, .window_ms = 1000});
  EXPECT_TRUE(limiter.take(client_key_of(v4), 0).allowed);
  EXPECT_TRUE(limiter.take(client_key_of(mapped), 0).allowed);
  EXPECT_FALSE(limiter.take(client_key_of(v4), 0).allowed);
  EXPECT_EQ(drain(limiter, client_key_of(other), 0), 2u);
  EXPECT_EQ(limiter.tracked(), 2u);
}

TEST(RateLimit, ipv6_addresses_in_one_slash_64_share_a_bucket_other_slash_64s_do_not) {
  RateLimiter limiter(RateLimit{.requests = 2, .window_ms = 1000});
  EXPECT_TRUE(limiter.take(client_key_of(ipv6_peer("2001:db8:a:b::1")), 0).allowed);
  EXPECT_TRUE(limiter.take(client_key_of(ipv6_peer("2001:db8:a:b:dead:beef:0:2")), 0).allowed);
  // A third address of the same /64 finds the bucket empty.
  EXPECT_FALSE(limiter.take(client_key_of(ipv6_peer("2001:db8:a:b:ffff::3")), 0).allowed);
  // The neighbouring /64 is another client with its own bucket.
  EXPECT_EQ(drain(limiter, client_key_of(ipv6_peer("2001:db8:a:c::1")), 0), 2u);
  EXPECT_EQ(limiter.tracked(), 2u);
}

TEST(RateLimit, the_set_index_depends_on_the_key) {
  constexpr std::uint64_t keys_tried = 10'000;
  const RateLimit policy{.requests = 1, .addresses_max = 4096};
  const RateLimiter under_a(policy, key_a);
  const RateLimiter again_a(policy, key_a);
  const RateLimiter under_b(policy, key_b);
  const std::size_t sets = under_a.capacity() / RateLimiter::ways_per_set;
  ASSERT_EQ(sets, 512u);
  std::uint64_t same_set = 0;
  for (std::uint64_t i = 0; i < keys_tried; ++i) {
    ASSERT_EQ(under_a.set_of(flood_key(i)), again_a.set_of(flood_key(i))) << "one key, one index";
    if (under_a.set_of(flood_key(i)) == under_b.set_of(flood_key(i))) ++same_set;
  }
  // Unrelated keys agree by chance, 1 time in 512: about 20 here. An
  // unkeyed hash would agree on all 10'000.
  EXPECT_LT(same_set, 3 * keys_tried / sets);
}

TEST(RateLimit, eight_addresses_aimed_at_a_set_evict_only_under_the_key_they_were_aimed_with) {
  // An attacker who knows key_a picks 8 keys of the victim's set under it;
  // one request from each evicts the victim, whose bucket comes back full.
  // Under any other key those 8 are scattered, and the victim keeps its
  // empty bucket. Without a keyed hash both limiters would be evicted.
  const RateLimit policy{.requests = 4, .window_ms = 1'000'000, .addresses_max = 4096};
  RateLimiter known(policy, key_a);
  RateLimiter unknown(policy, key_b);
  const std::size_t victim_set = known.set_of(client_a);
  std::vector<ClientKey> aimed;
  for (std::uint64_t i = 0; aimed.size() < RateLimiter::ways_per_set; ++i) {
    if (known.set_of(flood_key(i)) == victim_set) aimed.push_back(flood_key(i));
  }
  std::size_t aimed_in_victim_set_unknown = 0;
  for (const ClientKey& key : aimed) aimed_in_victim_set_unknown += unknown.set_of(key) == unknown.set_of(client_a);
  EXPECT_LT(aimed_in_victim_set_unknown, RateLimiter::ways_per_set);

  for (RateLimiter* limiter : {&known, &unknown}) {
    EXPECT_EQ(drain(*limiter, client_a, 0), 4u);
    std::uint64_t now_ms = 1;
    for (const ClientKey& key : aimed) limiter->take(key, now_ms++);
  }
  EXPECT_EQ(known.evictions(), 1u);
  EXPECT_TRUE(known.take(client_a, 100).allowed) << "evicted: a fresh, full bucket";
  EXPECT_EQ(unknown.evictions(), 0u);
  EXPECT_FALSE(unknown.take(client_a, 100).allowed) << "not evicted: still empty";
}

TEST(RateLimit, the_process_key_is_drawn_once_and_used_by_default) {
  const SipKey& key = RateLimiter::process_key();
  EXPECT_EQ(&key, &RateLimiter::process_key());
  EXPECT_NE(key, SipKey{}) << "128 random bits are all zero once in 2^128";
  const RateLimit policy{.requests = 1, .addresses_max = 4096};
  const RateLimiter by_default(policy);
  const RateLimiter given(policy, key);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(by_default.set_of(flood_key(i)), given.set_of(flood_key(i)));
}

TEST(RateLimit, capacity_is_addresses_max_rounded_up_to_whole_power_of_two_sets) {
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 1}).capacity(), 8u);
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 8}).capacity(), 8u);
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 9}).capacity(), 16u);
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 1000}).capacity(), 1024u);
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 4096}).capacity(), 4096u);
  EXPECT_EQ(RateLimiter(RateLimit{.requests = 1, .addresses_max = 4097}).capacity(), 8192u);
}

TEST(RateLimit, a_full_set_evicts_the_least_recently_used) {
  // addresses_max = 8 is one set of 8 ways, so every address shares it.
  RateLimiter limiter(RateLimit{.requests = 4, .window_ms = 1'000'000, .addresses_max = 8});
  ASSERT_EQ(limiter.capacity(), 8u);
  for (std::uint64_t i = 0; i < 8; ++i) limiter.take(flood_key(i), i);  // each has 3 left
  EXPECT_EQ(limiter.take(flood_key(0), 8).remaining, 2u);               // 0 is now the most recent
  EXPECT_EQ(limiter.tracked(), 8u);
  EXPECT_EQ(limiter.evictions(), 0u);

  EXPECT_EQ(limiter.take(flood_key(8), 9).remaining, 3u);  // evicts 1, the least recently used
  EXPECT_EQ(limiter.tracked(), 8u);
  EXPECT_EQ(limiter.evictions(), 1u);
  EXPECT_EQ(limiter.take(flood_key(0), 10).remaining, 1u);  // 0 kept its bucket
  EXPECT_EQ(limiter.take(flood_key(2), 11).remaining, 2u);  // 2 was kept too
  EXPECT_EQ(limiter.evictions(), 1u);
  // 1 comes back as new, with a full bucket: what eviction costs.
  EXPECT_EQ(limiter.take(flood_key(1), 12).remaining, 3u);
  EXPECT_EQ(limiter.evictions(), 2u);
}

TEST(RateLimit, an_address_flood_keeps_the_table_bounded) {
  constexpr std::uint64_t flood_addresses = 100'000;
  RateLimiter limiter(RateLimit{.requests = 10, .window_ms = 1000, .addresses_max = 4096}, key_a);
  ASSERT_EQ(limiter.capacity(), 4096u);
  for (std::uint64_t i = 0; i < flood_addresses; ++i) {
    ASSERT_TRUE(limiter.take(flood_key(i), i).allowed) << i;  // a new address starts full
    ASSERT_LE(limiter.tracked(), limiter.capacity());
  }
  // Every first sighting either filled a free way or replaced one.
  EXPECT_EQ(limiter.tracked() + limiter.evictions(), flood_addresses);
  EXPECT_GT(limiter.evictions(), 0u);
  EXPECT_EQ(limiter.tracked(), limiter.capacity());  // 100k over 512 sets fills every one

  const RateDecision fresh = limiter.take(client_a, flood_addresses);
  EXPECT_TRUE(fresh.allowed);
  EXPECT_EQ(fresh.remaining, 9u);
  EXPECT_LE(limiter.tracked(), limiter.capacity());
}

TEST(RateLimit, an_address_busy_through_a_flood_keeps_its_bucket) {
  // Client a sends each millisecond while a new address arrives each
  // millisecond. Being the most recent in its set, a is never the victim, so
  // it gets its burst plus the refill and not a fresh bucket per eviction.
  constexpr std::uint64_t flood_ms = 20'000;
  RateLimiter limiter(RateLimit{.requests = 10, .window_ms = 1000, .addresses_max = 64});
  std::uint64_t allowed = 0;
  for (std::uint64_t now_ms = 0; now_ms < flood_ms; ++now_ms) {
    limiter.take(flood_key(now_ms), now_ms);
    if (limiter.take(client_a, now_ms).allowed) ++allowed;
  }
  EXPECT_GT(limiter.evictions(), flood_ms / 2);
  EXPECT_EQ(allowed, 10 + (flood_ms - 1) / 100);  // the burst, then one token per 100 ms
}

TEST(RateLimit, time_going_backwards_adds_nothing) {
  RateLimiter limiter(RateLimit{.requests = 1, .window_ms = 1000});
  EXPECT_TRUE(limiter.take(client_a, 10'000).allowed);
  const RateDecision earlier = limiter.take(client_a, 5'000);
  EXPECT_FALSE(earlier.allowed);
  EXPECT_EQ(earlier.remaining, 0u);
  EXPECT_EQ(earlier.retry_after_s, 1u);
  EXPECT_FALSE(limiter.take(client_a, 0).allowed);
  // The backwards step is not counted when the clock catches up: the token
  // is back one window after 10'000, not earlier.
  EXPECT_FALSE(limiter.take(client_a, 10'999).allowed);
  EXPECT_TRUE(limiter.take(client_a, 11'000).allowed);
}

TEST(RateLimit, large_windows_and_rates_do_not_overflow) {
  constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t u64_max = std::numeric_limits<std::uint64_t>::max();

  RateLimiter ten_million(RateLimit{.requests = 10'000'000, .window_ms = u32_max});
  EXPECT_EQ(ten_million.take(client_a, 0).remaining, 9'999'999u);
  const RateDecision late = ten_million.take(client_a, u64_max);  // the longest gap there is
  EXPECT_TRUE(late.allowed);
  EXPECT_EQ(late.remaining, 9'999'999u);
  EXPECT_EQ(late.reset_s, 1u);  // a token is 0.43 s at this rate

  // The largest policy: a full bucket is (2^32 - 1)^2 ticks, just below 2^64.
  RateLimiter largest(RateLimit{.requests = u32_max, .window_ms = u32_max});
  EXPECT_EQ(largest.take(client_a, 0).remaining, u32_max - 1);
  EXPECT_EQ(largest.take(client_a, u64_max).remaining, u32_max - 1);

  // A slow rate over the longest window: the waits are long but exact.
  RateLimiter slow(RateLimit{.requests = 2, .window_ms = u32_max});
  EXPECT_EQ(drain(slow, client_a, 0), 2u);
  const RateDecision refused = slow.take(client_a, 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.retry_after_s, 2'147'484u);  // ceil((2^32 - 1) / 2 ms)
  EXPECT_EQ(refused.reset_s, 4'294'968u);        // ceil((2^32 - 1) ms)
  EXPECT_EQ(drain(slow, client_a, u64_max), 2u);

  RateLimiter ten_million_per_second(RateLimit{.requests = 10'000'000, .window_ms = 1000});
  EXPECT_EQ(drain(ten_million_per_second, client_a, 0, 20'000'000), 10'000'000u);
  EXPECT_EQ(drain(ten_million_per_second, client_a, 1, 20'000'000), 10'000u);
}

TEST(RateLimit, zero_requests_turns_the_limiter_off) {
  RateLimiter limiter(RateLimit{.requests = 0});
  EXPECT_FALSE(limiter.enabled());
  EXPECT_EQ(limiter.capacity(), 0u);
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const RateDecision d = limiter.take(flood_key(i % 3), 0);
    ASSERT_TRUE(d.allowed);
    ASSERT_EQ(d.limit, 0u);
    ASSERT_EQ(d.retry_after_s, 0u);
  }
  EXPECT_EQ(limiter.tracked(), 0u);
  EXPECT_EQ(limiter.evictions(), 0u);
}

}  // namespace
}  // namespace ringhttp::server
