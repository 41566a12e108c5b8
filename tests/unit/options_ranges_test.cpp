// docs/SERVER.md's table of the server's accepted flag values is the parser's:
// each bound it names is accepted, one past it refused (exit 2), in both
// spellings of a flag's value. A range changed on one side only fails here.

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server/options.hpp"

#ifndef RINGHTTP_SERVER_DOC
#error "RINGHTTP_SERVER_DOC (docs/SERVER.md's path) comes from tests/unit/meson.build"
#endif

namespace ringhttp::server {
namespace {

struct Range {
  std::string flag;
  std::uint64_t low = 0;
  std::uint64_t high = 0;
};

// Rows of the form "| `--flag` | LOW to HIGH ... |" of the table headed
// "| flag | accepted values |".
std::vector<Range> documented_ranges() {
  std::ifstream in(RINGHTTP_SERVER_DOC);
  std::vector<Range> out;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "| flag | accepted values |") {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (!line.starts_with("|")) break;
    if (line.starts_with("|---")) continue;
    const auto flag_begin = line.find('`');
    const auto flag_end = line.find('`', flag_begin + 1);
    const auto cell = line.find('|', flag_end) + 1;
    std::istringstream values(line.substr(cell));
    Range r;
    r.flag = line.substr(flag_begin + 1, flag_end - flag_begin - 1);
    std::string to;
    values >> r.low >> to >> r.high;
    EXPECT_EQ(to, "to") << line;
    out.push_back(r);
  }
  return out;
}

ParseOutcome parse(std::vector<std::string> args) {
  args.insert(args.begin(), "server");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  Options options;
  return parse_options(int(argv.size()), argv.data(), options);
}

TEST(OptionsRanges, every_bound_in_the_server_doc_is_the_parsers) {
  const std::vector<Range> ranges = documented_ranges();
  ASSERT_EQ(ranges.size(), 24u) << "docs/SERVER.md's table of accepted values (" RINGHTTP_SERVER_DOC
                                   ") was not found whole";
  for (const Range& r : ranges) {
    SCOPED_TRACE(r.flag);
    EXPECT_EQ(parse({r.flag, std::to_string(r.low)}), ParseOutcome::run) << "low bound " << r.low;
    EXPECT_EQ(parse({r.flag + "=" + std::to_string(r.high)}), ParseOutcome::run) << "high bound " << r.high;
    if (r.low > 0) {
      EXPECT_EQ(parse({r.flag, std::to_string(r.low - 1)}), ParseOutcome::exit_usage) << "below " << r.low;
    }
    EXPECT_EQ(parse({r.flag + "=" + std::to_string(r.high + 1)}), ParseOutcome::exit_usage);
  }
}

TEST(OptionsRanges, help_is_h_too_and_a_missing_value_is_refused) {
  EXPECT_EQ(parse({"-h"}), ParseOutcome::exit_ok);
  EXPECT_EQ(parse({"--help"}), ParseOutcome::exit_ok);
  EXPECT_EQ(parse({"--port"}), ParseOutcome::exit_usage);
  EXPECT_EQ(parse({"--no-such-flag", "1"}), ParseOutcome::exit_usage);
}

}  // namespace
}  // namespace ringhttp::server
