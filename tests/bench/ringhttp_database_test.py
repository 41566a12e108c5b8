#!/usr/bin/env python3
"""ringhttp's own database rows, their ceiling, their targets and the db-pool axis.

1. The targets' judgement (bench/harness/summary.py's judge_targets), on
   figures made up here: a rate above and below 0.8x pgbench's, a server
   CPU within and past json's + 3 µs, a reference row that did not run
   (not judged, named), a reference whose runs all failed (not judged), a
   target whose own row did not run (left out); and the control rows a
   selection gets (ringhttp/json when database-read runs without it).
2. The default run has no database row (--list --json).
3. ringhttp's two database rows and pgbench's, one short iteration: exit 0;
   ringhttp/json was added as the CPU target's control; each ringhttp
   database row has requests, no error (every read answered 200 with its
   own row, every write 201: the client checks each) and database CPU;
   the running servers, read from outside while their clients run: the
   database rows' servers were started with --db and --db-pool, hold
   shards x pool database connections and have sent queries (their own
   /metrics), the json row's server has no --db; pgbench ran over exactly
   as many connections (its -c), and the harness's pool is the server's
   own default (its --help); the three targets are printed with met or
   NOT MET and their figures, and are in the JSON.
4. --compare db-pool on database-read: three variants, pool-1, pool-2 and
   pool-4 in that order, each server run with its --db-pool and holding
   that many connections (its /metrics), the ratios divided by pool-2.

Every load targets 127.0.0.1. Usage: ringhttp_database_test.py --build DIR
(meson test runs it)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
from harness.summary import judge_targets, target_controls  # noqa: E402

BENCH_WAIT_S = 240   # generous bounds for a busy two-core machine
METRICS_EVERY_S = 0.2
SHORT = ("--iterations", "1", "--warmup", "1", "--duration", "2", "--connections", "8", "--idle-connections", "0",
         "--cool-down", "0")


def summary(row, **figures):
    """A summary as summarize() makes it: each figure a (median, min, max)."""
    s = {"row": row, "rps": None, "server_cpu_us": None}
    s.update({k: (v, v, v) if v is not None else None for k, v in figures.items()})
    return s


def check_judgement(_build):
    failures = []

    def verdicts(summaries):
        return {(t["row"], t["reference"]): t for t in judge_targets(summaries)}

    read, write, json_, pg_read, pg_write = ("ringhttp/database-read", "ringhttp/database-write", "ringhttp/json",
                                             "pgbench/database-read", "pgbench/database-write")
    # Met: 0.85x and 0.8x exactly (the limit is met), json + 2.5 µs and + 3 µs exactly.
    for rate, cpu, wrate in ((29_750, 12.5, 5_000), (28_000, 13.0, 4_800)):
        got = verdicts({read: summary(read, rps=rate, server_cpu_us=cpu), json_: summary(json_, server_cpu_us=10.0),
                        pg_read: summary(pg_read, rps=35_000), write: summary(write, rps=wrate),
                        pg_write: summary(pg_write, rps=6_000)})
        for key in ((read, pg_read), (read, json_), (write, pg_write)):
            t = got.get(key)
            if not t or t["verdict"] != "met" or not t["line"].startswith(f"{key[0]} ") or ": met (" not in t["line"]:
                failures.append(f"{key} with rate {rate}, cpu {cpu}, write {wrate}: not met: {t}")
    got = verdicts({read: summary(read, rps=27_000, server_cpu_us=13.5), json_: summary(json_, server_cpu_us=10.0),
                    pg_read: summary(pg_read, rps=35_000), write: summary(write, rps=4_000),
                    pg_write: summary(pg_write, rps=6_000)})
    expect = {(read, pg_read): ("NOT MET", ["27,000/s", "35,000/s", "0.77×"]),
              (read, json_): ("NOT MET", ["13.50 µs", "10.00", "+3.50 µs"]),
              (write, pg_write): ("NOT MET", ["4,000/s", "6,000/s", "0.67×"])}
    for key, (verdict, figures) in expect.items():
        t = got.get(key)
        if not t or t["verdict"] != verdict or f": {verdict} (" not in t["line"] or \
                any(f not in t["line"] for f in figures):
            failures.append(f"{key}: expected {verdict} with {figures}: {t}")
    # pgbench's write row did not run, json's runs all failed, the write row did not run at all.
    got = verdicts({read: summary(read, rps=30_000, server_cpu_us=12.0), json_: summary(json_),
                    pg_read: summary(pg_read, rps=35_000)})
    t = got.get((read, json_))
    if not t or t["verdict"] != "not judged" or "row ringhttp/json has no" not in t["line"]:
        failures.append(f"json with no figure: {t}")
    if (write, pg_write) in got:
        failures.append(f"a target whose row did not run is printed: {got[(write, pg_write)]}")
    got = verdicts({write: summary(write, rps=5_000)})
    t = got.get((write, pg_write))
    if not t or t["verdict"] != "not judged" or not t["line"].endswith(f"not judged: row {pg_write} did not run"):
        failures.append(f"pgbench's write row missing: {t}")
    if len(got) != 1:
        failures.append(f"only the write row ran, targets: {list(got)}")
    if (target_controls({read}) != [pg_read, json_] or target_controls({read, json_, pg_read})
            or target_controls({write}) != [pg_write]):
        failures.append(f"control rows: {target_controls({read})}, {target_controls({read, json_})}, "
                        f"{target_controls({write})}")
    print(("ok" if not failures else "FAIL") + "    targets judged met, NOT MET and not judged on made-up figures")
    return failures


def check_default_run(build):
    r = subprocess.run([sys.executable, observe.BENCH, "--build", build, "--list", "--json"],
                       capture_output=True, text=True, timeout=60)
    import json
    rows = json.loads(r.stdout)["rows"]
    # --list lists the --compare axes' rows too, each axis's own run (default there): not the default run's.
    failures = [f"{x['id']} is in the default run" for x in rows
                if x["default"] and not x["axis"] and "database" in x["workload"]]
    if not any(x["id"] == "ringhttp/database-read" and not x["default"] for x in rows):
        failures.append("no ringhttp/database-read row outside the default run")
    print(("ok" if not failures else "FAIL") + "    the default run has no database row")
    return failures


def watch(bench, build):
    """While the harness runs: each client's server (pid, arguments, last
    /metrics read while the client ran) in order, and every pgbench's -c."""
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    servers, pgbench, seen = [], set(), set()
    current = None
    last_read = 0.0
    deadline = time.monotonic() + BENCH_WAIT_S
    while bench.poll() is None and time.monotonic() < deadline:
        for pid in observe.children(bench.pid):
            args = observe.cmdline(pid)
            if "prepared" in args:
                c = observe.arg_after(args[args.index("prepared"):], "-c")
                if c:
                    pgbench.add((pid, c))
            if pid in seen or observe.exe(pid) != client_exe:
                continue
            spid = observe.arg_after(args, "--server-pid")
            if spid is None:
                continue  # right after exec: the new arguments come a moment later
            seen.add(pid)
            current = {"client": pid, "url": args[-1], "pid": int(spid), "args": observe.cmdline(int(spid)),
                       "metrics": None}
            servers.append(current)
        if current and observe.stat(current["client"]) and time.monotonic() - last_read > METRICS_EVERY_S:
            port = observe.arg_after(current["args"], "--port")
            try:
                current["metrics"] = observe.metrics(int(port))
            except (OSError, AssertionError, ValueError, TypeError):
                pass  # the server is stopping: the last reading stands
            last_read = time.monotonic()
        time.sleep(observe.POLL_S)
    if bench.poll() is None:
        bench.kill()
    return servers, sorted(c for _, c in pgbench)


