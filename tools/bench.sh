#!/usr/bin/env bash
# README command one, the main job: install what the benchmark needs, build
# optimized, then run bench/bench.py (every argument goes to it; --help there).
#   tools/bench.sh                   the default rows, 3 x (3 s warm-up + 10 s)
#   tools/bench.sh --quick           one short iteration, a smoke test
#   tools/bench.sh --compare alloc   also builds build-release-glibc (-Dallocator=system)
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh --bench

# Link-time optimization: the parser's callbacks, the slot engine's hooks
# and the shard's small functions inline across files (about 13% fewer
# instructions per request, counted by tools/callgrind_server.sh).
source tools/meson_setup.sh
build() {  # dir, extra meson options...
  configure "$1" -Dbuildtype=release -Db_lto=true -Dtests=false "${@:2}"
  quiet ninja -C "$1"
}

build build-release
# The allocator axis runs glibc's malloc, and jemalloc and tcmalloc preloaded
# over it, on a build that links no allocator of its own.
if [[ " $* " =~ [[:space:]]--compare[[:space:]=][^[:space:]]*alloc ]]; then
  build build-release-glibc -Dallocator=system
fi
exec python3 bench/bench.py --build build-release "$@"
