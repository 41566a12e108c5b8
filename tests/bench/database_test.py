#!/usr/bin/env python3
"""The database rows: a Postgres cluster of the run's own, the peer's rows
with the database's CPU beside the server's, and nothing left behind.

- node-pg's two rows and pgbench's, one short iteration: exit 0; each
  node-pg row has requests, no error, server CPU and database CPU per
  request above 0; each pgbench row transactions, no failed one, its own
  CPU and the database's above 0 and no server CPU (there is no server);
  each node-pg row's rate is stated against pgbench's; the table has
  the database CPU column (the default run's does not: method_test reads
  that table); the cluster (every process whose command line names the
  harness's db directory) is gone when the harness has exited, and its
  directory removed;
- SIGTERM while the read row runs: exit 130, the cluster gone as well.

Usage: database_test.py --build DIR    (meson test runs it)
"""
import os
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

BENCH_WAIT_S = 180   # generous bounds for a busy two-core machine
GONE_WAIT_S = 10
MARK = "ringhttp-bench-db."  # the cluster's directory prefix (bench/harness/database.py)
RUN = ("--only", "node-pg,pgbench", "--iterations", "1", "--warmup", "1", "--duration", "2", "--connections", "4",
       "--cool-down", "0")


def cluster_processes():
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if MARK.encode() in f.read():
                        out.append(int(name))
            except OSError:
                pass
    return out


def gone():
    deadline = time.monotonic() + GONE_WAIT_S
    while cluster_processes() and time.monotonic() < deadline:
        time.sleep(observe.POLL_S)
    left = cluster_processes()
    dirs = [d for d in os.listdir(tempfile.gettempdir()) if d.startswith(MARK)]
    return left, dirs


def rows_measured(build):
    failures = []
    before = set(d for d in os.listdir(tempfile.gettempdir()) if d.startswith(MARK))
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-db-test.")
    proc = observe.start_bench(build, out_dir, *RUN)
    out, err = proc.communicate(timeout=BENCH_WAIT_S)
    report = observe.results(out_dir) or {}
    if proc.returncode != 0:
        failures.append(f"exit {proc.returncode}: {err[-1500:]}")
    summaries = {s["row"]: s for s in report.get("summaries", [])}
    for row in ("node-pg/database-read", "node-pg/database-write"):
        s = summaries.get(row, {})
        if not (s.get("rps") and s.get("errors") == 0 and s.get("server_cpu_us") and s["server_cpu_us"][0] > 0
                and s.get("database_cpu_us") and s["database_cpu_us"][0] > 0):
            failures.append(f"{row}: not measured with server and database CPU: {s}")
    for row in ("pgbench/database-read", "pgbench/database-write"):
        s = summaries.get(row, {})
        if not (s.get("rps") and s.get("errors") == 0 and s.get("server_cpu_us") is None and s.get("client_cpu_us")
                and s["client_cpu_us"][0] > 0 and s.get("database_cpu_us") and s["database_cpu_us"][0] > 0):
            failures.append(f"{row}: not measured as the database's ceiling: {s}")
        if f"{row.replace('pgbench', 'node-pg')}: " not in out or "pgbench's rate" not in out:
            failures.append(f"no rate against {row} in the notes")
    if "database CPU µs/req" not in out:
        failures.append("the table has no database CPU column")
    left, dirs = gone()
    if left or set(dirs) - before:
        failures.append(f"after the run: cluster processes {left}, directories {sorted(set(dirs) - before)}")
    print(("ok" if not failures else "FAIL") + "    node-pg's database rows beside pgbench's: server and database "
          "CPU per request, the rate against pgbench's, the cluster gone after")
    return failures


def interrupted(build):
    failures = []
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-db-test.")
    proc = observe.start_bench(build, out_dir, *RUN[:-4], "--warmup", "30", "--connections", "4")
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    observe.eventually(lambda: cluster_processes() and any(observe.exe(p) == client_exe
                                                           for p in observe.children(proc.pid)),
                       BENCH_WAIT_S, "the cluster and the read row's client")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=BENCH_WAIT_S)
    if proc.returncode != 130:
        failures.append(f"SIGTERM: exit {proc.returncode}, not 130")
    left, _ = gone()
    if left:
        failures.append(f"SIGTERM: the cluster's processes {left} outlived the harness")
    print(("ok" if not failures else "FAIL") + "    SIGTERM during a database row: exit 130, the cluster gone")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(rows_measured, interrupted, missing=observe.node_pg_missing))
