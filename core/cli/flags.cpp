#include "core/cli/flags.hpp"

#include <algorithm>
#include <charconv>

namespace ringhttp::cli {
namespace {

// --help's layout: the flag column, then the help wrapped to the width.
constexpr std::size_t flag_column_chars = 30;
constexpr std::size_t usage_width_chars = 100;

constexpr std::uint64_t ns_per_us = 1'000;
constexpr std::uint64_t ns_per_ms = 1'000'000;
constexpr std::uint64_t ns_per_s = 1'000'000'000;
constexpr std::uint64_t ns_per_m = 60 * ns_per_s;
constexpr std::uint64_t ns_per_h = 60 * ns_per_m;
static_assert(duration_ns_max == 366 * 24 * ns_per_h);

bool takes_value(const detail::Row& row) { return !row.value.empty(); }

std::string flag_words(const detail::Row& row, bool any_short) {
  std::string words;
  if (row.short_name != 0) {
    words += '-';
    words += row.short_name;
    words += ", ";
  } else if (row.kind == Kind::help) {
    words = "-h, ";
  } else if (any_short) {
    words = "    ";
  }
  words += row.name;
  if (takes_value(row)) {
    words += ' ';
    words += row.value;
  }
  return words;
}

// The help with what --help adds to it: the values accepted, the default,
// whether it repeats.
std::string help_line(const detail::Row& row) {
  std::string line(row.help);
  std::string said;
  if (takes_value(row)) said = detail::accepted(row);
  if (!row.default_text.empty()) said += (said.empty() ? "" : "; ") + std::string("default ") + row.default_text;
  if (row.repeatable) said += (said.empty() ? "" : "; ") + std::string("repeatable");
  if (!said.empty()) line += " (" + said + ")";
  return line;
}

// Appends `words` wrapped at usage_width_chars, each line after the first
// indented to the help column.
void wrap(std::string& out, std::string_view words, std::size_t column) {
  std::size_t at = column;
  bool first = true;
  while (!words.empty()) {
    const std::size_t space = words.find(' ');
    const std::string_view word = words.substr(0, space);
    words = space == std::string_view::npos ? std::string_view() : words.substr(space + 1);
    if (!first && at + 1 + word.size() > usage_width_chars) {
      out += "\n" + std::string(column, ' ');
      at = column;
      first = true;
    }
    if (!first) {
      out += ' ';
      ++at;
    }
    out += word;
    at += word.size();
    first = false;
  }
  out += '\n';
}

// A Markdown table cell: a | inside would end it.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

bool Given::has(std::string_view name) const { return std::find(flags.begin(), flags.end(), name) != flags.end(); }

Outcome refuse(std::string_view program, const std::string& message) {
  std::fprintf(stderr, "%.*s: %s\n(%.*s --help lists the options)\n", int(program.size()), program.data(),
               message.c_str(), int(program.size()), program.data());
  return Outcome::exit_usage;
}

bool parse_duration(std::string_view text, std::uint64_t& out_ns) {
  std::uint64_t number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data()) return false;
  const std::string_view unit(end, std::size_t(text.data() + text.size() - end));
  std::uint64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = ns_per_s;
  } else if (unit == "ms") {
    scale = ns_per_ms;
  } else if (unit == "us") {
    scale = ns_per_us;
  } else if (unit == "m") {
    scale = ns_per_m;
  } else if (unit == "h") {
    scale = ns_per_h;
  } else {
    return false;
  }
  if (number > duration_ns_max / scale) return false;
  out_ns = number * scale;
  return true;
}

namespace detail {

std::string format_duration(std::uint64_t ns) {
  if (ns == 0) return "0";
  for (const auto& [scale, unit] : {std::pair{ns_per_h, "h"}, std::pair{ns_per_m, "m"}, std::pair{ns_per_s, "s"},
                                    std::pair{ns_per_ms, "ms"}, std::pair{ns_per_us, "us"}}) {
    if (ns % scale == 0) return std::to_string(ns / scale) + unit;
  }
  return std::to_string(ns) + "ns";
}

std::string accepted(const Row& row) {
  std::string out;
  switch (row.kind) {
    case Kind::number: out = std::to_string(row.min) + " to " + std::to_string(row.max); break;
    case Kind::duration:
      out = "a duration";
      if (row.min == 1) out += " above 0";
      if (row.min > 1) out += " of at least " + format_duration(row.min);
      if (row.max < duration_ns_max) out += " up to " + format_duration(row.max);
      break;
    case Kind::text:
    case Kind::custom: return std::string(row.accepts.empty() ? "any text" : row.accepts);
    case Kind::toggle:
    case Kind::help:
    case Kind::version: return "no value";
  }
  if (!row.accepts.empty()) {
    if (!row.accepts.starts_with(',')) out += ' ';
    out += row.accepts;
  }
  return out;
}

std::string usage(const Text& text) {
  const bool any_short =
      std::any_of(text.rows.begin(), text.rows.end(), [](const Row& r) { return r.short_name != 0; });
  std::string out(text.synopsis);
  for (const Row& row : text.rows) {
    std::string words = "  " + flag_words(row, any_short);
    if (words.size() + 1 > flag_column_chars) {
      out += words + "\n" + std::string(flag_column_chars, ' ');
    } else {
      out += words + std::string(flag_column_chars - words.size(), ' ');
    }
    wrap(out, help_line(row), flag_column_chars);
  }
  out += text.notes;
  return out;
}

std::string markdown(const Text& text) {
  std::string out = "| flag | value | default | what it does |\n|---|---|---|---|\n";
  for (const Row& row : text.rows) {
    out += "| `" + cell(flag_words(row, false)) + "` | " + cell(accepted(row)) + " | " +
           cell(row.default_text.empty() ? "" : row.default_text) + " | " + cell(row.help) +
           (row.repeatable ? " (repeatable)" : "") + " |\n";
  }
  return out;
}

}  // namespace detail
}  // namespace ringhttp::cli
