#!/usr/bin/env python3
"""The memory row at several counts, checked against the real processes.

Two small harness runs, ringhttp only:

1. `--idle-connections 50,200` against ringhttp, watched from outside: the
   row reports 50 and then 200 connections held, as many as the server held
   at most (its established connections in /proc/net/tcp; none was closed,
   so at the first reading it held all 50); the connections came from more
   than one 127.0.0.x source address, none from 127.0.0.1; each
   per-connection figure is the RSS growth from the one-connection reading
   divided by the connections held less that first one, each slope the
   growth since the previous reading divided by the connections added since,
   and all are positive.
2. `--idle-connections 50,200,max` with the harness's descriptor limit
   lowered to FD_LIMIT (the servers inherit it), against a ringhttp whose
   table holds CAPPED_TABLE: 'max' is that limit less the harness's margin
   for a server's own descriptors, read at run time and stated in the
   output; the row reports the CAPPED_TABLE connections the server held, not
   the 200 or max it was sent, and divides by them: a harness that divided
   by the count it asked for fails here.

Usage: memory_counts_test.py --build DIR    (meson test runs it)
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
import bench  # noqa: E402  the harness's own margin, to know what 'max' must be

COUNTS = [50, 200]
FD_LIMIT = 600                  # the lowered descriptor limit of the second run
CAPPED_TABLE = 120              # between the two counts
BENCH_WAIT_S = 90               # generous bounds for a busy two-core machine
SMALL_RUN = ("--only", "ringhttp/plaintext", "--iterations", "1", "--warmup", "0", "--duration", "1",
             "--connections", "4", "--cool-down", "0")


def established_sources(port):
    """The source addresses of the established connections to `port`, with
    how many each holds (IPv4: the holders bind 127.0.0.x)."""
    sources = {}
    for _, remote in observe.established_pairs(port):
        hex_ip = remote.split(":")[0]
        ip = ".".join(str(int(hex_ip[i:i + 2], 16)) for i in (6, 4, 2, 0))
        sources[ip] = sources.get(ip, 0) + 1
    return sources


def watch_memory_server(proc, server_exe):
    """The most established connections the memory row's server held, and
    their source addresses at that moment."""
    deadline = time.monotonic() + BENCH_WAIT_S
    seen, most, sources = set(), 0, {}
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the harness ran longer than {BENCH_WAIT_S} s")
        for pid in observe.children(proc.pid):
            if pid in seen or observe.exe(pid) != server_exe or "--connections-max" not in observe.cmdline(pid):
                continue
            seen.add(pid)
            port = int(observe.arg_after(observe.cmdline(pid), "--port"))
            while (observe.stat(pid) or ("Z",))[0] != "Z":
                now = established_sources(port)
                if sum(now.values()) > most:
                    most, sources = sum(now.values()), now
                time.sleep(observe.POLL_S)
        time.sleep(observe.POLL_S)
    return len(seen), most, sources


def arithmetic(name, mem):
    """Each figure is the growth over the connections held, never over those asked for."""
    failures = []
    before, prev_rss, prev_held = mem["rss_before"], mem["rss_before"], 1
    for p in mem["points"]:
        per = (p["rss_after"] - before) / (p["connections"] - 1)
        if p["bytes_per_connection"] != per:
            failures.append(f"{name} at {p['requested']}: {p['bytes_per_connection']} bytes per connection, not the "
                            f"growth {p['rss_after'] - before} over the {p['connections'] - 1} connections held "
                            "after the first")
        if p["connections"] > prev_held:
            slope = (p["rss_after"] - prev_rss) / (p["connections"] - prev_held)
            if p["slope_bytes_per_connection"] != slope:
                failures.append(f"{name} at {p['requested']}: slope {p['slope_bytes_per_connection']}, not the "
                                f"growth {p['rss_after'] - prev_rss} over the {p['connections'] - prev_held} "
                                "connections held since the previous reading")
        elif p["slope_bytes_per_connection"] is not None:
            failures.append(f"{name} at {p['requested']}: a slope with no connection added")
        prev_rss, prev_held = p["rss_after"], p["connections"]
    return failures


def check_counts(build):
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-counts.")
    proc = observe.start_bench(build, out_dir, *SMALL_RUN, "--idle-connections", ",".join(map(str, COUNTS)))
    servers, most, sources = watch_memory_server(proc, os.path.realpath(os.path.join(build, "server", "server")))
    out, err = proc.communicate(timeout=BENCH_WAIT_S)
    report = observe.results(out_dir)
    if proc.returncode != 0 or not report:
        return [f"counts: the harness exited {proc.returncode}:\n{err[-3000:]}\n{out[-2000:]}"]
    mem = report["instances"].get("ringhttp", {}).get("memory", {})
    print(f"      memory row: {mem}; the server held {most} at most, from {sources}")
    if "failure" in mem or [p["requested"] for p in mem.get("points", [])] != COUNTS:
        return [f"counts: the memory row did not report {COUNTS}: {mem}"]
    failures = []
    held = [p["connections"] for p in mem["points"]]
    if servers != 1 or most != COUNTS[-1] or held != COUNTS:
        failures.append(f"counts: the row reports {held} held; {servers} memory-row server(s) held {most} at most "
                        f"(sent {COUNTS}, none closed)")
    if len(sources) < 2 or "127.0.0.1" in sources or not all(s.startswith("127.0.0.") for s in sources):
        failures.append(f"counts: the connections came from {sources}, not several 127.0.0.x holders")
    for p in mem["points"]:
        if not (p["bytes_per_connection"] > 0 and (p["slope_bytes_per_connection"] or 0) > 0):
            failures.append(f"counts: at {p['requested']}, {p['bytes_per_connection']} bytes per connection, slope "
                            f"{p['slope_bytes_per_connection']}: not both positive")
    failures += arithmetic("counts", mem)
    print(("ok" if not failures else "FAIL") + f"    the memory row at {COUNTS} reports each count as the server "
          "held it, from several source addresses, with positive slopes")
    return failures


def check_capped_max(build):
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-capped-max.")
    server = os.path.join(build, "server", "server")
    argv = [sys.executable, observe.BENCH, "--build", build, "--out", out_dir,
            "--server", f"capped={server} --address 127.0.0.1 --port {{port}} --shards 1 --cpus 0 "
            f"--connections-max {CAPPED_TABLE}", *SMALL_RUN, "--only", "capped/plaintext",
            "--idle-connections", ",".join(map(str, COUNTS)) + ",max"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=BENCH_WAIT_S, stdin=subprocess.DEVNULL,
                          preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT)))
    report = observe.results(out_dir)
    if proc.returncode != 0 or not report:
        return [f"capped: the harness exited {proc.returncode}:\n{proc.stderr[-3000:]}\n{proc.stdout[-2000:]}"]
    largest = FD_LIMIT - bench.SERVER_FD_MARGIN
    sent = COUNTS + [largest]
    mem = report["instances"].get("capped", {}).get("memory", {})
    print(f"      memory row: {mem}; limits {report['memory_row']['descriptor_limits']}")
    failures = []
    if report["memory_row"]["counts"] != sent or f"Largest count {largest:,}" not in proc.stdout \
            or f"ulimit -Hn {FD_LIMIT:,}" not in proc.stdout:
        failures.append(f"capped: with a descriptor limit of {FD_LIMIT} the counts are "
                        f"{report['memory_row']['counts']}, not {sent}, or the output does not state the largest "
                        f"count {largest} and the limit")
    if "failure" in mem or [(p["requested"], p["connections"]) for p in mem.get("points", [])] != [
            (c, min(c, CAPPED_TABLE)) for c in sent]:
        return failures + [f"capped: the row does not report {[min(c, CAPPED_TABLE) for c in sent]} held of "
                           f"{sent} sent: {mem}"]
    failures += arithmetic("capped", mem)
    if not (mem["points"][1]["slope_bytes_per_connection"] or 0) > 0:
        failures.append(f"capped: slope {mem['points'][1]['slope_bytes_per_connection']} from 50 to "
                        f"{CAPPED_TABLE} held")
    print(("ok" if not failures else "FAIL") + f"    with {FD_LIMIT} descriptors 'max' is {largest}; the row divides "
          f"by the {CAPPED_TABLE} connections the server held, not the {sent[1:]} it was sent")
    return failures


def main():
    return observe.run_checks(check_counts, check_capped_max)


if __name__ == "__main__":
    sys.exit(main())
