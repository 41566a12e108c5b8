#!/usr/bin/env python3
"""The HTTP/2 rows: nginx and h2o over h2 on TLS, driven by the client and by h2load.

1. h2load's report read (bench/harness/h2load.py's parse_h2load) on its
   own output and on made-up variations of it: requests, rate, bytes,
   mean latency, the protocol it negotiated; each of failed, errored and
   timed-out requests counted in its class, and answers that are not 2xx
   (3xx included, which h2load calls a success) in `status`; a report
   without its requests line is no report.
2. The rows: nginx-h2 and h2o-h2 on plaintext, each with an /h2load copy;
   --only h2 is exactly these four, --only h2load the two copies; none is
   in the default run (which is what it was). The target on made-up
   figures: the client at 0.50x and exactly 0.70x h2load's CPU per request
   (met), at 0.80x (NOT MET), h2load's row not run (not judged, and added
   as the control); the generators' line names h2load.
3. The commands: the client with --http2 --max-streams 16, the run's CA
   and its connections; h2load with the same connections, -m 16, one
   thread, -D and --warm-up-time (none without a warm-up), both pinned to
   CPU 1, over https://, both offering the same TLS 1.3 suite alone. nginx-h2's configuration has http2 on its TLS
   listener and nginx -t accepts it; nginx-tls's has no http2.
4. The servers, started as the harness starts them: each chooses h2 when
   a client offers it by ALPN (verified against the run's CA), and
   HTTP/1.1 for one that offers only that (the harness's own start-up
   check).
5. A short run of --only h2: exit 0, every row with its rate, client and
   server CPU per request and no error, the client's report saying h2,
   h2load having negotiated h2, both targets judged.
6. A peer that fails requests: nginx-h2 whose /plaintext answers 500 (the
   real nginx behind a stand-in on the PATH that edits its configuration):
   the harness exits 1 naming both rows, and the h2load row's run counts
   the answers in its `status` class.

Usage: h2_test.py --build DIR (meson test runs it)
"""
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
from harness_fixtures import make_context, summary  # noqa: E402
from harness.h2load import h2load_argv, parse_h2load  # noqa: E402
from harness.processes import Running  # noqa: E402
from harness.rows import DEFAULT_ROWS, GROUPS, all_rows, select  # noqa: E402
from harness.runs import client_argv  # noqa: E402
from harness.servers import H2oH2, NginxH2, NginxTls  # noqa: E402
from harness.summary import generator_comparison, judge_targets, target_controls  # noqa: E402

NGINX_ROW, NGINX_H2LOAD = "nginx-h2/plaintext", "nginx-h2/plaintext/h2load"
H2O_ROW, H2O_H2LOAD = "h2o-h2/plaintext", "h2o-h2/plaintext/h2load"
H2_ROWS = [NGINX_ROW, NGINX_H2LOAD, H2O_ROW, H2O_H2LOAD]
PORT, SERVER_PID = 4433, 4242   # made up: nothing listens there
CONNECTIONS = 8
SUITE = "TLS_AES_128_GCM_SHA256"  # the one TLS 1.3 suite both generators offer (docs/BENCHMARKING.md)
DEFAULT_ROW_COUNT = 17          # the default run before the HTTP/2 rows: they must not join it
RUN_TIMEOUT_S = 120             # a harness run of a few 1 s rows

# h2load 1.52's report of a clean run against nginx-h2 (its progress lines cut).
CLEAN = """finished in 3.01s, 26488.00 req/s, 1.89MB/s
requests: 52976 total, 52976 started, 52976 done, 52976 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 52976 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 3.79MB (3973200) total, 2.32MB (2434916) headers (space savings 52.17%), 702.55KB (719407) data
                     min         max         mean         sd        +/- sd
time for request:       94us    564.90ms      5.33ms     27.72ms    99.76%
"""
ALPN = "TLS Protocol: TLSv1.3\nCipher: TLS_AES_128_GCM_SHA256\nApplication protocol: h2\n"


