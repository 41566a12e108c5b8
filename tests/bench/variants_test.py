#!/usr/bin/env python3
"""Every --compare variant is the one running, confirmed from the server.

1. The harness runs the uring, send, shards and backend axes on /plaintext
   (one short iteration). While each client runs, this test reads the
   start-up line of the server it drives (the server's own stdout, through
   /proc/PID/fd/1) and its arguments (/proc/PID/cmdline), and the client's
   own arguments. Each must be what that variant's flags give: the flags
   are this test's own reading of docs/BENCHMARKING.md's --compare table
   (`6.1` is `--uring 6.1`, `2-shards` is `--shards 2 --cpus 0,1`, `epoll`
   is `--backend epoll`, `client-epoll` is `--backend epoll` given to the
   client, ...), and what
   they give is what the server itself prints when this test starts it with
   those flags alone; no feature list is written down here. `all` and `6.1`
   print the same line on a kernel with every feature: their arguments tell
   them apart. The client's report must name the backend it ran on. The
   backend and uring axes also run the floors' rows of their workloads,
   unchanged; the uring axis runs each switch the io_uring floor takes on
   the floor too, which must run with the same flags and list its
   features (uring=) in its start-up line.
   Every ringhttp row has the server's and the client's system calls per
   request, the server over epoll at least one, over io_uring fewer; the
   floors have the client's only (null, not 0, for the server).
2. A server binary that drops the variant's flags before it runs, and a
   client that drops --backend (wrappers in a build directory of their
   own), make the harness fail those rows, naming each: the harness
   confirms, and does not assume.

The alloc axis needs a second build (-Dallocator=system) and is not run
here; its rows are confirmed by the allocator the start-up line names and
the preloaded library mapped into the process.

Usage: variants_test.py --build DIR    (meson test runs it)
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

AXES = "uring,send,shards,backend"
# docs/BENCHMARKING.md's --compare table: each variant's placement (taskset CPUs and
# server flags) and switches.
DEFAULT_PLACEMENT = ("0", ["--shards", "1", "--cpus", "0"])
VARIANTS = {
    "all": (DEFAULT_PLACEMENT, []),
    "6.12": (DEFAULT_PLACEMENT, ["--uring", "6.12"]),
    "6.10": (DEFAULT_PLACEMENT, ["--uring", "6.10"]),
    "6.6": (DEFAULT_PLACEMENT, ["--uring", "6.6"]),
    "6.1": (DEFAULT_PLACEMENT, ["--uring", "6.1"]),
    "6.0": (DEFAULT_PLACEMENT, ["--uring", "6.0"]),
    "5.19": (DEFAULT_PLACEMENT, ["--uring", "5.19"]),
    "5.10": (DEFAULT_PLACEMENT, ["--uring", "5.10"]),
    "sqpoll": (DEFAULT_PLACEMENT, ["--uring", "all,sqpoll"]),
    "min-wait": (DEFAULT_PLACEMENT, ["--uring", "all,min-wait"]),
    "no-fixed-files": (DEFAULT_PLACEMENT, ["--uring", "all,no-fixed-files"]),
    "no-recv-bundle": (DEFAULT_PLACEMENT, ["--uring", "all,no-recv-bundle"]),
    "no-incremental-buffers": (DEFAULT_PLACEMENT, ["--uring", "all,no-incremental-buffers"]),
    "sendmsg": (DEFAULT_PLACEMENT, ["--send", "sendmsg"]),
    "writev": (DEFAULT_PLACEMENT, ["--send", "writev"]),
    "zc": (DEFAULT_PLACEMENT, ["--send", "zc"]),
    "1-shard": (DEFAULT_PLACEMENT, []),
    "2-shards": (("0,1", ["--shards", "2", "--cpus", "0,1"]), []),
    "uring": (DEFAULT_PLACEMENT, []),
    "epoll": (DEFAULT_PLACEMENT, ["--backend", "epoll"]),
    "client-epoll": (DEFAULT_PLACEMENT, []),
}
# The variants that change the client instead: its flags, and the backend
# its report must name (every other variant's client: uring, its default).
CLIENT_VARIANTS = {"client-epoll": (["--backend", "epoll"], "epoll")}
CONTROLS = {"floor-uring/plaintext", "floor-epoll/plaintext"}  # the backend and uring axes' rows beside their variants
# The uring axis's server switches the io_uring floor runs too (it refuses
# 5.19 and 5.10): on the floor, the same flags.
FLOOR_VARIANTS = {"6.12", "6.10", "6.6", "6.1", "6.0", "sqpoll", "min-wait", "no-fixed-files", "no-recv-bundle",
                  "no-incremental-buffers"}
COMPARED = ("shards", "cpus", "uring", "send", "allocator", "backend")
LINE_WAIT_S = 30
BENCH_WAIT_S = 480


def own_line(server, cpus, flags):
    """The start-up line of the server started here with these flags alone."""
    proc = subprocess.Popen(["taskset", "-c", cpus, server, "--address", "127.0.0.1", "--port", "0", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        line = b""
        deadline = time.monotonic() + LINE_WAIT_S
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            byte = os.read(proc.stdout.fileno(), 1)
            if not byte:
                break
            line += byte
        return line.decode().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=LINE_WAIT_S)


def contains(seq, part):
    return any(seq[i:i + len(part)] == part for i in range(len(seq) - len(part) + 1))


def listed_variants(build):
    r = subprocess.run([sys.executable, observe.BENCH, "--build", build, "--list", "--json", "--compare", AXES],
                       capture_output=True, text=True, timeout=60)
    return [(row["id"], row["variant"], row["server"]) for row in json.loads(r.stdout)["rows"]
            if row["workload"] == "plaintext"]


def check_running_variants(build):
    failures = []
    server = os.path.join(build, "server", "server")
    rows = listed_variants(build)
    unknown = sorted({v for _, v, _ in rows if v is not None} - set(VARIANTS))
    if unknown:
        return [f"the harness has variants this test does not know: {unknown}: write down their flags"]
    controls = {rid for rid, v, _ in rows if v is None}
    if controls != CONTROLS:
        failures.append(f"the axes' rows of other servers are {sorted(controls)}, not {sorted(CONTROLS)}")
    floors = {v for _, v, server in rows if v is not None and server != "ringhttp"}
    if floors != FLOOR_VARIANTS:
        failures.append(f"the floor runs the variants {sorted(floors)}, not {sorted(FLOOR_VARIANTS)}")
    expected = {}
    for name, ((cpus, placement), switches) in VARIANTS.items():
        expected[name] = observe.fields(own_line(server, cpus, placement + switches))
        if not expected[name]:
            failures.append(f"{name}: the server printed no start-up line for {placement + switches}")

    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-variants.")
    bench = observe.start_bench(build, out_dir, "--compare", AXES, "--only", "plaintext", "--iterations", "1",
                                "--warmup", "0", "--duration", "1", "--connections", "8", "--idle-connections", "0",
                                "--cool-down", "0")
    client_exe = os.path.realpath(os.path.join(build, "client", "client"))
    seen, watched = set(), []
    deadline = time.monotonic() + BENCH_WAIT_S
    try:
        while bench.poll() is None and time.monotonic() < deadline:
            for pid in observe.children(bench.pid):
                if pid not in seen and observe.exe(pid) == client_exe:
                    spid = observe.arg_after(observe.cmdline(pid), "--server-pid")
                    if spid is None:
                        # Right after exec the kernel shows the new exe before
                        # the new arguments: look again on the next poll,
                        # unless the client is already gone (not seen while it ran).
                        state = observe.stat(pid)
                        if state and state[0] != "Z":
                            continue
                        seen.add(pid)
                        continue
                    seen.add(pid)
                    watched.append((observe.startup_line(int(spid)), observe.cmdline(int(spid)),
                                    observe.cmdline(pid)))
            time.sleep(observe.POLL_S)
    finally:
        if bench.poll() is None:
            bench.kill()
    out, err = bench.communicate()
    report = observe.results(out_dir)
    if bench.returncode != 0:
        failures.append(f"the harness exited {bench.returncode}:\n{err[-3000:]}")
    if not report:
        return failures + [f"no results JSON:\n{out[-3000:]}"]
    ran = [s["row"] for s in report["summaries"]]
    if ran != [rid for rid, _, _ in rows] or len(watched) != len(rows):
        return failures + [f"{len(watched)} clients watched for the rows {ran}, expected {[r for r, _, _ in rows]}"]
    summaries = {s["row"]: s for s in report["summaries"]}
    for (rid, variant, server), (line, args, client_args) in zip(rows, watched):
        failures += check_syscalls(rid, variant, server, summaries)
        if variant is None:
            continue  # a floor as it starts: no variant to confirm
        if server != "ringhttp":
            # A floor on a uring variant: its flags, and the start-up line's uring= list.
            switches = VARIANTS[variant][1]
            if not contains(args, switches):
                failures.append(f"{rid}: the floor runs without {' '.join(switches)}: {args}")
            if "uring" not in observe.fields(line):
                failures.append(f"{rid}: the floor's start-up line names no uring= list: {line!r}")
            continue
        client_switches, client_backend = CLIENT_VARIANTS.get(variant, ([], "uring"))
        if client_switches and not contains(client_args, client_switches):
            failures.append(f"{rid}: its client runs without {' '.join(client_switches)}: {client_args}")
        if not client_switches and "--backend" in client_args:
            failures.append(f"{rid}: its client runs with --backend: {client_args}")
        said = [((r.get("client") or {}).get("options") or {}).get("backend") for r in report["runs"][rid]]
        if said != [client_backend]:
            failures.append(f"{rid}: its client's report says backend {said}, not {client_backend}")
        (cpus, placement), switches = VARIANTS[variant]
        got = observe.fields(line)
        for k in COMPARED:
            if got.get(k) != expected[variant].get(k):
                failures.append(f"{rid}: its server says {k}={got.get(k)}; {' '.join(placement + switches)} gives "
                                f"{k}={expected[variant].get(k)} ({line!r})")
        for part in (placement, switches):
            if part and not contains(args, part):
                failures.append(f"{rid}: its server runs without {' '.join(part)}: {args}")
    print(("ok" if not failures else "FAIL") + f"    {len(watched)} variants confirmed from their running servers")
    return failures


def check_syscalls(rid, variant, server_name, summaries):
    """Each side's system calls per request: both for ringhttp, the
    client's alone for a floor (the server's null, not 0); the server
    over epoll makes at least one a request, over io_uring fewer."""
    s = summaries.get(rid, {})
    server, client = s.get("server_syscalls_per_request"), s.get("client_syscalls_per_request")
    failures = []
    if not (client and client[0] > 0):
        failures.append(f"{rid}: the client's system calls per request are {client}")
    if server_name != "ringhttp":
        if server is not None:
            failures.append(f"{rid}: a floor has server system calls per request {server}, not null")
    elif not (server and server[0] > 0):
        failures.append(f"{rid}: the server's system calls per request are {server}")
    if variant == "epoll" and server and server[0] < 1:
        failures.append(f"{rid}: the server over epoll makes {server[0]:.3f} system calls a request, under one")
    uring = summaries.get(rid.replace(f":{variant}/", ":uring/"), {}).get("server_syscalls_per_request")
    if variant == "epoll" and server and uring and uring[0] >= server[0]:
        failures.append(f"{rid}: over io_uring the server makes {uring[0]:.3f} system calls a request, not fewer "
                        f"than over epoll's {server[0]:.3f}")
    return failures


WRAPPER = """#!{python}
# A server or client that drops its variant's flags before it runs.
import os, sys
real, out, skip = {real!r}, [], False
for a in sys.argv[1:]:
    if skip:
        skip = False
    elif a in {dropped!r}:
        skip = True
    else:
        out.append(a)
