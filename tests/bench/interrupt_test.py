#!/usr/bin/env python3
"""SIGTERM or Ctrl-C at any moment stops every process the harness started
and still writes what was measured.

Real runs of bench/bench.py, each stopped by a signal at a different
moment:
- SIGTERM in the middle of the second measured run (the server and the
  client of that run alive): the harness exits 130; every process it had
  started is gone (descendants recorded while they ran); the results JSON
  says it was interrupted, after how many runs, and holds the first run's
  row with its figures;
- SIGTERM while the memory row's holder processes hold their connections:
  exit 130, the holders and the server gone, the results written with no
  measured run;
- SIGINT (what Ctrl-C sends) in the middle of a measured run: the same as
  SIGTERM;
- SIGTERM in a soak's first phase, its load and the hostile driver
  running: exit 130, all three gone, the results say interrupted;
- SIGTERM while perf records a --profile run: exit 130, perf, the server
  and the client gone, the plain run's figures written.

Usage: interrupt_test.py --build DIR    (meson test runs it)
"""
import os
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

BENCH_WAIT_S = 120           # generous bounds for a busy two-core machine
GONE_WAIT_S = 10             # a stopped process is gone by then (well under WARMUP_S)
INTERRUPTED = 130
# A long warm-up: the signal comes early in the second run's, so a client
# left running would still be running long after GONE_WAIT_S.
WARMUP_S = 30
RUN = ("--only", "ringhttp/plaintext,ringhttp/json", "--iterations", "1", "--warmup", str(WARMUP_S),
       "--duration", "1", "--connections", "4", "--cool-down", "0")


def read_line_with(proc, text):
    """Reads the harness's stdout line by line until one contains text."""
    deadline = time.monotonic() + BENCH_WAIT_S
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"the harness ended before printing {text!r}:\n" + "".join(seen[-20:]))
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"no {text!r} within {BENCH_WAIT_S} s")


def stop_and_check(name, proc, out_dir, sig, started, results=True):
    """Sends sig; checks the exit status, that every process recorded in
    `started` is gone, and returns the results JSON (or a failure; with
    results=False the caller reads its own)."""
    proc.send_signal(sig)
    try:
        proc.communicate(timeout=BENCH_WAIT_S)
    except Exception:
        proc.kill()
        raise
    failures = []
    if proc.returncode != INTERRUPTED:
        failures.append(f"{name}: the harness exited {proc.returncode}, not {INTERRUPTED}")
    deadline = time.monotonic() + GONE_WAIT_S
    while time.monotonic() < deadline and any(observe.alive(p) for p in started):
        time.sleep(observe.POLL_S)
    left = [f"{p} ({' '.join(observe.cmdline(p))[:80]})" for p in started if observe.alive(p)]
    if left:
        failures.append(f"{name}: still running after the harness exited: {left}")
    report = observe.results(out_dir) if results else None
    if results and not report:
        failures.append(f"{name}: no results JSON written in {out_dir}")
    return failures, report


def mid_run(build, sig):
    name = f"{signal.Signals(sig).name} mid-run"
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-interrupt.")
    proc = observe.start_bench(build, out_dir, *RUN, "--idle-connections", "0")
    read_line_with(proc, "[1/2]")
    # The second run's server and client, both alive, before the signal.
    server_exe = os.path.realpath(os.path.join(build, "server", "server"))
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    started = observe.eventually(
        lambda: (lambda d: d if {server_exe, client_exe} <= {observe.exe(p) for p in d} else None)(
            observe.descendants(proc.pid)), BENCH_WAIT_S, "the second run's server and client")
    failures, report = stop_and_check(name, proc, out_dir, sig, started)
    if report:
        done = [s["row"] for s in report["summaries"]]
        if report.get("interrupted") != signal.Signals(sig).name or report.get("runs_done") != 1 \
                or report.get("runs_planned") != 2:
            failures.append(f"{name}: the results say interrupted={report.get('interrupted')!r}, "
                            f"{report.get('runs_done')} of {report.get('runs_planned')} runs, not "
                            f"{signal.Signals(sig).name!r} after 1 of 2")
        first = next((s for s in report["summaries"] if s["row"] == "ringhttp/plaintext"), None)
        if done != ["ringhttp/plaintext"] or not first or not first.get("rps") or not first.get("server_cpu_us"):
            failures.append(f"{name}: the results hold rows {done}, not the first run's with its figures")
    print(("ok" if not failures else "FAIL") + f"    {name}: exit {INTERRUPTED}, the run's server and client "
          "gone, the first run's figures written")
    return failures


