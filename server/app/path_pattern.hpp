#pragma once
// A route's path pattern: literal segments and `:name` parameters, each
// parameter one whole segment ("/users/:id"). Patterns are parsed once, at
// start-up, from string literals; matching allocates nothing and yields
// views into the request's path.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ringhttp::server {

class PathPattern {
 public:
  static constexpr std::size_t segments_max = 8;  // deeper paths than any route here
  static constexpr std::size_t params_max = 2;
  using Params = std::array<std::string_view, params_max>;

  // `pattern` must start with '/' and outlive the pattern (a literal);
  // a bad pattern is a programming error, asserted.
  explicit PathPattern(std::string_view pattern);

  // True if `path` (no query) matches; the parameters' values, in order,
  // go to `params`. A parameter matches any one segment, the empty one
  // included ("/users/" gives id ""), so its handler can refuse it by name
  // rather than answering 404.
  bool match(std::string_view path, Params& params) const;

  std::string_view text() const { return text_; }
  std::size_t param_count() const { return param_count_; }
  std::string_view param_name(std::size_t i) const;

 private:
  struct Segment {
    std::string_view text;  // the literal, or the parameter's name
    bool param = false;
  };
  std::string_view text_;
  std::array<Segment, segments_max> segments_{};
  std::uint8_t segment_count_ = 0;
  std::uint8_t param_count_ = 0;
};

}  // namespace ringhttp::server
