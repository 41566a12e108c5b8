#!/usr/bin/env python3
"""The open model in the harness: the rate row, its targets, and --rate-sweep.

1. The open model's targets (bench/harness/summary.py's judge_targets) on
   figures made up here: an achieved rate within 1% of the one asked for
   (met, both sides of it) and outside it (NOT MET, above and below); the
   client CPU at 1.15x and at 1.27x the closed model's (met, NOT MET); the
   closed-model row that did not run (not judged, named); the control row
   a selection of the rate row gets (floor-uring/pipelined).
2. --rates: accepted forms (k, M, decimals) and refusals (not rising, not a
   number, zero, a fraction of a request), each exit 2 from the harness.
3. The rate row with its control, one short iteration: exit 0; the rate
   row's client ran in the open model at the row's rate with the pipeline
   (its own report's options: -R 1,000,000, -p 16), the control row's in the
   closed model; both targets are printed with a verdict and their figures
   and are in the JSON with the requested rate.
4. --rate-sweep on floor-uring/pipelined at 2k and 4k: exit 0; a point per
   rate in order, each run at its rate (the client's report), requests
   answered and none failed, the uncorrected p99 beside the corrected; the
   table printed, the markdown and (with gnuplot) the chart written;
   --rate-sweep naming no row, several rows, or beside --profile: exit 2.

Every load targets 127.0.0.1. Usage: open_model_test.py --build DIR
(meson test runs it)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
from harness.constants import OPEN_RATE  # noqa: E402
from harness.rate_sweep import parse_rates  # noqa: E402
from harness.summary import judge_targets, target_controls  # noqa: E402

BENCH_WAIT_S = 240   # generous bounds for a busy two-core machine
SHORT = ("--iterations", "1", "--warmup", "1", "--duration", "2", "--connections", "16", "--idle-connections", "0",
         "--cool-down", "0")
OPEN, CLOSED = "floor-uring/pipelined-open", "floor-uring/pipelined"


def summary(row, requested=None, **figures):
    """A summary as summarize() makes it: each figure a (median, min, max)."""
    s = {"row": row, "rps": None, "client_cpu_us": None, "requested_rps": requested}
    s.update({k: (v, v, v) if v is not None else None for k, v in figures.items()})
    return s


def check_judgement(_build):
    failures = []

    def verdicts(summaries):
        return {(t["row"], t["figure"]): t for t in judge_targets(summaries)}

    rate_key, cpu_key = (OPEN, "rps"), (OPEN, "client_cpu_us")
    cases = [  # achieved, open client CPU, closed client CPU: rate verdict, CPU verdict, figures in the lines
        (995_000, 0.299, 0.26, "met", "met", ["995,000/s", "1,000,000/s", "-0.50%", "0.299 µs", "0.260", "1.15×"]),
        (1_009_000, 0.26, 0.26, "met", "met", ["+0.90%", "1.00×"]),
        (985_000, 0.33, 0.26, "NOT MET", "NOT MET", ["985,000/s", "-1.50%", "1.27×"]),
        (1_011_000, 0.20, 0.26, "NOT MET", "met", ["+1.10%", "0.77×"]),
    ]
    for achieved, cpu, closed_cpu, rate_verdict, cpu_verdict, figures in cases:
        got = verdicts({OPEN: summary(OPEN, 1_000_000, rps=achieved, client_cpu_us=cpu),
                        CLOSED: summary(CLOSED, rps=2_000_000, client_cpu_us=closed_cpu)})
        rate, cpu_t = got.get(rate_key), got.get(cpu_key)
        if not rate or rate["verdict"] != rate_verdict or f": {rate_verdict} (" not in rate["line"]:
            failures.append(f"achieved {achieved}: expected {rate_verdict}: {rate}")
        if not cpu_t or cpu_t["verdict"] != cpu_verdict or f": {cpu_verdict} (" not in cpu_t["line"]:
            failures.append(f"client CPU {cpu} against {closed_cpu}: expected {cpu_verdict}: {cpu_t}")
        lines = (rate or {}).get("line", "") + " | " + (cpu_t or {}).get("line", "")
        missing = [f for f in figures if f not in lines]
        if missing:
            failures.append(f"achieved {achieved}, CPU {cpu}: {missing} not in {lines}")
    got = verdicts({OPEN: summary(OPEN, 1_000_000, rps=1_000_000, client_cpu_us=0.3)})
    t = got.get(cpu_key)
    if not t or t["verdict"] != "not judged" or f"row {CLOSED} did not run" not in t["line"]:
        failures.append(f"the closed-model row missing: {t}")
    if got.get(rate_key, {}).get("verdict") != "met":
        failures.append(f"the rate judged without the control row: {got.get(rate_key)}")
    got = verdicts({OPEN: summary(OPEN, 1_000_000)})
    if got.get(rate_key, {}).get("verdict") != "not judged":
        failures.append(f"a rate row whose runs failed: {got.get(rate_key)}")
    if verdicts({CLOSED: summary(CLOSED, rps=1.0, client_cpu_us=0.2)}):
        failures.append("targets printed without the rate row")
    if target_controls({OPEN}) != [CLOSED] or target_controls({OPEN, CLOSED}):
        failures.append(f"control rows: {target_controls({OPEN})}, {target_controls({OPEN, CLOSED})}")
    print(("ok" if not failures else "FAIL") + "    open-model targets judged met, NOT MET and not judged on "
          "made-up figures")
    return failures


def check_rates(build):
    failures = []
    for text, want in (("250k,500k,1M,1.5M", [250_000, 500_000, 1_000_000, 1_500_000]), ("16, 32", [16, 32])):
        try:
            got = parse_rates(text)
        except ValueError as e:
            got = f"refused: {e}"
        if got != want:
            failures.append(f"--rates {text}: {got}, expected {want}")
    for bad, says in (("1M,500k", "rising"), ("1M,1M", "rising"), ("fast", "not a rate"), ("0", "whole number"),
                      ("1.5", "whole number"), ("", "no rate")):
        r = subprocess.run([sys.executable, observe.BENCH, "--build", build, "--rate-sweep", "--rates", bad],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or says not in r.stderr:
            failures.append(f"--rates '{bad}': exit {r.returncode}, expected 2 saying '{says}': {r.stderr[-300:]}")
    for args, says in ((("--rate-sweep", "nothing-here"), "nothing is named"),
                       (("--rate-sweep", "pipelined"), "not one"),
                       (("--rate-sweep", "--profile", "ringhttp/json"), "one at a time")):
        r = subprocess.run([sys.executable, observe.BENCH, "--build", build, *args], capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 2 or says not in r.stderr:
            failures.append(f"{' '.join(args)}: exit {r.returncode}, expected 2 saying '{says}': {r.stderr[-300:]}")
    print(("ok" if not failures else "FAIL") + "    --rates read and refused; --rate-sweep needs exactly one row")
    return failures


def run_bench(build, *args, kind="bench"):
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-open.")
    try:
        bench = observe.start_bench(build, out_dir, *args)
        try:
            out, err = bench.communicate(timeout=BENCH_WAIT_S)
        except subprocess.TimeoutExpired:
            bench.kill()
            out, err = bench.communicate()
        files = sorted(os.listdir(out_dir))
        return bench.returncode, out, err, observe.results(out_dir, kind), files
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def check_rate_row(build):
    failures = []
    code, out, err, report, _ = run_bench(build, "--only", OPEN, *SHORT)
    report = report or {}
    if code != 0:
        failures.append(f"the harness exited {code}: {err[-2000:]}")
    if f"adding {CLOSED}" not in out:
        failures.append(f"the closed-model control row was not added: {out[-1500:]}")
    runs = {r: v for r, v in (report.get("runs") or {}).items()}
    opts = {}
    for row in (OPEN, CLOSED):
        got = runs.get(row) or []
        client = (got[0].get("client") if got else None) or {}
        opts[row] = client.get("options") or {}
        if not got or not got[0].get("requests") or got[0].get("errors"):
            failures.append(f"{row}: {got[0] if got else 'did not run'}")
    if opts[OPEN].get("rate") != OPEN_RATE or opts[OPEN].get("pipeline") != 16:
        failures.append(f"{OPEN}'s client ran with {opts[OPEN]}: expected rate {OPEN_RATE}, pipeline 16")
    if opts[CLOSED].get("rate") not in (0, None) or opts[CLOSED].get("pipeline") != 16:
        failures.append(f"{CLOSED}'s client ran with {opts[CLOSED]}: expected the closed model, pipeline 16")
    targets = {(t["row"], t["figure"]): t for t in report.get("targets", [])}
    for key in ((OPEN, "rps"), (OPEN, "client_cpu_us")):
        t = targets.get(key)
        if not t or t["verdict"] not in ("met", "NOT MET") or t["line"] not in out:
            failures.append(f"target {key}: {t}")
    rate_target = targets.get((OPEN, "rps")) or {}
    if rate_target.get("reference_measured") != OPEN_RATE:
        failures.append(f"the rate target's requested rate: {rate_target}")
    print(("ok" if not failures else "FAIL") + "    the rate row runs the client at its rate beside the closed "
          "model; both targets printed and in the JSON")
    return failures


def check_sweep(build):
    failures = []
    code, out, err, report, files = run_bench(build, "--rate-sweep", CLOSED, "--rates", "2k,4k", *SHORT,
                                              kind="rate-sweep")
    report = report or {}
    if code != 0:
        failures.append(f"the harness exited {code}: {err[-2000:]}")
    points = report.get("points") or []
    if [p.get("requested_rps") for p in points] != [2000, 4000]:
        failures.append(f"points {[p.get('requested_rps') for p in points]}, expected 2000, 4000")
    for p in points:
        runs = p.get("runs") or [{}]
        client = runs[0].get("client") or {}
        options = client.get("options") or {}
        if options.get("rate") != p.get("requested_rps") or options.get("pipeline") != 16:
            failures.append(f"point {p.get('requested_rps')}: the client ran with {options}")
        if not runs[0].get("requests") or runs[0].get("errors") or runs[0].get("p99_uncorrected_ms") is None:
            failures.append(f"point {p.get('requested_rps')}: {runs[0]}")
    for text in ("## Rate sweep: floor-uring/pipelined in the open model", "2,000", "4,000", "p99 ms uncorrected"):
        if text not in out:
            failures.append(f"'{text}' not in the printed table: {out[-1500:]}")
    if not any(f.startswith("rate-sweep-") and f.endswith(".md") for f in files):
        failures.append(f"no markdown written: {files}")
    if not shutil.which("gnuplot"):
        failures.append("gnuplot is missing (Debian: gnuplot-nox; tools/install-deps.sh installs it)")
    elif not any(f.startswith("rate-sweep-") and f.endswith(".png") for f in files):
        failures.append(f"no chart written though gnuplot is installed: {files}")
    print(("ok" if not failures else "FAIL") + "    --rate-sweep: a point per rate, each client at its rate, the "
          "table, markdown and chart")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(check_judgement, check_rates, check_rate_row, check_sweep))