def memory_row(build):
    name = "SIGTERM while holders hold the memory row's connections"
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-interrupt.")
    proc = observe.start_bench(build, out_dir, *RUN, "--idle-connections", "200")
    server_exe = os.path.realpath(os.path.join(build, "server", "server"))

    def holding():
        d = observe.descendants(proc.pid)
        servers = [p for p in d if observe.exe(p) == server_exe and "--connections-max" in observe.cmdline(p)]
        holders = [p for p in d if observe.exe(p) != server_exe and p not in servers]
        if not servers or len(holders) < 2:
            return None
        port = int(observe.arg_after(observe.cmdline(servers[0]), "--port"))
        return d if observe.established(port) >= 50 else None
    started = observe.eventually(holding, BENCH_WAIT_S, "the memory row's server and holders with connections")
    failures, report = stop_and_check(name, proc, out_dir, signal.SIGTERM, started)
    if report and (report.get("interrupted") != "SIGTERM" or report.get("runs_done") != 0):
        failures.append(f"{name}: the results say interrupted={report.get('interrupted')!r}, "
                        f"{report.get('runs_done')} runs done")
    print(("ok" if not failures else "FAIL") + f"    {name}: exit {INTERRUPTED}, holders and server gone, "
          "results written")
    return failures


def soak_phase(build):
    """SIGTERM in a soak's phase, its load and the hostile driver running."""
    name = "SIGTERM mid-soak"
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-interrupt.")
    driver = os.path.realpath(os.path.join(build, "tests", "socket", "hostile_driver"))
    proc = observe.start_bench(build, out_dir, "--soak", "ringhttp/plaintext", "--soak-hostile", driver,
                               "--soak-phases", "3", "--warmup", str(WARMUP_S), "--duration", "1",
                               "--connections", "4")
    exes = {os.path.realpath(os.path.join(build, "server", "server")),
            os.path.realpath(os.path.join(build, "client", "client")), driver}
    started = observe.eventually(
        lambda: (lambda d: d if exes <= {observe.exe(p) for p in d} else None)(observe.descendants(proc.pid)),
        BENCH_WAIT_S, "the soak's server, client and hostile driver")
    failures, report = stop_and_check(name, proc, out_dir, signal.SIGTERM, started)
    soak = (report or {}).get("soak", {})
    if report and (soak.get("interrupted") != "SIGTERM" or soak.get("phases") != []):
        failures.append(f"{name}: the results say interrupted={soak.get('interrupted')!r}, phases "
                        f"{soak.get('phases')}, not SIGTERM in the first phase")
    print(("ok" if not failures else "FAIL") + f"    {name}: exit {INTERRUPTED}, server, client and hostile "
          "driver gone, results written")
    return failures


def profile_recording(build):
    """SIGTERM while perf records a --profile run."""
    name = "SIGTERM mid-profile"
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-interrupt.")
    # perf's recording outlasts GONE_WAIT_S: one left running would be seen.
    proc = observe.start_bench(build, out_dir, "--profile", "ringhttp/plaintext", "--iterations", "1",
                               "--warmup", "1", "--duration", str(GONE_WAIT_S + 3), "--connections", "4",
                               "--cool-down", "0")

    def recording():
        d = observe.descendants(proc.pid)
        return d if any("-p" in observe.cmdline(p) and "record" in observe.cmdline(p) for p in d) else None
    started = observe.eventually(recording, BENCH_WAIT_S, "perf recording the server")
    failures, _ = stop_and_check(name, proc, out_dir, signal.SIGTERM, started, results=False)
    report = observe.results(out_dir, "profile") or {}
    prof = report.get("profile", {})
    plain = prof.get("plain", [])
    if prof.get("interrupted") != "SIGTERM" or len(plain) != 1 or not plain[0].get("server_cpu_us") \
            or prof.get("recorded") != []:
        failures.append(f"{name}: the results say interrupted={prof.get('interrupted')!r}, {len(plain)} plain runs "
                        f"({plain}), recorded {prof.get('recorded')}: not SIGTERM with the plain run's figures")
    print(("ok" if not failures else "FAIL") + f"    {name}: exit {INTERRUPTED}, perf, server and client gone, the "
          "plain run's figures written")
    return failures


def sigterm_mid_run(build):
    return mid_run(build, signal.SIGTERM)


def sigint_mid_run(build):
    return mid_run(build, signal.SIGINT)


if __name__ == "__main__":
    sys.exit(observe.run_checks(sigterm_mid_run, memory_row, sigint_mid_run, soak_phase, profile_recording))
