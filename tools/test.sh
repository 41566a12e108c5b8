#!/usr/bin/env bash
# README command two: install dependencies, build, run every test; then the
# same tests again in a build with AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh

configure() {  # dir, extra meson options...
  local dir=$1; shift
  if [[ -d "$dir" ]]; then
    # meson 1.0's --reconfigure keeps the options the directory had: they
    # are set again by `meson configure`.
    meson setup --reconfigure "$dir" >/dev/null
    meson configure "$dir" "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

# One stream per test (--no-stdsplit), so that a failing test's summary ends
# its log rather than the servers' start-up notices; on failure, every
# gtest/assertion failure of the full log is printed too, since meson shows
# only its last 100 lines.
run_tests() {  # build dir
  local dir=$1
  if ! meson test -C "$dir" --no-stdsplit --print-errorlogs; then
    echo "test.sh: failures in $dir (from $dir/meson-logs/testlog.txt):"
    grep -n -A 12 -E '(: Failure$|^\[  FAILED  \]|FAIL:|Traceback|ERROR: AddressSanitizer|runtime error:)' \
      "$dir/meson-logs/testlog.txt" | head -400 || true
    return 1
  fi
}

configure build -Dwerror=true
ninja -C build
run_tests build

configure build-san -Dwerror=true -Db_sanitize=address,undefined -Dbuildtype=debug -Db_lundef=false -Dbench=false -Dallocator=system
ninja -C build-san
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_tests build-san
# The request parser (every split of its input), its framing scanner alone,
# POST /echo's body parser and the token verifier, each fuzzed briefly
# (libFuzzer, clang).
# The driver's random seeds are left out here: this run must pass or fail
# the same way every time, and the driver's fixed seed ran in meson test.
tools/fuzz.sh 20 --no-driver
echo "test.sh: all tests passed (plain, ASan+UBSan, and a short fuzz run)"
