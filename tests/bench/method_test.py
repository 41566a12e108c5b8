#!/usr/bin/env python3
"""The benchmark's method, checked against the real processes it starts.

One small harness run (two of the ladder's rows, two iterations, 2 s warm-up
and 1 s measured, 40 idle connections in the memory row) watched from
outside, and one more for the memory row against a server that keeps fewer
connections than it was sent:

1. pinning: while each run is under way (its server has answered more than
   this test's own /metrics requests), every thread of the server may run on
   CPU 0 only and every thread of the client on CPU 1 only (their
   Cpus_allowed_list in /proc/PID/task/*/status);
2. the warm-up is not counted: when each client has exited, with the harness
   stopped (SIGSTOP) so that the server is still up, the server's /metrics
   says how many requests it read in all; the run's reported requests are at
   most 3/4 of them (1/3 expected: 1 s measured of 3 s; counting the warm-up
   would give all of them);
3. the order: the clients come in the documented order, iterations outer
   (row 1, row 2, row 1, row 2), each against a server process of its own;
4. the memory row: the connections it reports are exactly the ones the
   server held (counted in /proc/net/tcp), its per-connection figure is
   positive and is the RSS growth divided by the connections really open
   less the first; against a ringhttp with a table of 10 sent 30
   connections, it reports the 10 it held, not the 30 it opened;
5. the ladder's client arguments (-m, -H, --body-file): the validated
   (POST /echo with its JSON body) and authenticated (a bearer token) rows
   run with zero errors, every body checked.

Usage: method_test.py --build DIR    (meson test runs it)
"""
import os
import signal
import sys
import tempfile
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402
from observe import Frozen, eventually  # noqa: E402

ROWS = {"/echo": "ringhttp/validated", "/profile": "ringhttp/authenticated"}
ORDER = ["/echo", "/profile", "/echo", "/profile"]  # iterations are the outer loop
WARMUP_S, DURATION_S = 2, 1
IDLE = 40
CAPPED_TABLE, CAPPED_SENT = 10, 30
SERVER_CPU, CLIENT_CPU = "0", "1"   # docs/BENCHMARKING.md: the server on CPU 0, the client on CPU 1
RUN_WAIT_S = 120                    # generous bounds for a busy two-core machine
BENCH_WAIT_S = 240


class Watch:
    def __init__(self, build):
        self.client_exe = os.path.realpath(os.path.join(build, "client", "client"))
        self.server_exe = os.path.realpath(os.path.join(build, "server", "server"))
        self.clients = []     # one record per client process, in the order they started
        self.memory = []      # the largest established count seen for each memory-row server

    def client(self, bench_pid, pid):
        # Right after exec, /proc/PID/exe already names the client while its
        # cmdline is still empty (the kernel sets the new arguments' bounds
        # a moment later): wait for the arguments before reading them.
        args = observe.cmdline(pid)
        deadline = time.monotonic() + RUN_WAIT_S
        def alive():
            state = observe.stat(pid)
            return state is not None and state[0] != "Z"

        while "--server-pid" not in args and alive() and time.monotonic() < deadline:
            time.sleep(observe.POLL_S)
            args = observe.cmdline(pid)
        if "--server-pid" not in args:
            if not alive():
                return  # gone before it was seen: the run's checks count what was watched
            raise AssertionError(f"client {pid} has no --server-pid in its arguments: {args}")
        server_pid = int(observe.arg_after(args, "--server-pid"))
        url = urllib.parse.urlsplit(args[-1])
        port = url.port
        reads = [observe.metrics(port)["ringhttp_requests_total"]]

        def under_way():
            reads.append(observe.metrics(port)["ringhttp_requests_total"])
            return reads[-1] > reads[0] + len(reads)  # more than our own /metrics requests

        eventually(under_way, RUN_WAIT_S, f"the client {pid} to drive its server")
        rec = {"path": url.path, "client_pid": pid, "server_pid": server_pid,
               "server_threads": observe.threads_cpus(server_pid), "client_threads": observe.threads_cpus(pid)}
        with Frozen(bench_pid):
            eventually(lambda: (observe.stat(pid) or ("Z",))[0] == "Z", RUN_WAIT_S, f"the client {pid} to exit")
            total = observe.metrics(port)["ringhttp_requests_total"]
        # Less this test's own /metrics requests and the harness's one start-up GET.
        rec["server_requests"] = total - (len(reads) + 1) - 1
        self.clients.append(rec)

    def memory_server(self, pid):
        port = int(observe.arg_after(observe.cmdline(pid), "--port"))
        most = 0
        while (observe.stat(pid) or ("Z",))[0] != "Z":
            most = max(most, observe.established(port))
            time.sleep(observe.POLL_S)
        self.memory.append(most)

    def run(self, bench):
        seen = set()
        deadline = time.monotonic() + BENCH_WAIT_S
        try:
            while bench.poll() is None:
                if time.monotonic() > deadline:
                    raise AssertionError(f"the harness ran longer than {BENCH_WAIT_S} s")
                for pid in observe.children(bench.pid):
                    if pid in seen:
                        continue
                    e = observe.exe(pid)
                    if e == self.client_exe:
                        seen.add(pid)
                        self.client(bench.pid, pid)
                    elif e == self.server_exe and "--connections-max" in observe.cmdline(pid):
                        seen.add(pid)
                        self.memory_server(pid)
                time.sleep(observe.POLL_S)
        finally:
            if bench.poll() is None:
                os.kill(bench.pid, signal.SIGCONT)
                bench.kill()
        out, err = bench.communicate()
        return bench.returncode, out, err


