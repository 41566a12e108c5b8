// Each program's flag table is what its parser does: every number flag's
// bounds are accepted and one past them refused (exit 2), in both
// spellings of a flag's value; every flag that takes a value refuses a
// missing one. docs/SERVER.md and docs/CLIENT.md are written from the same
// tables (tools/docs_tables checks them).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "client/options.hpp"
#include "server/options.hpp"

namespace ringhttp {
namespace {

template <typename Options>
cli::Outcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "program");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Options options;
  if constexpr (std::is_same_v<Options, server::Options>) {
    return server::parse_options(int(argv.size()), argv.data(), options);
  } else {
    return client::parse_options(int(argv.size()), argv.data(), options);
  }
}

// The flags a test needs beside the one it checks (the client needs
// connections enough for -t and a URL that needs no resolver, and
// --max-streams needs HTTP/2).
template <typename Options>
std::vector<std::string> with(std::vector<std::string> args) {
  if constexpr (std::is_same_v<Options, client::Options>) {
    for (const char* a : {"-c", "1000000", "http://127.0.0.1:1/"}) args.emplace_back(a);
    if (args[0].starts_with("--max-streams")) args.emplace_back("--http2-prior-knowledge");
  }
  return args;
}

template <typename Options>
void check_bounds(const cli::Program<Options>& program) {
  int checked = 0;
  for (const cli::Flag<Options>& f : program.flags) {
    if (f.kind != cli::Kind::number) continue;
    const std::string name(f.name);
    SCOPED_TRACE(name);
    // -c is the extra flag the client's checks need: check it last, alone.
    const bool is_connections = name == "--connections";
    const auto run = [&](std::vector<std::string> args) {
      return parse<Options>(is_connections ? args : with<Options>(args));
    };
    std::vector<std::string> low{name, std::to_string(f.min)};
    if (is_connections) low.push_back("http://127.0.0.1:1/");
    EXPECT_EQ(run(low), cli::Outcome::run) << "low bound " << f.min;
    std::vector<std::string> high{name + "=" + std::to_string(f.max)};
    if (is_connections) high.push_back("http://127.0.0.1:1/");
    EXPECT_EQ(run(high), cli::Outcome::run) << "high bound " << f.max;
    if (f.min > 0) {
      EXPECT_EQ(run({name, std::to_string(f.min - 1)}), cli::Outcome::exit_usage) << "below " << f.min;
    }
    EXPECT_EQ(run({name + "=" + std::to_string(f.max + 1)}), cli::Outcome::exit_usage) << "above " << f.max;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(OptionsRanges, every_number_flags_bounds_are_the_parsers) {
  check_bounds(server::command_line());
  check_bounds(client::command_line());
}

TEST(OptionsRanges, help_is_h_too_and_a_missing_value_is_refused) {
  EXPECT_EQ(parse<server::Options>({"-h"}), cli::Outcome::exit_ok);
  EXPECT_EQ(parse<server::Options>({"--help"}), cli::Outcome::exit_ok);
  EXPECT_EQ(parse<client::Options>({"-h"}), cli::Outcome::exit_ok);
  EXPECT_EQ(parse<server::Options>({"--no-such-flag", "1"}), cli::Outcome::exit_usage);
  for (const cli::Flag<server::Options>& f : server::command_line().flags) {
    if (f.value.empty()) continue;
    EXPECT_EQ(parse<server::Options>({std::string(f.name)}), cli::Outcome::exit_usage) << f.name;
  }
  for (const cli::Flag<client::Options>& f : client::command_line().flags) {
    if (f.value.empty()) continue;
    EXPECT_EQ(parse<client::Options>({"http://127.0.0.1:1/", std::string(f.name)}), cli::Outcome::exit_usage) << f.name;
  }
}

TEST(OptionsRanges, a_switch_takes_no_value_and_a_word_is_the_clients_url_only) {
  EXPECT_EQ(parse<server::Options>({"--jwt-allow-no-exp=1"}), cli::Outcome::exit_usage);
  EXPECT_EQ(parse<server::Options>({"--jwt-allow-no-exp"}), cli::Outcome::run);
  EXPECT_EQ(parse<server::Options>({"8080"}), cli::Outcome::exit_usage);
  EXPECT_EQ(parse<client::Options>({"-k=1", "https://127.0.0.1:1/"}), cli::Outcome::exit_usage);
  EXPECT_EQ(parse<client::Options>({"-c5", "http://127.0.0.1:1/"}), cli::Outcome::run);
  EXPECT_EQ(parse<client::Options>({"http://127.0.0.1:1/", "http://127.0.0.1:2/"}), cli::Outcome::exit_usage);
}

}  // namespace
}  // namespace ringhttp