def server_default_pool(build):
    out = subprocess.run([os.path.join(build, "server", "server"), "--help"], capture_output=True, text=True,
                         timeout=10).stdout
    # The entry may wrap before its default: search past line ends.
    m = re.search(r"--db-pool N\b.*?default (\d+)\)", out, re.S)
    return m and m.group(1)


def check_rows(build):
    failures = []
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-dbrows.")
    bench = observe.start_bench(build, out_dir, "--only", "ringhttp/database-read,ringhttp/database-write",
                                *SHORT)
    servers, pgbench_c = watch(bench, build)
    out, err = bench.communicate()
    report = observe.results(out_dir) or {}
    shutil.rmtree(out_dir, ignore_errors=True)
    if bench.returncode != 0:
        failures.append(f"the harness exited {bench.returncode}: {err[-2000:]}")
    summaries = {s["row"]: s for s in report.get("summaries", [])}
    if list(summaries) != ["ringhttp/json", "ringhttp/database-read", "ringhttp/database-write",
                           "pgbench/database-read", "pgbench/database-write"]:
        failures.append(f"rows run: {list(summaries)}")
    added = re.search(r"bench: adding ([^:]*):", out)
    if not added or set(added.group(1).split(", ")) != {"ringhttp/json", "pgbench/database-read",
                                                         "pgbench/database-write"}:
        failures.append(f"the control rows (json, pgbench's two) were not said to be added: {out[:500]}")
    for row in ("ringhttp/database-read", "ringhttp/database-write"):
        s = summaries.get(row, {})
        if not (s.get("rps") and s.get("errors") == 0 and not s.get("failures") and s.get("database_cpu_us")
                and s["database_cpu_us"][0] > 0):
            failures.append(f"{row}: not measured without error, with database CPU: {s}")
    default_pool = server_default_pool(build)
    by_path = {"/json": [], "/db/users": []}
    for srv in servers:
        path = "/" + srv["url"].split("/", 3)[3]
        by_path["/json" if path == "/json" else "/db/users"].append(srv)
        if not srv["url"].startswith("http://127.0.0.1:"):
            failures.append(f"a load not on 127.0.0.1: {srv['url']}")
    if len(by_path["/json"]) != 1 or len(by_path["/db/users"]) != 2:
        failures.append(f"servers watched: {[s['url'] for s in servers]}")
    for srv in by_path["/json"]:
        if "--db" in srv["args"] or "--db-pool" in srv["args"]:
            failures.append(f"ringhttp/json's server runs with the database: {srv['args']}")
    totals = set()
    for srv in by_path["/db/users"]:
        args, m = srv["args"], srv["metrics"] or {}
        pool, shards = observe.arg_after(args, "--db-pool"), observe.arg_after(args, "--shards")
        url = observe.arg_after(args, "--db") or ""
        if not url.startswith("postgresql://") or "127.0.0.1" not in url or not pool or not shards:
            failures.append(f"{srv['url']}: its server runs without --db on 127.0.0.1 and --db-pool: {args}")
            continue
        if pool != default_pool:
            failures.append(f"{srv['url']}: --db-pool {pool}, the server's own default is {default_pool}")
        total = int(pool) * int(shards)
        totals.add(total)
        if m.get("ringhttp_db_connections_up") != total or not m.get("ringhttp_db_queries_total"):
            failures.append(f"{srv['url']}: its /metrics while loaded: connections up "
                            f"{m.get('ringhttp_db_connections_up')} (expected {total}), queries "
                            f"{m.get('ringhttp_db_queries_total')}")
    if not pgbench_c or len(totals) != 1 or any(int(c) != next(iter(totals)) for c in pgbench_c):
        failures.append(f"pgbench ran with -c {pgbench_c}, ringhttp holds shards × pool = {sorted(totals)}")
    targets = report.get("targets") or []
    if [(t["row"], t["reference"]) for t in targets] != [
            ("ringhttp/database-read", "pgbench/database-read"), ("ringhttp/database-read", "ringhttp/json"),
            ("ringhttp/database-write", "pgbench/database-write")]:
        failures.append(f"targets in the JSON: {targets}")
    for t in targets:
        if t["verdict"] not in ("met", "NOT MET") or t["measured"] is None or t["reference_measured"] is None:
            failures.append(f"target not judged on this run's figures: {t}")
        elif f"{t['line']}" not in out or not re.search(r": (met|NOT MET) \(measured ", t["line"]):
            failures.append(f"target line not printed with its figures: {t['line']!r}")
    if "## Targets" not in out or out.index("## Targets") < out.index("## Results"):
        failures.append("no targets section after the table")
    print(("ok" if not failures else "FAIL") + "    ringhttp's database rows with --db, shards × pool connections "
          "as pgbench's, the targets printed and written")
    return failures


