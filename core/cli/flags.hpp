#pragma once
// A program's command line as one table: each flag's name, the value it
// takes and its bounds, its default, its help, and the field of the
// program's Options it lands in. The parser, --help and the flag tables in
// docs/ (written by tools/docs_tables) all read that table, so no bound,
// default or description is written twice.

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/text/parse_number.hpp"

namespace ringhttp::cli {

enum class Kind : std::uint8_t {
  number,    // a whole number in [min, max]
  duration,  // 500ms, 10s, 2m, 1h, 250us (a bare number is seconds), in [min, max] nanoseconds
  text,      // any text but the empty one
  custom,    // checked and stored by the flag's own function
  toggle,    // takes no value: giving the flag turns it on
  help,      // prints the usage and exits 0
  version,   // prints the version and exits 0
};

template <typename Options>
struct Flag {
  // Checks and stores a custom flag's value. False refuses it: with
  // `error` set, that is the message; left empty, "bad value ... for FLAG
  // (accepts)" is.
  using Store = bool (*)(std::string_view value, Options& out, std::string& error);
  using Target = std::variant<std::monostate, std::uint16_t Options::*, std::uint32_t Options::*,
                              std::uint64_t Options::*, int Options::*, bool Options::*, std::string Options::*, Store>;

  std::string_view name;   // "--port"
  char short_name = 0;     // 'c' for -c; 0: none
  std::string_view value;  // what --help calls the value ("N", "PATH"); empty for toggle, help and version
  Kind kind = Kind::number;
  Target target;
  std::uint64_t min = 0;  // number and duration (ns)
  std::uint64_t max = 0;
  // number: what the bounds count ("bytes", "per shard"); custom and text:
  // the values accepted ("uring or epoll"); number and duration: a
  // condition added to the bounds.
  std::string_view accepts;
  // The default where the field's initial value does not say it ("one per
  // CPU"); empty: that value, or none.
  std::string_view fallback;
  std::string_view help;
  bool repeatable = false;
};

// The words that were not flags, and which flags were given.
struct Given {
  std::vector<std::string_view> operands;
  std::vector<std::string_view> flags;
  bool has(std::string_view name) const;
};

// What a program's usage says around its flags.
template <typename Options>
struct Program {
  std::string_view name;      // "server": the prefix of its messages
  std::string_view synopsis;  // the usage's first lines, before the flags
  std::string_view notes;     // after the flags ("" for none)
  std::span<const Flag<Options>> flags;
  bool takes_operands = false;  // words that are not flags (the client's URL); else each is refused
  std::string_view version;     // --version's line
  // The checks that involve several flags or the operands, once each flag
  // was parsed alone: "" when all is well, else what is wrong.
  std::string (*finish)(Options& out, const Given& given) = nullptr;
};

enum class Outcome { run, exit_ok, exit_usage };

// The parts that do not depend on Options.
namespace detail {
// One flag's parts, as the renderers need them.
struct Row {
  std::string_view name;
  char short_name;
  std::string_view value;
  Kind kind;
  std::uint64_t min;
  std::uint64_t max;
  std::string_view accepts;
  std::string default_text;  // "" for none
  std::string_view help;
  bool repeatable;
};
struct Text {
  std::string_view name;
  std::string_view synopsis;
  std::string_view notes;
  std::vector<Row> rows;
};
std::string usage(const Text& text);
std::string markdown(const Text& text);
std::string format_duration(std::uint64_t ns);
std::string accepted(const Row& row);
}  // namespace detail

// A duration longer than a year is a typo, not a plan.
inline constexpr std::uint64_t duration_ns_max = 366ull * 24 * 3600 * 1'000'000'000;

// "500ms", "10s", "2m", "1h", "250us"; a bare number is seconds; at most a year.
bool parse_duration(std::string_view text, std::uint64_t& out_ns);

// Prints "NAME: message" and where the flags are listed, on stderr.
Outcome refuse(std::string_view program, const std::string& message);

template <typename Options>
detail::Text text_of(const Program<Options>& program) {
  const Options defaults{};
  detail::Text text{program.name, program.synopsis, program.notes, {}};
  for (const Flag<Options>& f : program.flags) {
    std::string default_text(f.fallback);
    if (default_text.empty()) {
      std::visit(
          [&](auto target) {
            using T = decltype(target);
            if constexpr (std::is_same_v<T, std::string Options::*>) {
              default_text = defaults.*target;
            } else if constexpr (std::is_same_v<T, bool Options::*>) {
              // a toggle is off unless given
            } else if constexpr (std::is_member_object_pointer_v<T>) {
              const std::uint64_t v = std::uint64_t(defaults.*target);
              default_text = f.kind == Kind::duration ? detail::format_duration(v) : std::to_string(v);
            }
          },
          f.target);
    }
    text.rows.push_back({f.name, f.short_name, f.value, f.kind, f.min, f.max, f.accepts, std::move(default_text),
                         f.help, f.repeatable});
  }
  return text;
}

// --help's text: the synopsis, one entry per flag with its default, the notes.
template <typename Options>
std::string usage(const Program<Options>& program) {
  return detail::usage(text_of(program));
}

// The flags as a Markdown table: flag, accepted values, default, meaning.
template <typename Options>
std::string markdown(const Program<Options>& program) {
  return detail::markdown(text_of(program));
}

namespace detail {
template <typename Options>
bool store(const Flag<Options>& f, std::string_view value, Options& out, std::string& error) {
  return std::visit(
      [&](auto target) -> bool {
        using T = decltype(target);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return false;
        } else if constexpr (std::is_same_v<T, typename Flag<Options>::Store>) {
          return target(value, out, error);
        } else if constexpr (std::is_same_v<T, std::string Options::*>) {
          if (value.empty()) return false;
          out.*target = std::string(value);
          return true;
        } else if constexpr (std::is_same_v<T, bool Options::*>) {
          out.*target = true;
          return true;
        } else {
          using Field = std::remove_reference_t<decltype(out.*target)>;
          if (f.kind == Kind::duration) {
            std::uint64_t ns = 0;
            if (!parse_duration(value, ns) || ns < f.min || ns > f.max) return false;
            out.*target = Field(ns);
            return true;
          }
          return text::parse_number<Field>(value, Field(f.min), Field(f.max), out.*target);
        }
      },
      f.target);
}
}  // namespace detail

