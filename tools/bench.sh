#!/usr/bin/env bash
# README command one, the main job: install dependencies, build optimized,
# then benchmark the server against the floor responders and nginx with wrk
# (server pinned to CPU 0, wrk to CPU 1). Extra arguments go to
# bench/baseline.sh (e.g. --duration 5 --iterations 1).
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh --bench
if [[ -d build-release ]]; then
  meson setup --reconfigure build-release --buildtype=release -Dtests=false >/dev/null
else
  meson setup build-release --buildtype=release -Dtests=false >/dev/null
fi
ninja -C build-release >/dev/null
exec bench/baseline.sh --build build-release "$@"
