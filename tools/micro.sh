#!/usr/bin/env bash
# The microbenchmarks of bench/micro/ (Google Benchmark): per-request
# user-space work (parsing, building a send's iovecs, the Date line, JSON,
# the client's histogram), timed alone. Installs dependencies, builds the
# optimized build-release/ (as tools/bench.sh does), then runs micro_bench
# pinned to one CPU, 5 repetitions, and prints the median, mean, stddev and
# cv of each row; the same figures go to results/micro-<UTC time>.json.
#
# Usage: tools/micro.sh [--cpu N] [Google Benchmark flags...]
#   --cpu N    CPU to pin to (default 1; tools/bench.sh's server uses 0)
#   e.g. tools/micro.sh --benchmark_filter='SendBatch|Date'
set -euo pipefail
cd "$(dirname "$0")/.."

cpu=1
if [[ "${1:-}" == "--cpu" ]]; then
  [[ $# -ge 2 ]] || { echo "micro.sh: --cpu needs a CPU number" >&2; exit 2; }
  cpu=$2
  shift 2
fi

tools/install-deps.sh
if [[ -d build-release ]]; then
  meson setup --reconfigure build-release --buildtype=release -Dtests=false >/dev/null
else
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
ninja -C build-release bench/micro/micro_bench >/dev/null

mkdir -p results
out="results/micro-$(date -u +%Y%m%dT%H%M%SZ).json"
echo "micro.sh: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), kernel $(uname -r)," \
  "pinned to CPU $cpu, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
taskset -c "$cpu" build-release/bench/micro/micro_bench \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@"
echo "micro.sh: JSON in $out" >&2
