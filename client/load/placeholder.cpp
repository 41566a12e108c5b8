#include "client/load/placeholder.hpp"

#include <numeric>
#include <utility>

#include "core/text/parse_number.hpp"

namespace ringhttp::client {
namespace {

constexpr std::string_view kinds[] = {"{seq:", "{rand:"};
// rand's order: a fixed seed, so that two runs (or a run and its rerun)
// send the same requests in the same order.
constexpr std::uint64_t shuffle_seed = 0x5eed'0f'7a61'd5ull;

// splitmix64: small, fast, and good enough to shuffle a table's keys.
std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The placeholder starting at `text` (which starts with a kind), or an error.
std::string parse_one(std::string_view text, Placeholder& out) {
  const std::size_t close = text.find('}');
  if (close == std::string_view::npos) return "a placeholder without its closing '}': " + std::string(text.substr(0, 24));
  out.text = std::string(text.substr(0, close + 1));
  out.shuffled = text.starts_with("{rand:");
  const std::string_view range = text.substr(out.shuffled ? 6 : 5, close - (out.shuffled ? 6 : 5));
  const std::size_t dots = range.find("..");
  if (dots == std::string_view::npos ||
      !text::parse_number<std::uint64_t>(range.substr(0, dots), 0, UINT64_MAX - 1, out.first) ||
      !text::parse_number<std::uint64_t>(range.substr(dots + 2), 0, UINT64_MAX - 1, out.last)) {
    return "placeholder " + out.text + ": expected {seq:A..B} or {rand:A..B} with whole numbers A <= B";
  }
  if (out.first > out.last) return "placeholder " + out.text + ": the range is empty (A > B)";
  if (out.last - out.first >= placeholder_values_max) {
    return "placeholder " + out.text + ": more than " + std::to_string(placeholder_values_max) +
           " values (every request is serialized at start)";
  }
  return {};
}

}  // namespace

std::vector<std::uint64_t> Placeholder::order() const {
  std::vector<std::uint64_t> values(count());
  std::iota(values.begin(), values.end(), first);
  if (shuffled) {
    std::uint64_t state = shuffle_seed;
    for (std::size_t i = values.size() - 1; i > 0; --i) std::swap(values[i], values[next_random(state) % (i + 1)]);
  }
  return values;
}

std::string find_placeholder(const std::vector<std::string_view>& fields, std::optional<Placeholder>& out) {
  out.reset();
  for (const std::string_view field : fields) {
    for (std::size_t at = field.find('{'); at != std::string_view::npos; at = field.find('{', at + 1)) {
      const std::string_view rest = field.substr(at);
      if (!rest.starts_with(kinds[0]) && !rest.starts_with(kinds[1])) continue;  // a JSON brace, say
      Placeholder found;
      if (std::string error = parse_one(rest, found); !error.empty()) return error;
      if (out && out->text != found.text) {
        return "two different placeholders, " + out->text + " and " + found.text + ": a run has one";
      }
      out = std::move(found);
    }
  }
  return {};
}

std::string substitute(std::string_view field, const Placeholder& placeholder, std::uint64_t value) {
  const std::string number = std::to_string(value);
  std::string out;
  out.reserve(field.size() + number.size());
  for (std::size_t at = 0;;) {
    const std::size_t next = field.find(placeholder.text, at);
    out.append(field.substr(at, next - at));
    if (next == std::string_view::npos) return out;
    out.append(number);
    at = next + placeholder.text.size();
  }
}

}  // namespace ringhttp::client