def missing():
    for tool, package in (("h2load", "nghttp2-client"), ("nginx", "nginx-light"), ("h2o", "h2o"),
                          ("openssl", "openssl")):
        if not shutil.which(tool):
            return f"{tool} is not installed: apt-get install {package} (tools/install-deps.sh does it)"
    return None


def context(build, *args):
    return make_context(build, CONNECTIONS, *args)


def check_parse(_build):
    failures = []
    got = parse_h2load(ALPN + CLEAN)
    want = {"requests": 52976, "rps": 26488.0, "bytes_per_s": 1.89 * 2 ** 20, "latency_mean_ms": 5.33,
            "protocol": "h2", "errors": 0, "error_classes": {}, "p50_ms": None, "p99_ms": None, "p999_ms": None}
    if got != want:
        failures.append(f"a clean report read as {got}, not {want}")
    # What replaces what in the clean report: the error classes it must give
    # and the row's errors (the requests done without a 2xx answer; h2load's
    # failed holds its errored and timed-out requests and its 4xx and 5xx).
    requests, answers = "0 failed, 0 errored, 0 timeout", "52976 2xx, 0 3xx, 0 4xx, 0 5xx"
    cases = [
        ((requests, "3 failed, 0 errored, 0 timeout"), {"failed": 3}, 3),
        ((requests, "2 failed, 2 errored, 0 timeout"), {"failed": 2, "errored": 2}, 2),
        ((requests, "5 failed, 5 errored, 5 timeout"), {"failed": 5, "errored": 5, "timeout": 5}, 5),
        ((answers, "52970 2xx, 0 3xx, 0 4xx, 6 5xx"), {"status": 6}, 6),
        ((answers, "52966 2xx, 4 3xx, 6 4xx, 0 5xx"), {"status": 10}, 10),
        (("status codes: " + answers + "\n", ""), {"status": 52976}, 52976),
    ]
    for (old, new), classes, errors in cases:
        got = parse_h2load(ALPN + CLEAN.replace(old, new))
        if not got or got["error_classes"] != classes or got["errors"] != errors:
            failures.append(f"{new!r}: read as {got and (got['error_classes'], got['errors'])}, not "
                            f"{classes}, {errors}")
    # h2load's own accounting of six 500s: failed, and not 2xx.
    got = parse_h2load(ALPN + CLEAN.replace(requests, "6 failed, 0 errored, 0 timeout").replace(
        answers, "52970 2xx, 0 3xx, 0 4xx, 6 5xx"))
    if not got or got["error_classes"] != {"failed": 6, "status": 6} or got["errors"] != 6:
        failures.append(f"six 500s read as {got and (got['error_classes'], got['errors'])}")
    got = parse_h2load(ALPN.replace(": h2", ": http/1.1") + CLEAN)
    if not got or got["protocol"] != "http/1.1":
        failures.append(f"the protocol h2load negotiated: {got and got['protocol']}")
    if parse_h2load(ALPN + "finished in 3.01s, 26488.00 req/s, 1.89MB/s\n") is not None:
        failures.append("a report without its requests line read as a report")
    print(("ok" if not failures else "FAIL") + "    h2load's report read: figures, protocol, failed, errored, timeout "
          "and non-2xx answers each in its class")
    return failures


