// Writes the tables in docs/ that the code holds: the server's and the
// client's flags (from their flag tables) and the server's metrics (from
// its metric table). Each sits in its page between two marker lines:
//
//   <!-- generated: KEY ... -->
//   ...
//   <!-- end generated -->
//
// docs_tables --write DOCS_DIR   rewrites what is between the markers
// docs_tables --check DOCS_DIR   exits 1 and names each table that differs
//                                (the meson test docs_tables runs this),
//                                and prints "ok ..." for each that agrees

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "client/merge/merge.hpp"
#include "client/options.hpp"
#include "server/counters.hpp"
#include "server/options.hpp"

namespace {

struct Table {
  const char* page;  // under docs/
  const char* key;
  std::string (*text)();
};

const Table tables[] = {
    {"SERVER.md", "server flags", [] { return ringhttp::cli::markdown(ringhttp::server::command_line()); }},
    {"SERVER.md", "server metrics", ringhttp::server::metrics_reference},
    {"CLIENT.md", "client flags", [] { return ringhttp::cli::markdown(ringhttp::client::command_line()); }},
    {"CLIENT.md", "client merge flags", ringhttp::client::merge_flags_markdown},
};

constexpr std::string_view begin_marker = "<!-- generated: ";
constexpr std::string_view end_marker = "<!-- end generated -->\n";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The page with the table between its markers replaced by `table`; "" and
// `error` set when the markers are not there.
std::string replaced(const std::string& page, const Table& t, const std::string& table, std::string& error) {
  const std::string begin = std::string(begin_marker) + t.key + " ";
  const std::size_t at = page.find(begin);
  const std::size_t body = at == std::string::npos ? at : page.find('\n', at);
  const std::size_t end = body == std::string::npos ? body : page.find(end_marker, body);
  if (end == std::string::npos) {
    error = std::string("docs/") + t.page + " has no '" + begin + "... -->' line with '" +
            std::string(end_marker.substr(0, end_marker.size() - 1)) + "' after it";
    return {};
  }
  return page.substr(0, body + 1) + table + page.substr(end);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc == 3 ? argv[1] : "";
  if (mode != "--write" && mode != "--check") {
    std::fprintf(stderr, "usage: docs_tables --write|--check DOCS_DIR\n");
    return 2;
  }
  int status = 0;
  for (const Table& t : tables) {
    const std::string path = std::string(argv[2]) + "/" + t.page;
    const std::string page = read_file(path);
    std::string error;
    const std::string table = t.text();
    const std::string wanted = replaced(page, t, table, error);
    if (!error.empty()) {
      std::fprintf(stderr, "docs_tables: %s\n", error.c_str());
      return 1;
    }
    if (wanted == page) {
      // One line per table checked: tools/suites.py counts them.
      if (mode == "--check") std::printf("ok    the %s table in docs/%s\n", t.key, t.page);
      continue;
    }
    if (mode == "--check") {
      std::fprintf(stderr,
                   "docs_tables: the %s table in docs/%s is not what the code says; run "
                   "build/tools/docs_tables/docs_tables --write docs. It should read:\n%s",
                   t.key, t.page, table.c_str());
      status = 1;
    } else {
      std::ofstream(path, std::ios::binary) << wanted;
      std::printf("docs_tables: wrote the %s table in docs/%s\n", t.key, t.page);
    }
  }
  return status;
}