os.execv(real, [real] + out)
"""


def lying_build(build, dropped):
    """A build directory whose server and client are wrappers that drop the
    flags named for each (none: the real binary, linked)."""
    fake = tempfile.mkdtemp(prefix="ringhttp-bench-liar.")
    for name in ("server", "client"):
        os.makedirs(os.path.join(fake, name))
        real, path = os.path.join(build, name, name), os.path.join(fake, name, name)
        if not dropped.get(name):
            os.symlink(real, path)
            continue
        with open(path, "w") as f:
            f.write(WRAPPER.format(python=sys.executable, real=real, dropped=dropped[name]))
        os.chmod(path, 0o755)
    return fake


def check_liars(build, dropped, rows, what):
    """The harness on a lying build: exit 1, each row named as failed and
    its failure saying who (rows: {row: who}) is not the variant asked for."""
    out_dir = tempfile.mkdtemp(prefix="ringhttp-bench-liar-out.")
    bench = observe.start_bench(lying_build(build, dropped), out_dir, "--compare", AXES, "--only", ",".join(rows),
                                "--iterations", "1", "--warmup", "0", "--duration", "1", "--connections", "8",
                                "--idle-connections", "0", "--cool-down", "0")
    out, err = bench.communicate(timeout=BENCH_WAIT_S)
    failures = []
    if bench.returncode != 1:
        failures.append(f"against {what} the harness exited {bench.returncode}, not 1:\n{err}")
    prefix = "bench: FAILED rows: "
    named = next((line[len(prefix):].split(", ") for line in err.splitlines() if line.startswith(prefix)), [])
    for row, who in rows.items():
        if row not in named:
            failures.append(f"{row} is not named as failed:\n{err}")
        elif f"  {row}: {who} is not the variant asked for" not in err:
            failures.append(f"{row}: the failure does not say the variant is not running:\n{err}")
    print(("ok" if not failures else "FAIL") + f"    {what} fails those rows")
    return failures


def check_lying_server(build):
    rows = {"ringhttp:5.19/plaintext": "ringhttp:5.19", "ringhttp:6.1/plaintext": "ringhttp:6.1",
            "ringhttp:zc/plaintext": "ringhttp:zc", "ringhttp:2-shards/plaintext": "ringhttp:2-shards",
            "ringhttp:epoll/plaintext": "ringhttp:epoll"}
    return check_liars(build, {"server": ("--uring", "--shards", "--cpus", "--send", "--backend")}, rows,
                       "a server that drops its variant's flags")


def check_lying_client(build):
    rows = {"ringhttp:client-epoll/plaintext": "ringhttp:client-epoll's client"}
    return check_liars(build, {"client": ("--backend",)}, rows, "a client that drops --backend")


def main():
    return observe.run_checks(check_running_variants, check_lying_server, check_lying_client)


if __name__ == "__main__":
    sys.exit(main())