def check_rows(_build):
    failures = []
    rows = all_rows([])
    ids = [r.id for r in rows]
    missing_rows = [rid for rid in H2_ROWS if rid not in ids]
    if missing_rows:
        failures.append(f"no rows {missing_rows}")
    default = [r.id for r in select(rows, "")]
    if sorted(default) != sorted(DEFAULT_ROWS) or len(default) != DEFAULT_ROW_COUNT:
        failures.append(f"the default run changed: {sorted(set(default) ^ set(DEFAULT_ROWS))}, {len(default)} rows")
    chosen = [r.id for r in select(rows, "h2")]
    if sorted(chosen) != sorted(GROUPS["h2"]) or sorted(chosen) != sorted(H2_ROWS):
        failures.append(f"--only h2 chose {chosen}")
    if [r.id for r in select(rows, "h2load")] != [NGINX_H2LOAD, H2O_H2LOAD]:
        failures.append(f"--only h2load chose {[r.id for r in select(rows, 'h2load')]}")
    by_id = {r.id: r for r in rows}
    if any(not by_id[rid].server.http2 or not by_id[rid].server.tls for rid in H2_ROWS if rid in by_id):
        failures.append("an HTTP/2 row's server is not HTTP/2 over TLS")
    if by_id["nginx-tls/plaintext"].server.http2 or by_id["h2o-tls/plaintext"].server.http2:
        failures.append("nginx-tls or h2o-tls is marked HTTP/2")
    for ours, theirs, verdict, shown in ((NGINX_ROW, NGINX_H2LOAD, "met", (5.0, 10.0, "0.50×")),
                                         (H2O_ROW, H2O_H2LOAD, "met", (7.0, 10.0, "0.70×")),
                                         (NGINX_ROW, NGINX_H2LOAD, "NOT MET", (8.0, 10.0, "0.80×"))):
        got = [t for t in judge_targets({ours: summary(ours, client_cpu_us=shown[0]),
                                         theirs: summary(theirs, client_cpu_us=shown[1])}) if t["row"] == ours]
        want = [f": {verdict} (", f"{shown[0]:.3f} µs", f"{shown[1]:.3f}", shown[2], "≤ 0.70×", theirs]
        if len(got) != 1 or got[0]["verdict"] != verdict or [x for x in want if x not in got[0]["line"]]:
            failures.append(f"{ours} at {shown[0]} against {shown[1]}: expected {verdict}: {got}")
    got = [t for t in judge_targets({NGINX_ROW: summary(NGINX_ROW, client_cpu_us=5.0)}) if t["row"] == NGINX_ROW]
    if len(got) != 1 or got[0]["verdict"] != "not judged" or f"row {NGINX_H2LOAD} did not run" not in got[0]["line"]:
        failures.append(f"h2load's row missing: {got}")
    if target_controls({NGINX_ROW, H2O_ROW}) != [NGINX_H2LOAD, H2O_H2LOAD] or target_controls(set(H2_ROWS)):
        failures.append(f"control rows: {target_controls({NGINX_ROW, H2O_ROW})}, {target_controls(set(H2_ROWS))}")
    lines = generator_comparison([by_id[NGINX_H2LOAD]], {
        NGINX_ROW: summary(NGINX_ROW, client_cpu_us=6.0, rps=100_000.0),
        NGINX_H2LOAD: summary(NGINX_H2LOAD, client_cpu_us=10.0, rps=80_000.0)})
    if lines != [f"Generators on {NGINX_ROW}: ringhttp's client 6.00 µs/req of its own CPU, h2load 10.00 (0.60×); "
                 "req/s 1.25× h2load's."]:
        failures.append(f"the generators' line: {lines}")
    print(("ok" if not failures else "FAIL") + "    the HTTP/2 rows and their h2load copies, --only h2, out of the "
          "default run; the client at most 0.7x h2load's CPU: met, NOT MET, not judged; the generators' line")
    return failures


