#include "server/app/path_pattern.hpp"

#include <cassert>
#include <cstring>

namespace ringhttp::server {

PathPattern::PathPattern(std::string_view pattern) : text_(pattern) {
  assert(!pattern.empty() && pattern.front() == '/');
  std::string_view rest = pattern.substr(1);
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view segment = rest.substr(0, slash);
    assert(segment_count_ < segments_max);
    Segment& s = segments_[segment_count_++];
    if (segment.starts_with(':')) {
      assert(segment.size() > 1 && param_count_ < params_max);
      s = Segment{segment.substr(1), true};
      ++param_count_;
    } else {
      s = Segment{segment, false};
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
}

namespace {

// a == b for the short strings paths are: up to 16 bytes as two
// overlapping word loads each, without a call to memcmp.
bool same_text(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const auto word = [](const char* p) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
  };
  if (n >= 8 && n <= 16) {
    return word(a.data()) == word(b.data()) && word(a.data() + n - 8) == word(b.data() + n - 8);
  }
  return a == b;
}

}  // namespace

bool PathPattern::match(std::string_view path, Params& params) const {
  // A pattern without parameters matches one path: its own text.
  if (param_count_ == 0) return same_text(path, text_);
  if (path.empty() || path.front() != '/') return false;
  std::string_view rest = path.substr(1);
  std::size_t param = 0;
  for (std::uint8_t i = 0; i < segment_count_; ++i) {
    const std::size_t slash = rest.find('/');
    const bool last = i + 1 == segment_count_;
    // The pattern's last segment must be the path's last, and only it.
    if (last != (slash == std::string_view::npos)) return false;
    const std::string_view segment = rest.substr(0, slash);
    const Segment& s = segments_[i];
    if (s.param) {
      params[param++] = segment;
    } else if (segment != s.text) {
      return false;
    }
    if (!last) rest = rest.substr(slash + 1);
  }
  return true;
}

std::string_view PathPattern::param_name(std::size_t i) const {
  std::size_t seen = 0;
  for (std::uint8_t k = 0; k < segment_count_; ++k) {
    if (!segments_[k].param) continue;
    if (seen++ == i) return segments_[k].text;
  }
  assert(false && "no such parameter");
  return {};
}

}  // namespace ringhttp::server
