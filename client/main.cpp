// ringhttp client: an io_uring HTTP/1.1 load generator. Parses the command
// line and hands the run to client/runner.cpp.

#include <string_view>

#include "client/merge/merge.hpp"
#include "client/options.hpp"
#include "client/runner.hpp"

int main(int argc, char** argv) {
  using namespace ringhttp::client;
  if (argc > 1 && std::string_view(argv[1]) == "merge") return merge_main(argc - 1, argv + 1);
  Options options;
  switch (parse_options(argc, argv, options)) {
    case ParseOutcome::exit_ok: return 0;
    case ParseOutcome::exit_usage: return 2;
    case ParseOutcome::run: break;
  }
  return run(options);
}