def check_observed_run(build):
    failures = []
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-method.")
    bench = observe.start_bench(build, out_dir, "--only", ",".join(ROWS.values()), "--iterations", "2",
                                "--warmup", str(WARMUP_S), "--duration", str(DURATION_S), "--connections", "8",
                                "--idle-connections", str(IDLE), "--cool-down", "0.2")
    watch = Watch(build)
    code, out, err = watch.run(bench)
    report = observe.results(out_dir)
    if code != 0:
        failures.append(f"the harness exited {code}:\n{err[-3000:]}")
    if not report:
        return failures + [f"no results JSON:\n{out[-3000:]}"]

    # 5. The ladder's rows ran with zero errors, every body checked.
    for row in ROWS.values():
        runs = report["runs"].get(row, [])
        if len(runs) != 2 or any(r.get("errors") != 0 or not r.get("requests") for r in runs):
            failures.append(f"{row}: not two clean runs: {[(r.get('requests'), r.get('errors'), r.get('failure')) for r in runs]}")

    # 3. The order, each run against a fresh server.
    order = [c["path"] for c in watch.clients]
    if order != ORDER:
        failures.append(f"the clients ran in the order {order}, not {ORDER} (iterations outer)")
    servers = [c["server_pid"] for c in watch.clients]
    if len(set(servers)) != len(servers):
        failures.append(f"runs shared a server process: {servers}")

    # 1. Pinning.
    for c in watch.clients:
        for who, threads, cpu in (("server", c["server_threads"], SERVER_CPU),
                                  ("client", c["client_threads"], CLIENT_CPU)):
            if not threads:
                failures.append(f"{who} {c['server_pid'] if who == 'server' else c['client_pid']}: no threads read")
            for tid, (name, allowed) in threads.items():
                if allowed != cpu:
                    failures.append(f"{c['path']} run: {who} thread {tid} ({name}) may run on CPUs {allowed}, "
                                    f"not only {cpu}")

    # 2. The warm-up is not counted.
    taken = {}
    for c in watch.clients:
        row = ROWS.get(c["path"])
        if row is None:
            continue
        i = taken[row] = taken.get(row, -1) + 1
        runs = report["runs"].get(row, [])
        if i >= len(runs):
            continue
        reported, served = runs[i].get("requests") or 0, c["server_requests"]
        print(f"      {row} iteration {i + 1}: server {c['server_pid']} threads "
              + ", ".join(f"{n}:{cpus}" for n, cpus in c["server_threads"].values()) + "; client threads "
              + ", ".join(f"{n}:{cpus}" for n, cpus in c["client_threads"].values())
              + f"; reported {reported} of the {served:.0f} requests the server read")
        if not (0 < reported <= 0.75 * served):
            failures.append(f"{row} iteration {i + 1}: reported {reported} requests of the {served:.0f} the server "
                            f"read in all with {WARMUP_S} s warm-up + {DURATION_S} s measured: the warm-up is counted")

    # 4. The memory row, against the server's own count.
    mem = report["instances"].get("ringhttp", {}).get("memory", {})
    print(f"      memory row: {mem}; the server held {watch.memory} at most")
    failures += memory_checks("ringhttp", mem, IDLE, IDLE)
    if watch.memory != [IDLE]:
        failures.append(f"the memory row's server held {watch.memory} connections at most, not [{IDLE}]")
    elif [p["connections"] for p in mem.get("points", [])] != watch.memory:
        failures.append(f"the memory row reports {[p['connections'] for p in mem.get('points', [])]} connections, "
                        f"the server held {watch.memory[0]}")
    print(("ok" if not failures else "FAIL") + f"    {len(watch.clients)} runs watched: pinning, warm-up, order, "
          "memory row, ladder arguments")
    return failures