def check_pool_axis(build):
    failures = []
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-dbpool.")
    bench = observe.start_bench(build, out_dir, "--compare", "db-pool", "--only", "database-read", *SHORT)
    servers, _ = watch(bench, build)
    out, err = bench.communicate()
    report = observe.results(out_dir) or {}
    shutil.rmtree(out_dir, ignore_errors=True)
    if bench.returncode != 0:
        failures.append(f"the harness exited {bench.returncode}: {err[-2000:]}")
    rows = [(s["row"], s["variant"], s.get("ratio_base")) for s in report.get("summaries", [])]
    expected = [(f"ringhttp:pool-{n}/database-read", f"pool-{n}", "ringhttp:pool-2/database-read") for n in (1, 2, 4)]
    if rows != expected:
        failures.append(f"rows {rows}, expected {expected}")
    pools = [observe.arg_after(s["args"], "--db-pool") for s in servers]
    ups = [(s["metrics"] or {}).get("ringhttp_db_connections_up") for s in servers]
    if pools != ["1", "2", "4"] or ups != [1, 2, 4]:
        failures.append(f"servers ran with --db-pool {pools}, connections up {ups}: expected 1, 2, 4")
    if any(not s["url"].startswith("http://127.0.0.1:") for s in servers):
        failures.append(f"a load not on 127.0.0.1: {[s['url'] for s in servers]}")
    if "## Targets" in out:
        failures.append("targets printed for --compare rows")
    print(("ok" if not failures else "FAIL") + "    --compare db-pool: pool-1, pool-2, pool-4, each server with "
          "its pool up")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(check_judgement, check_default_run, check_rows, check_pool_axis))
