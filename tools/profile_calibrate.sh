#!/usr/bin/env bash
# How far to trust the user-space/kernel split of `bench/bench.py --profile`
# on this machine: a program whose split is known by the clock
# (tools/profile_calibrate.c), measured the three ways: the clock, the
# kernel's utime/stime, and perf's samples (the profile's own settings:
# cpu-clock at 999 Hz). On bare metal the three agree; a paravirtualized
# guest can charge each system call's world switch to its caller.
# Usage: tools/profile_calibrate.sh [SPIN_NS... (200 5000)]    pinned to CPU 0, 3 s each
set -euo pipefail
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cc -O2 -o "$dir/calibrate" "$(dirname "$0")/profile_calibrate.c"
spins=("$@")
[[ ${#spins[@]} -eq 0 ]] && spins=(200 5000)
for spin in "${spins[@]}"; do
  taskset -c 0 perf record -q -e cpu-clock -F 999 -o "$dir/perf.data" -- "$dir/calibrate" "$spin" 3
  perf script -i "$dir/perf.data" -F ip 2>/dev/null | python3 -c '
import sys
kernel = user = 0
for line in sys.stdin:
    if line.strip():
        if int(line.split()[0], 16) >= 0xffff800000000000:
            kernel += 1
        else:
            user += 1
print(f"  perf: {user + kernel} samples, user space {100 * user / max(1, user + kernel):.1f}%")'
done
