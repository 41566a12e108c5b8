// One program for every microbenchmark of bench/micro/ (one file per
// concern), so one pinned run yields one table and one JSON file:
// tools/micro.sh. --benchmark_filter picks rows.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
