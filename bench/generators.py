#!/usr/bin/env python3
"""Load generators side by side: ringhttp's client against wrk, same server, same run.

Usage: bench/generators.py [--build DIR] [--duration S] [--warmup S]
                           [--connections N] [--iterations N]

Method (docs/BENCHMARKS.md): the server runs with one shard/thread pinned to
CPU 0, each generator with one thread pinned to CPU 1, 128 connections. For
each iteration, workload and generator a fresh server is started; the
generator warms up (not reported), then runs the measured window. The
generator's CPU per request is its own: the client reports its rusage over
exactly the measured window; wrk's is the rusage of the measured wrk process.
Server CPU per request is utime+stime from /proc/PID/stat around the window.
Workloads: /plaintext from the io_uring floor responder, one request at a
time and 16 pipelined; 64 KiB responses (ringhttp's /stream?bytes=65536,
since the floor has one fixed response). Any error, in either generator,
fails the run and the script exits 1.
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLK_TCK = os.sysconf("SC_CLK_TCK")
UNITS = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def start_server(cmd):
    proc = subprocess.Popen(["taskset", "-c", "0"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.kill()
        raise RuntimeError(f"{cmd[0]} did not start: {line!r}")
    return proc, int(m.group(1))


def stop_server(proc):
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_child(cmd, timeout):
    """Runs cmd; returns (stdout, user+sys seconds of that child alone)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def wrk(a, port, path, pipeline, server_pid):
    url = f"http://127.0.0.1:{port}{path}"
    base = ["taskset", "-c", "1", "wrk", "-t1", f"-c{a.connections}"]
    tail = []
    if pipeline > 1:
        base += ["-s", os.path.join(ROOT, "bench/peers/pipeline.lua")]
        tail = ["--", str(pipeline)]
    run_child(base + [f"-d{a.warmup}s", url] + tail, a.warmup + 30)
    t0 = cpu_ticks(server_pid)
    out, cpu = run_child(base + [f"-d{a.duration}s", url] + tail, a.duration + 30)
    t1 = cpu_ticks(server_pid)
    text = out.stdout
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+), ([\d.]+)(\w+) read", text)
    if not m:
        raise RuntimeError("cannot parse wrk output:\n" + text + out.stderr)
    requests = int(m.group(1))
    seconds = float(m.group(2)) * {"s": 1, "ms": 1e-3, "m": 60}[m.group(3)]
    nbytes = float(m.group(4)) * UNITS[m.group(5)]
    errors = 0
    e = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if e:
        errors += sum(int(x) for x in e.groups())
    n = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if n:
        errors += int(n.group(1))
    return {"requests": requests, "rps": requests / seconds, "bytes_per_s": nbytes / seconds,
            "gen_cpu_us": cpu * 1e6 / requests, "server_cpu_us": (t1 - t0) / CLK_TCK * 1e6 / requests,
            "errors": errors}


def client(a, port, path, pipeline, server_pid):
    url = f"http://127.0.0.1:{port}{path}"
    cmd = ["taskset", "-c", "1", os.path.join(a.build, "client/client"), "-t", "1", "--cpus", "1",
           "-c", str(a.connections), "-w", f"{a.warmup}s", "-d", f"{a.duration}s", "-p", str(pipeline),
           "--server-pid", str(server_pid), "--json", url]
    out, _ = run_child(cmd, a.warmup + a.duration + 30)
    try:
        r = json.loads(out.stdout)
    except json.JSONDecodeError:
        raise RuntimeError("cannot parse client output:\n" + out.stdout + out.stderr)
    return {"requests": r["requests"], "rps": r["requests_per_s"], "bytes_per_s": r["bytes_per_s"],
            "gen_cpu_us": r["client_cpu_us_per_request"], "server_cpu_us": r["server_cpu_us_per_request"],
            "errors": r["errors_total"]}


def spread(values, digits):
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} [{min(values):.{digits}f}–{max(values):.{digits}f}]"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build-release"))
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--connections", type=int, default=128)
    p.add_argument("--iterations", type=int, default=3)
    a = p.parse_args()
    a.build = os.path.abspath(a.build)

    floor = [os.path.join(a.build, "bench/floor/floor-uring"), "--port", "0"]
    server = [os.path.join(a.build, "server/server"), "--shards", "1", "--cpus", "0", "--port", "0"]
    workloads = [("plaintext", floor, "/plaintext", 1), ("plaintext, pipelined 16", floor, "/plaintext", 16),
                 ("64 KiB responses", server, "/stream?bytes=65536", 1)]
    generators = [("wrk", wrk), ("client", client)]

    print("## Environment\n")
    print(f"- date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    print(f"- kernel: {os.uname().release}, nproc {os.cpu_count()}")
    print(f"- wrk: {subprocess.run(['wrk', '-v'], capture_output=True, text=True).stdout.splitlines()[0]}")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    print(f"- ringhttp: {commit.stdout.strip()}, build {a.build}")
    print(f"- method: server on CPU 0, generator (1 thread, {a.connections} connections) on CPU 1, "
          f"{a.warmup}s warm-up, {a.duration}s measured, {a.iterations} iterations, fresh server per run\n", flush=True)

    results = {}
    failed = []
    for it in range(1, a.iterations + 1):
        for wname, scmd, path, pipeline in workloads:
            for gname, gen in generators:
                proc, port = start_server(scmd)
                try:
                    r = gen(a, port, path, pipeline, proc.pid)
                finally:
                    stop_server(proc)
                results.setdefault((wname, gname), []).append(r)
                ok = r["errors"] == 0
                if not ok:
                    failed.append(f"{wname} / {gname} (iteration {it}: {r['errors']} errors)")
                print(f"  iter {it} {wname:26} {gname:7} {r['rps']/1e3:8.1f}k req/s  {r['bytes_per_s']/1e9:6.3f} GB/s  "
                      f"generator {r['gen_cpu_us']:.2f} us/req  server {r['server_cpu_us']:.2f} us/req  "
                      f"{'ok' if ok else 'ERRORS'}", flush=True)
                time.sleep(1)

    print("\n## Results\n")
    print("| workload | generator | req/s (k) | bytes/s (GB) | generator CPU µs/req | server CPU µs/req | errors "
          "| client ÷ wrk: CPU/req, req/s |")
    print("|---|---|---|---|---|---|---|---|")
    for wname, _, _, _ in workloads:
        w = results[(wname, "wrk")]
        for gname, _ in generators:
            rs = results[(wname, gname)]
            ratio = ""
            if gname == "client":
                cpu = statistics.median(r["gen_cpu_us"] for r in rs) / statistics.median(r["gen_cpu_us"] for r in w)
                rps = statistics.median(r["rps"] for r in rs) / statistics.median(r["rps"] for r in w)
                ratio = f"{cpu:.2f}, {rps:.2f}"
            print(f"| {wname} | {gname} | {spread([r['rps']/1e3 for r in rs], 1)} | "
                  f"{spread([r['bytes_per_s']/1e9 for r in rs], 3)} | {spread([r['gen_cpu_us'] for r in rs], 2)} | "
                  f"{spread([r['server_cpu_us'] for r in rs], 2)} | {sum(r['errors'] for r in rs)} | {ratio} |")
    print("\nMedians across iterations, [min–max]. Generator CPU: its own user+system time per response.")
    if failed:
        print("\nFAILED: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
