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
configure() {  # dir, extra meson options...
  local dir=$1; shift
  if [[ -d "$dir" ]]; then
    # meson 1.0's --reconfigure keeps the options the directory had: they
    # are set again by `meson configure`.
    meson setup --reconfigure "$dir" >/dev/null
    meson configure "$dir" -Dbuildtype=release -Db_lto=true -Dtests=false "$@" >/dev/null
  else
    meson setup "$dir" -Dbuildtype=release -Db_lto=true -Dtests=false "$@" >/dev/null
  fi
  ninja -C "$dir" >/dev/null
}

configure build-release
# The allocator axis runs glibc's malloc, and jemalloc and tcmalloc preloaded
# over it, on a build that links no allocator of its own.
if [[ " $* " =~ [[:space:]]--compare[[:space:]=][^[:space:]]*alloc ]]; then
  configure build-release-glibc -Dallocator=system
fi
exec python3 bench/bench.py --build build-release "$@"