def memory_checks(name, mem, held, sent):
    """The row's one count (memory_counts_test.py checks several)."""
    if "failure" in mem or len(mem.get("points", [])) != 1:
        return [f"{name}: the memory row failed: {mem}"]
    failures = []
    mem = dict(mem["points"][0], rss_before=mem["rss_before"])
    if mem.get("connections") != held or mem.get("requested") != sent:
        failures.append(f"{name}: the memory row reports {mem.get('connections')} connections held of "
                        f"{mem.get('requested')}, not {held} of {sent}")
    per = mem.get("bytes_per_connection", 0)
    if not per > 0:
        failures.append(f"{name}: {per} bytes per connection")
    if mem.get("connections", 0) > 1 and per != (mem["rss_after"] - mem["rss_before"]) / (mem["connections"] - 1):
        failures.append(f"{name}: {per} bytes per connection is not the growth "
                        f"{mem['rss_after'] - mem['rss_before']} over the {mem['connections'] - 1} connections "
                        "opened after the first and still open")
    return failures


def check_capped_memory_row(build):
    """ringhttp with a table of CAPPED_TABLE connections closes the oldest idle
    one for each newcomer: the harness opens CAPPED_SENT, the server holds
    CAPPED_TABLE, and the figure is divided by those."""
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-capped.")
    server = os.path.join(build, "server", "server")
    bench = observe.start_bench(
        build, out_dir, "--server", f"capped={server} --address 127.0.0.1 --port {{port}} --shards 1 --cpus 0 "
        f"--connections-max {CAPPED_TABLE}", "--only", "capped/plaintext", "--iterations", "1", "--warmup", "0",
        "--duration", "1", "--connections", "4", "--idle-connections", str(CAPPED_SENT), "--cool-down", "0")
    out, err = bench.communicate(timeout=BENCH_WAIT_S)
    report = observe.results(out_dir)
    failures = [] if bench.returncode == 0 else [f"capped: the harness exited {bench.returncode}:\n{err[-2000:]}"]
    if not report:
        return failures + [f"capped: no results JSON:\n{out[-2000:]}"]
    failures += memory_checks("capped", report["instances"].get("capped", {}).get("memory", {}),
                             CAPPED_TABLE, CAPPED_SENT)
    print(("ok" if not failures else "FAIL") + f"    the memory row divides by the {CAPPED_TABLE} connections the "
          f"server held, not the {CAPPED_SENT} it was sent")
    return failures


def main():
    return observe.run_checks(check_observed_run, check_capped_memory_row)


if __name__ == "__main__":
    sys.exit(main())
