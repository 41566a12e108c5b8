#!/usr/bin/env bash
# README command two: install dependencies, build, run every test; then the
# same tests again in a build with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh

# Every option a run relies on is set on every run: meson 1.0's
# --reconfigure keeps the options a directory had, so a build/ once made
# with -Dtests=false (as build-release/ is) would otherwise define no test.
source tools/meson_setup.sh

# One stream per test (--no-stdsplit), so that a failing test's summary ends
# its log rather than the servers' start-up notices; on failure, every
# gtest/assertion failure of the full log is printed too, since meson shows
# only its last 100 lines.
# Then tools/suites.py: every suite ran at least one test, and each skip is
# listed with its reason.
run_tests() {  # build dir
  local dir=$1
  if ! meson test -C "$dir" --no-stdsplit --print-errorlogs; then
    echo "test.sh: failures in $dir (from $dir/meson-logs/testlog.txt):"
    grep -n -A 12 -E '(: Failure$|^\[  FAILED  \]|FAIL:|Traceback|ERROR: AddressSanitizer|runtime error:)' \
      "$dir/meson-logs/testlog.txt" | head -400 || true
    return 1
  fi
  tools/suites.py ran "$dir"
}

# The default build, as a user gets it, every suite (the benchmark's too).
configure build -Dwerror=true -Dtests=true -Dbench=true -Dbuildtype=release -Db_ndebug=false \
  -Db_sanitize=none -Db_lto=false -Dlto=true -Dallocator=mimalloc
tools/suites.py defined build  # exactly the suites docs/TESTING.md lists
ninja -C build
run_tests build

# The sanitizers replace malloc, so the system's; the benchmark's suites
# are left out (-Dbench=false: they measure, and ASan would be measured).
configure build-san -Dwerror=true -Dtests=true -Dbench=false -Dbuildtype=debug -Db_ndebug=false \
  -Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false -Dallocator=system
tools/suites.py defined build-san --sanitizers  # those docs/TESTING.md marks as run under ASan+UBSan
ninja -C build-san
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tests build-san
# The request parser (every split of its input), its framing scanner alone,
# POST /echo's body parser and the token verifier, each fuzzed briefly
# (libFuzzer, clang) with fixed seeds and a fixed number of runs from the
# seed corpus alone: this run passes or fails the same way every time.
# `tools/fuzz.sh SECONDS` runs random seeds (docs/TESTING.md#fuzzers).
tools/fuzz.sh --fixed
for dir in build build-san; do cat "$dir/meson-logs/skipped.txt"; done
echo "test.sh: all tests passed (plain, ASan+UBSan, and a fixed-seed fuzz run)"