def check_commands(build):
    failures = []
    ctx = context(build, "--warmup", "2", "--duration", "5")
    rundirs = [tempfile.mkdtemp(prefix="ringhttp-h2-test."), tempfile.mkdtemp(prefix="ringhttp-h2-test.")]
    try:
        by_id = {r.id: r for r in all_rows([])}
        for rid in (NGINX_ROW, H2O_ROW):
            argv = client_argv(ctx, by_id[rid], PORT, SERVER_PID)
            own = argv[4:]
            if (argv[:3] != ["taskset", "-c", "1"] or observe.arg_after(own, "--max-streams") != "16"
                    or "--http2" not in own or observe.arg_after(own, "-c") != str(CONNECTIONS)
                    or observe.arg_after(own, "--cacert") != ctx.certificates().ca or "-k" in own
                    or observe.arg_after(own, "--tls13-ciphers") != SUITE
                    or argv[-1] != f"https://127.0.0.1:{PORT}/plaintext"):
                failures.append(f"{rid}: not --http2 --max-streams 16 with the run's CA, connections and cipher: "
                                f"{argv}")
        for rid in (NGINX_H2LOAD, H2O_H2LOAD):
            argv = h2load_argv(ctx, by_id[rid], PORT)
            want = ["taskset", "-c", "1", "h2load", "-c", str(CONNECTIONS), "-m", "16", "-t", "1", "--tls13-ciphers",
                    SUITE, "-D", "5", "--warm-up-time", "2", f"https://127.0.0.1:{PORT}/plaintext"]
            if argv != want:
                failures.append(f"{rid}: {argv}, not {want}")
        cold = context(build, "--warmup", "0", "--duration", "1")
        try:
            if "--warm-up-time" in h2load_argv(cold, by_id[NGINX_H2LOAD], PORT):
                failures.append("h2load given --warm-up-time with no warm-up")
        finally:
            cold.remove()
        for server, rundir in zip((NginxH2(), NginxTls()), rundirs):
            argv, _ = server.command(ctx, PORT, rundir, None)
            with open(os.path.join(rundir, "nginx.conf")) as f:
                conf = f.read()
            h2 = f"listen 127.0.0.1:{PORT} ssl http2 backlog" in conf
            if h2 != server.http2 or ("http2" in conf) != server.http2:
                failures.append(f"{server.name}: http2 {'missing from' if server.http2 else 'in'} its configuration")
            if not server.missing(ctx):
                r = subprocess.run(argv + ["-t"], capture_output=True, text=True, timeout=30)
                if r.returncode != 0:
                    failures.append(f"{server.name}: nginx -t refuses its configuration: {r.stderr[-500:]}")
    finally:
        ctx.remove()
        for d in rundirs:
            shutil.rmtree(d, ignore_errors=True)
    print(("ok" if not failures else "FAIL") + "    commands: the client --http2 --max-streams 16 with the run's CA, "
          "h2load with the same connections, -m 16, one thread, CPU 1, both on one TLS 1.3 suite; nginx-h2's "
          "listener has http2")
    return failures


def negotiated(port, ca, offered):
    """The protocol a TLS server chooses from `offered` by ALPN, the
    certificate verified against the run's CA for 127.0.0.1."""
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(offered)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            return s.selected_alpn_protocol()


def check_alpn(build):
    failures = []
    ctx = context(build)
    try:
        for server in (NginxH2(), H2oH2()):
            running = Running(ctx, server)
            try:
                for offered, want in ((["h2", "http/1.1"], "h2"), (["http/1.1"], "http/1.1")):
                    got = negotiated(running.port, ctx.certificates().ca, offered)
                    if got != want:
                        failures.append(f"{server.name} offered {offered} chose {got}, not {want}")
            finally:
                running.stop()
    finally:
        ctx.remove()
    print(("ok" if not failures else "FAIL") + "    nginx-h2 and h2o-h2 choose h2 by ALPN, HTTP/1.1 for a client that "
          "offers only that; their certificate verifies against the run's CA")
    return failures


def run_harness(build, out, *args, env=None):
    cmd = [sys.executable, observe.BENCH, "--build", build, "--out", out, "--iterations", "1", "--warmup", "1",
           "--duration", "1", "--idle-connections", "0", "--connections", str(CONNECTIONS), "--cool-down", "0",
           *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=env)
    results = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".json")] if os.path.isdir(out) else []
    report = None
    if results:
        with open(results[0]) as f:
            report = json.load(f)
    return r, report


