#pragma once
// Requests that vary: a placeholder {seq:A..B} or {rand:A..B} in the URL's
// path, a header, the body or the expected body stands for the numbers A to
// B, one request after another taking the next: in order (seq), or in a
// shuffled order that is the same every run (rand). Every placeholder of a
// run is the same one, and within one request each is replaced by the same
// number, so `/users/{seq:1..100}` with the expected body
// `{"id":{seq:1..100}}` checks each response against its own request. The
// requests are serialized once at start (client/load/request.hpp); the hot path
// sends bytes that already exist.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringhttp::client {

// The most numbers one placeholder may stand for: every request (and its
// expected body) is serialized at start, so this bounds that memory (a
// million requests of a hundred bytes is 100 MB), and the seeds' tables are
// 10,000 rows.
inline constexpr std::uint64_t placeholder_values_max = 1'000'000;

struct Placeholder {
  std::string text;  // as written, e.g. "{seq:1..10000}"
  bool shuffled = false;
  std::uint64_t first = 0;
  std::uint64_t last = 0;

  std::uint64_t count() const { return last - first + 1; }
  // The number request i (0 <= i < count()) stands for.
  std::vector<std::uint64_t> order() const;
};

// Finds the run's placeholder in `fields`. Returns an error message (empty
// when the fields are fine): a malformed placeholder, a range that is empty
// or larger than placeholder_values_max, or two different placeholders.
std::string find_placeholder(const std::vector<std::string_view>& fields, std::optional<Placeholder>& out);

// `field` with every occurrence of the placeholder replaced by `value`.
std::string substitute(std::string_view field, const Placeholder& placeholder, std::uint64_t value);

}  // namespace ringhttp::client
