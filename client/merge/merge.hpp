#pragma once
// `client merge FILE...`: the --json reports (or the --hdr-log interval
// logs) of one run split over processes or machines with --shard I/N,
// merged into one report whose percentiles are exactly those of one
// histogram fed every value.

#include <string>

namespace ringhttp::client {

// argv[0] is "merge". Exit status: 0, 1 (a shard failed a request), 2
// (bad usage, unreadable or mismatched reports, a shard missing or twice).
int merge_main(int argc, char** argv);

// Its flags as a Markdown table, for docs/CLIENT.md (tools/docs_tables).
std::string merge_flags_markdown();

}  // namespace ringhttp::client