// Parses argv by the table: --name VALUE, --name=VALUE, -c VALUE, -cVALUE;
// -h is --help wherever a table has --help; then the program's finish.
// A bad flag or value prints the reason on stderr and gives exit_usage;
// --help and --version print and give exit_ok.
template <typename Options>
Outcome parse(const Program<Options>& program, int argc, char** argv, Options& out) {
  Given given;
  const auto find = [&](auto matches) -> const Flag<Options>* {
    for (const Flag<Options>& f : program.flags) {
      if (matches(f)) return &f;
    }
    return nullptr;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    const Flag<Options>* flag = nullptr;
    std::string_view value;
    bool has_value = false;
    if (word.starts_with("--")) {
      const std::size_t eq = word.find('=');
      const std::string_view name = word.substr(0, eq);
      flag = find([&](const Flag<Options>& f) { return f.name == name; });
      if (eq != std::string_view::npos) {
        value = word.substr(eq + 1);
        has_value = true;
      }
    } else if (word.size() >= 2 && word[0] == '-') {
      const char c = word[1];
      flag = find([&](const Flag<Options>& f) { return f.short_name == c || (c == 'h' && f.kind == Kind::help); });
      if (word.size() > 2) {
        value = word.substr(2);
        has_value = true;
      }
    } else {
      if (!program.takes_operands) return refuse(program.name, "unexpected argument '" + std::string(word) + "'");
      given.operands.push_back(word);
      continue;
    }
    if (flag == nullptr) return refuse(program.name, "unknown option " + std::string(word.substr(0, word.find('='))));
    const std::string name(flag->name);
    const bool takes_value = !flag->value.empty();
    if (!takes_value && has_value) return refuse(program.name, name + " takes no value");
    if (flag->kind == Kind::help) {
      std::fputs(usage(program).c_str(), stdout);
      return Outcome::exit_ok;
    }
    if (flag->kind == Kind::version) {
      const std::string line = std::string(program.version) + "\n";
      std::fputs(line.c_str(), stdout);
      return Outcome::exit_ok;
    }
    if (takes_value && !has_value) {
      if (i + 1 >= argc) return refuse(program.name, "missing value for " + name);
      value = argv[++i];
    }
    std::string error;
    if (!detail::store(*flag, value, out, error)) {
      if (!error.empty()) return refuse(program.name, error);
      const detail::Text text = text_of(Program<Options>{.name = program.name, .flags = {flag, 1}});
      return refuse(program.name,
                    "bad value '" + std::string(value) + "' for " + name + " (" + detail::accepted(text.rows[0]) + ")");
    }
    given.flags.push_back(flag->name);
  }
  if (program.finish != nullptr) {
    if (const std::string error = program.finish(out, given); !error.empty()) return refuse(program.name, error);
  }
  return Outcome::run;
}

}  // namespace ringhttp::cli
