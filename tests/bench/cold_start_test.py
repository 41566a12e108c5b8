#!/usr/bin/env python3
"""Cold start is exec to the first right answer, not to the first connect.

Two fake servers (tests/bench/fake_server.py) listen as soon as they start,
as ringhttp's main thread does before any shard runs:
- `late` answers nothing until 1.5 s after it started: a connection is
  accepted at once and its request waits;
- `wrongfirst` answers at once, but 200 with a wrong body until 1.5 s after
  it started.
Each one's cold start must be at least 1.5 s (a lower bound: the fake reads
its clock after exec), where a connect would succeed within milliseconds,
and their rows must then run cleanly (exit 0). A server that never answers
rightly has no cold start: the rows of workloads_test.py show it fails.

Usage: cold_start_test.py --build DIR    (meson test runs it)
"""
import argparse
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

DELAY_S = 1.5
FAKES = {"late": ["--answer-after", str(DELAY_S)], "wrongfirst": ["--wrong-until", str(DELAY_S)]}
BENCH_WAIT_S = 240


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    a = p.parse_args()
    fake = os.path.join(observe.HERE, "fake_server.py")
    args = []
    for name, extra in FAKES.items():
        args += ["--server", f"{name}={sys.executable} {fake} {{port}} {' '.join(extra)}"]
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-cold.")
    bench = observe.start_bench(os.path.realpath(a.build), out_dir, *args,
                                "--only", ",".join(f"{n}/plaintext" for n in FAKES), "--iterations", "1",
                                "--warmup", "0", "--duration", "1", "--connections", "4", "--idle-connections", "0",
                                "--cool-down", "0")
    out, err = bench.communicate(timeout=BENCH_WAIT_S)
    report = observe.results(out_dir)
    failures = []
    if bench.returncode != 0:
        failures.append(f"the harness exited {bench.returncode}:\n{err[-2000:]}")
    if not report:
        failures.append(f"no results JSON:\n{out[-2000:]}")
    else:
        for name in FAKES:
            inst = report["instances"].get(name, {})
            ms = inst.get("cold_start_ms")
            if ms is None or ms < DELAY_S * 1000:
                failures.append(f"{name}: cold start {ms} ms, but its first right answer came {DELAY_S * 1000:.0f} ms "
                                f"or more after exec: {inst}")
            else:
                print(f"ok    {name}: cold start {ms:.1f} ms (≥ {DELAY_S * 1000:.0f})")
    if failures:
        print("\n".join(["", "FAILURES:"] + failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