def check_run(build):
    failures = []
    out = tempfile.mkdtemp(prefix="ringhttp-h2-test.")
    try:
        r, report = run_harness(build, out, "--only", "h2")
        if r.returncode != 0 or not report:
            return [f"--only h2 exited {r.returncode}:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"]
        summaries = {s["row"]: s for s in report["summaries"]}
        if sorted(summaries) != sorted(H2_ROWS):
            failures.append(f"--only h2 ran {sorted(summaries)}")
        for rid, s in summaries.items():
            if s["errors"] or not s["rps"] or not s["client_cpu_us"] or not s["server_cpu_us"]:
                failures.append(f"{rid}: a figure missing or errors counted: {s}")
        for rid in (NGINX_ROW, H2O_ROW):
            run = (report["runs"].get(rid) or [{}])[0]
            protocol = ((run.get("client") or {}).get("options") or {}).get("protocol")
            if protocol != "h2":
                failures.append(f"{rid}: the client's report says protocol {protocol}")
        for rid in (NGINX_H2LOAD, H2O_H2LOAD):
            run = (report["runs"].get(rid) or [{}])[0]
            if run.get("protocol") != "h2" or "Application protocol: h2" not in run.get("h2load", ""):
                failures.append(f"{rid}: h2load negotiated {run.get('protocol')}")
        judged = {t["row"]: t["verdict"] for t in report["targets"]}
        if judged.get(NGINX_ROW) not in ("met", "NOT MET") or judged.get(H2O_ROW) not in ("met", "NOT MET"):
            failures.append(f"the HTTP/2 targets were not judged: {report['targets']}")
        if "h2load version" not in report["environment"]:
            failures.append(f"the environment names no h2load: {sorted(report['environment'])}")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(("ok" if not failures else "FAIL") + "    --only h2 runs: every row's rate, client and server CPU, no error; "
          "h2 spoken by both generators; both targets judged")
    return failures


# Stands in for nginx on the PATH of one harness run: the real nginx, with
# its configuration's plaintext answer (given with -c, the fourth
# argument) made a 500. Its -V and -t pass straight through.
FAKE_NGINX = """#!/bin/sh
if [ "$1" = "-p" ]; then
  sed -i 's/return 200 "Hello, World!";/return 500 "Hello, World!";/' "$4"
fi
exec {nginx} "$@"
"""


def check_failing_peer(build):
    failures = []
    tmp = tempfile.mkdtemp(prefix="ringhttp-h2-test.")
    try:
        fake_bin = os.path.join(tmp, "bin")
        os.mkdir(fake_bin)
        with open(os.path.join(fake_bin, "nginx"), "w") as f:
            f.write(FAKE_NGINX.format(nginx=shutil.which("nginx")))
        os.chmod(os.path.join(fake_bin, "nginx"), 0o755)
        env = dict(os.environ, PATH=fake_bin + os.pathsep + os.environ.get("PATH", ""))
        # It never answers rightly, so it has no cold start: 2 s is enough to find that out.
        r, report = run_harness(build, os.path.join(tmp, "out"), "--only", "nginx-h2", "--start-wait", "2", env=env)
        if r.returncode != 1 or f"FAILED rows: {NGINX_ROW}, {NGINX_H2LOAD}" not in r.stderr:
            failures.append(f"a peer answering 500: the harness exited {r.returncode}:\n{r.stderr[-2000:]}")
        run = ((report or {}).get("runs", {}).get(NGINX_H2LOAD) or [{}])[0]
        if not (run.get("error_classes") or {}).get("status") or "status " not in run.get("failure", ""):
            failures.append(f"h2load's row against a peer answering 500: {run.get('failure')}, "
                            f"{run.get('error_classes')}")
        run = ((report or {}).get("runs", {}).get(NGINX_ROW) or [{}])[0]
        if not (run.get("error_classes") or {}).get("status"):
            failures.append(f"the client's row against a peer answering 500: {run.get('failure')}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(("ok" if not failures else "FAIL") + "    a peer answering 500 over h2: exit 1 naming both rows, h2load's "
          "answers counted as status errors")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(check_parse, check_rows, check_commands, check_alpn, check_run, check_failing_peer,
                                missing=missing))
