#!/usr/bin/env python3
"""The TLS rows, the handshake rows and --also-client, without load.

1. The target (bench/harness/summary.py's judge_targets) on figures made up
   here: the client's CPU per request at 0.53x and at exactly 0.6x wrk's
   (met), at 0.87x (NOT MET), each line with both figures and the ratio;
   wrk's row that did not run (not judged, named); wrk's row is the
   target's control, added to a run that selects the TLS row.
2. The rows: nginx-tls/plaintext and nginx-tls/handshake, each with a /wrk
   copy, none in the default run (which is what it was); --only tls is
   exactly them and the same two loads over plain HTTP.
3. The commands, built for each row as the harness builds them: the
   client over HTTPS trusts the run's CA (--cacert, never -k), checks every
   status and body, and at one request per connection says
   --requests-per-connection 1; wrk has the same connections and one thread,
   an https:// URL, and Connection: close on the handshake row only; the
   plain rows' commands have no TLS option at all. An --also-client row runs
   its own binary with the same arguments.
4. The CA: made by the openssl command in the run's private directory (not
   readable by others), the server's certificate verifies against it for
   127.0.0.1 (openssl verify, and Python's ssl), nginx accepts the
   rendered configuration (nginx -t) with " ssl" on its listener and no
   placeholder left; the plain nginx configuration has no TLS in it; the
   directory is gone after Context.remove(), and after a harness run whose
   nginx (a fake that exits at start) was given the CA's certificate.
5. The figures: nginx's connection log read on made-up lines (a line being
   written is not counted), the difference between two readings, the
   handshake figures from made-up counts and CPU, and the client's report
   turned into them; --also-client refused when malformed (exit 2) and its
   comparison line on made-up figures.

Nothing here loads a server. Usage: tls_test.py --build DIR (meson test runs it)
"""
import os
import shutil
import ssl
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
from harness.cli import parse_args  # noqa: E402
from harness.context import Context  # noqa: E402
from harness.rows import DEFAULT_ROWS, GROUPS, all_rows, also_client_rows, select  # noqa: E402
from harness.runs import client_argv, client_connection_figures, wrk_argv  # noqa: E402
from harness.servers import Nginx, NginxTls  # noqa: E402
from harness.summary import client_comparison, judge_targets, target_controls  # noqa: E402
from harness.tls import connection_log, handshake_figures, log_difference  # noqa: E402

TLS_ROW, WRK_ROW = "nginx-tls/plaintext", "nginx-tls/plaintext/wrk"
HANDSHAKE_ROW, HANDSHAKE_WRK_ROW = "nginx-tls/handshake", "nginx-tls/handshake/wrk"
PORT, SERVER_PID = 4433, 4242   # made up: nothing listens there
CONNECTIONS = 32
DEFAULT_ROW_COUNT = 17          # the default run before the TLS rows: they must not join it


def summary(row, **figures):
    """A summary as summarize() makes it: each figure a (median, min, max)."""
    s = {"row": row, "rps": None, "client_cpu_us": None, "server_cpu_us": None}
    s.update({k: (v, v, v) if v is not None else None for k, v in figures.items()})
    return s


def context(build, *args):
    return Context(parse_args(["--build", build, "--idle-connections", "0", "--connections", str(CONNECTIONS),
                               *args]))


def check_target(_build):
    failures = []
    cases = [  # ours, wrk's: verdict, what the line must show
        (8.0, 15.0, "met", ["8.000 µs", "15.000", "0.53×"]),
        (6.0, 10.0, "met", ["6.000 µs", "10.000", "0.60×"]),
        (13.483, 15.419, "NOT MET", ["13.483 µs", "15.419", "0.87×"]),
    ]
    for ours, wrk, verdict, shown in cases:
        got = [t for t in judge_targets({TLS_ROW: summary(TLS_ROW, client_cpu_us=ours),
                                         WRK_ROW: summary(WRK_ROW, client_cpu_us=wrk)}) if t["row"] == TLS_ROW]
        if len(got) != 1 or got[0]["verdict"] != verdict or f": {verdict} (" not in got[0]["line"]:
            failures.append(f"ours {ours} against wrk's {wrk}: expected {verdict}: {got}")
            continue
        line = got[0]["line"]
        missing = [x for x in shown + ["≤ 0.60×", WRK_ROW, "client CPU µs/req"] if x not in line]
        if missing:
            failures.append(f"ours {ours}, wrk's {wrk}: {missing} not in the line: {line}")
    got = [t for t in judge_targets({TLS_ROW: summary(TLS_ROW, client_cpu_us=5.0)}) if t["row"] == TLS_ROW]
    if len(got) != 1 or got[0]["verdict"] != "not judged" or f"row {WRK_ROW} did not run" not in got[0]["line"]:
        failures.append(f"wrk's row missing: {got}")
    if [t for t in judge_targets({WRK_ROW: summary(WRK_ROW, client_cpu_us=5.0)}) if t["row"] == TLS_ROW]:
        failures.append("the target printed without its row")
    if WRK_ROW not in target_controls({TLS_ROW}) or WRK_ROW in target_controls({TLS_ROW, WRK_ROW}):
        failures.append(f"control rows: {target_controls({TLS_ROW})}, {target_controls({TLS_ROW, WRK_ROW})}")
    print(("ok" if not failures else "FAIL") + "    the client at most 0.6x wrk's CPU over TLS: met, NOT MET and not "
          "judged on made-up figures; wrk's row is its control")
    return failures


def check_rows(_build):
    failures = []
    rows = all_rows([])
    ids = [r.id for r in rows]
    for rid in (TLS_ROW, WRK_ROW, HANDSHAKE_ROW, HANDSHAKE_WRK_ROW, "nginx/handshake"):
        if rid not in ids:
            failures.append(f"no row {rid}: {ids}")
    default = [r.id for r in select(rows, "")]
    if sorted(default) != sorted(DEFAULT_ROWS) or len(default) != DEFAULT_ROW_COUNT:
        failures.append(f"the default run changed: {sorted(set(default) ^ set(DEFAULT_ROWS))}, {len(default)} rows")
    if any("handshake" in rid or "tls" in rid for rid in default):
        failures.append(f"a TLS or handshake row in the default run: {default}")
    chosen = [r.id for r in select(rows, "tls")]
    if sorted(chosen) != sorted(GROUPS["tls"]) or sorted(chosen) != sorted(
            [TLS_ROW, WRK_ROW, HANDSHAKE_ROW, HANDSHAKE_WRK_ROW, "nginx/plaintext", "nginx/handshake"]):
        failures.append(f"--only tls chose {chosen}")
    by_id = {r.id: r for r in rows}
    if by_id[HANDSHAKE_ROW].workload.requests_per_connection != 1 or by_id[TLS_ROW].workload.requests_per_connection:
        failures.append("the handshake row is not one request per connection, or the TLS row is not kept alive")
    if not by_id[TLS_ROW].server.tls or by_id["nginx/plaintext"].server.tls:
        failures.append("nginx-tls is not TLS, or nginx is")
    copies = [r.id for r in also_client_rows([by_id[TLS_ROW], by_id[WRK_ROW], by_id["ringhttp/plaintext"]],
                                             ["before"])]
    if copies != [TLS_ROW, f"{TLS_ROW}/before", WRK_ROW, "ringhttp/plaintext", "ringhttp/plaintext/before"]:
        failures.append(f"--also-client's rows: {copies}")
    print(("ok" if not failures else "FAIL") + "    the TLS and handshake rows and their wrk copies, out of the "
          "default run; --only tls; --also-client's copies")
    return failures


def check_commands(build):
    failures = []
    ctx = context(build, "--also-client", f"before={sys.executable}")
    try:
        by_id = {r.id: r for r in all_rows([])}
        ca = ctx.certificates().ca
        for rid, url, per_connection in ((TLS_ROW, f"https://127.0.0.1:{PORT}/plaintext", False),
                                         (HANDSHAKE_ROW, f"https://127.0.0.1:{PORT}/plaintext", True),
                                         ("nginx/handshake", f"http://127.0.0.1:{PORT}/plaintext", True),
                                         ("nginx/plaintext", f"http://127.0.0.1:{PORT}/plaintext", False)):
            argv = client_argv(ctx, by_id[rid], PORT, SERVER_PID)
            tls = rid.startswith("nginx-tls/")
            if argv[-1] != url or argv[3] != ctx.client:
                failures.append(f"{rid}: the client is not the build's or not sent to {url}: {argv}")
            if tls != ("--cacert" in argv) or (tls and observe.arg_after(argv, "--cacert") != ca):
                failures.append(f"{rid}: --cacert {'missing or not the run CA' if tls else 'over plain HTTP'}: {argv}")
            if "-k" in argv or "--insecure" in argv:
                failures.append(f"{rid}: the client does not verify: {argv}")
            if observe.arg_after(argv, "--expect-status") != "200" or "--expect-body-file" not in argv:
                failures.append(f"{rid}: not every status and body checked: {argv}")
            own = argv[4:]  # the client's own arguments, after taskset's
            if observe.arg_after(own, "--server-pid") != str(SERVER_PID) or observe.arg_after(own, "-c") != str(
                    CONNECTIONS) or observe.arg_after(own, "-t") != "1" or argv[:3] != ["taskset", "-c", "1"]:
                failures.append(f"{rid}: not the run's connections, one thread, the server's CPU: {argv}")
            if (observe.arg_after(argv, "--requests-per-connection") == "1") != per_connection or (
                    not per_connection and "--requests-per-connection" in argv):
                failures.append(f"{rid}: --requests-per-connection {'missing' if per_connection else 'given'}: "
                                f"{argv}")
        for rid, closes in ((WRK_ROW, False), (HANDSHAKE_WRK_ROW, True)):
            argv = wrk_argv(ctx, by_id[rid], PORT, 10, True)
            if argv[3:6] != ["wrk", "-t1", f"-c{CONNECTIONS}"] or argv[-1] != f"https://127.0.0.1:{PORT}/plaintext":
                failures.append(f"{rid}: not one thread, the run's connections, https: {argv}")
            if (observe.arg_after(argv, "-H") == "Connection: close") != closes or (not closes and "-H" in argv):
                failures.append(f"{rid}: Connection: close {'missing' if closes else 'given'}: {argv}")
        before = also_client_rows([by_id[TLS_ROW]], ["before"])[1]
        argv, ours = client_argv(ctx, before, PORT, SERVER_PID), client_argv(ctx, by_id[TLS_ROW], PORT, SERVER_PID)
        if argv[3] != os.path.realpath(sys.executable) or argv[:3] + argv[4:] != ours[:3] + ours[4:]:
            failures.append(f"an --also-client row: {argv} against {ours}")
    finally:
        ctx.remove()
    print(("ok" if not failures else "FAIL") + "    commands: --cacert the run's CA (never -k), every answer checked, "
          "--requests-per-connection 1 and wrk's Connection: close on the handshake rows only")
    return failures


def check_certificates(build):
    failures = []
    if not shutil.which("openssl"):
        print("skip  the CA: no openssl command")
        return failures
    ctx = context(build)
    directory = None
    try:
        made = ctx.certificates()
        directory = made.directory
        if not directory.startswith(ctx.bodies_dir + os.sep):
            failures.append(f"the CA is not in the run's private directory {ctx.bodies_dir}: {directory}")
        for d in (ctx.bodies_dir, directory):
            if stat.S_IMODE(os.stat(d).st_mode) & 0o077:
                failures.append(f"{d} is open to others: {oct(os.stat(d).st_mode)}")
        if ctx.certificates() is not made:
            failures.append("the CA was made twice in one run")
        r = subprocess.run(["openssl", "verify", "-CAfile", made.ca, made.certificate], capture_output=True, text=True)
        if r.returncode != 0 or ": OK" not in r.stdout:
            failures.append(f"openssl verify: {r.stdout}{r.stderr}")
        r = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", made.certificate],
                           capture_output=True, text=True)
        if "IP Address:127.0.0.1" not in r.stdout:
            failures.append(f"the certificate is not for 127.0.0.1: {r.stdout}{r.stderr}")
        try:  # Python's own verification, as the harness's start-up check and workloads_test.py do it
            ssl.create_default_context(cafile=made.ca).load_cert_chain(made.certificate, made.key)
        except (ssl.SSLError, OSError) as e:
            failures.append(f"the CA or the server's key and certificate do not load: {e}")
        failures += check_nginx_configs(ctx, made)
    except Exception as e:  # noqa: BLE001 - reported, and the directory still removed
        failures.append(f"making the CA: {type(e).__name__}: {e}")
    finally:
        ctx.remove()
    if directory and os.path.exists(directory) or os.path.exists(ctx.bodies_dir):
        failures.append(f"{ctx.bodies_dir} is still there after Context.remove()")
    failures += check_removed_after_a_run(build)
    print(("ok" if not failures else "FAIL") + "    the run's CA: made by openssl, private, verifies the server for "
          "127.0.0.1, accepted by nginx -t; removed with the run")
    return failures


def check_nginx_configs(ctx, made):
    failures = []
    rundirs = [tempfile.mkdtemp(prefix="ringhttp-tls-test."), tempfile.mkdtemp(prefix="ringhttp-tls-test.")]
    try:
        for server, rundir in zip((NginxTls(), Nginx()), rundirs):
            argv, _ = server.command(ctx, PORT, rundir, None)
            with open(os.path.join(rundir, "nginx.conf")) as f:
                conf = f.read()
            tls = server.tls
            if "@" in conf.replace("$", ""):  # every placeholder is @NAME@; nginx's own text has no @
                failures.append(f"{server.name}: a placeholder left in its configuration")
            if (f"listen 127.0.0.1:{PORT} ssl backlog" in conf) != tls or ("ssl_certificate" in conf) != tls:
                failures.append(f"{server.name}: TLS {'missing' if tls else 'present'} in its configuration")
            if tls and (f"ssl_certificate {made.certificate};" not in conf or f"{made.key};" not in conf):
                failures.append(f"{server.name}: not the run's certificate and key")
            if shutil.which("nginx") and not server.missing(ctx):
                r = subprocess.run(argv + ["-t"], capture_output=True, text=True, timeout=30)
                if r.returncode != 0:
                    failures.append(f"{server.name}: nginx -t refuses its configuration: {r.stderr[-500:]}")
    finally:
        for d in rundirs:
            shutil.rmtree(d, ignore_errors=True)
    return failures


# Stands in for nginx on the PATH of one harness run: says it has TLS, and
# at start reports whether the certificate its configuration names exists,
# then exits 1 (the harness keeps the last lines of a failed start's stderr).
FAKE_NGINX = """#!/bin/sh
case "$1" in -v|-V) echo "nginx version: fake"; echo "configure arguments: --with-http_ssl_module"; exit 0;; esac
cert=$(sed -n 's/^ *ssl_certificate \\([^ ;]*\\);$/\\1/p' "$4")
[ -f "$cert" ] && echo "fake nginx: given the certificate $cert" >&2
exit 1
"""


def check_removed_after_a_run(build):
    """A harness run whose nginx-tls never starts (a fake nginx that exits
    1, after saying where the run's certificate is): the CA was made, the
    rows fail (exit 1), and nothing is left in its TMPDIR, the CA least of
    all. No load is sent."""
    tmp = tempfile.mkdtemp(prefix="ringhttp-tls-test-tmp.")
    fake_bin = os.path.join(tmp, "bin")
    os.mkdir(fake_bin)
    with open(os.path.join(fake_bin, "nginx"), "w") as f:
        f.write(FAKE_NGINX)
    os.chmod(os.path.join(fake_bin, "nginx"), 0o755)
    try:
        env = dict(os.environ, TMPDIR=tmp, PATH=fake_bin + os.pathsep + os.environ.get("PATH", ""))
        r = subprocess.run([sys.executable, observe.BENCH, "--build", build, "--only", TLS_ROW, "--iterations", "1",
                            "--idle-connections", "0", "--cool-down", "0", "--out", os.path.join(tmp, "out")],
                           capture_output=True, text=True, timeout=120, env=env)
        failures = []
        given = [w for w in (r.stdout + r.stderr).split() if w.endswith("server.pem")]
        if r.returncode != 1 or f"FAILED rows: {TLS_ROW}" not in r.stderr:
            failures.append(f"a run whose nginx-tls cannot start exited {r.returncode}: {r.stderr[-800:]}")
        if not given or not given[0].startswith(tmp + os.sep):
            failures.append(f"the fake nginx was not given a certificate made in the run: {r.stderr[-800:]}")
        elif os.path.exists(given[0]):
            failures.append(f"{given[0]} is still there after the run")
        left = sorted(set(os.listdir(tmp)) - {"bin", "out"})
        if left:
            failures.append(f"a run left {left} in its TMPDIR")
        return failures
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_figures(build):
    failures = []
    tmp = tempfile.mkdtemp(prefix="ringhttp-tls-test.")
    try:
        path = os.path.join(tmp, "tls-connections.log")
        with open(path, "w") as f:
            f.write(". TLSv1.3 TLS_AES_256_GCM_SHA384 X25519\n" + "r TLSv1.3 TLS_AES_256_GCM_SHA384 X25519\n" * 3
                    + ". TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256 prime256v1\nr TLSv1.3 TLS_AES")  # the last one unfinished
        before = connection_log(path)
        want = {"connections": 5, "resumed": 3, "negotiated": {"TLSv1.3 TLS_AES_256_GCM_SHA384 X25519": 4,
                                                                "TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256 prime256v1": 1}}
        if before != want:
            failures.append(f"the log read as {before}, not {want}")
        with open(path, "a") as f:
            f.write("_256_GCM_SHA384 X25519\nr TLSv1.3 TLS_AES_256_GCM_SHA384 X25519\n")
        if log_difference(connection_log(path), before) != {"connections": 2, "resumed": 2}:
            failures.append(f"the log's difference: {log_difference(connection_log(path), before)}")
        if connection_log(os.path.join(tmp, "none")) is not None:
            failures.append("no log read as a log")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    got = handshake_figures(10_000, 9_900, 10.0, 2.5, 3.0)
    want = {"handshakes": 10_000, "resumed": 9_900, "handshakes_per_s": 1000.0, "full_handshakes_per_s": 10.0,
            "resumed_handshakes_per_s": 990.0, "resumed_share": 0.99, "client_cpu_us_per_handshake": 250.0,
            "server_cpu_us_per_handshake": 300.0}
    if got != want:
        failures.append(f"handshake figures: {got}, not {want}")
    report = {"requests": 20_000, "duration_s": 10.0, "reconnects": 20_000, "client_cpu_us_per_request": 250.0,
              "server_cpu_us_per_request": 300.0,
              "tls": {"protocol": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384", "handshakes": 20_000,
                      "resumed": 19_872}}
    got = client_connection_figures(report, True)
    if (got["handshakes_per_s"], got["full_handshakes_per_s"], got["client_cpu_us_per_handshake"],
            got["server_cpu_us_per_handshake"], got["tls_cipher"]) != (2000.0, 12.8, 250.0, 300.0,
                                                                       "TLS_AES_256_GCM_SHA384"):
        failures.append(f"the client's report over TLS: {got}")
    got = client_connection_figures(dict(report, requests=2_000_000), True, False)  # kept alive: a few reconnects
    if got["client_cpu_us_per_handshake"] is not None or got["server_cpu_us_per_handshake"] is not None:
        failures.append(f"CPU per handshake on a kept-alive row, where a few connections carry the run: {got}")
    got = client_connection_figures(dict(report, tls=None), False)
    if got["handshakes_per_s"] != 2000.0 or got["resumed"] != 0:
        failures.append(f"the client's report over plain HTTP (reconnects): {got}")
    for bad in ("before", "=x", "wrk=" + sys.executable, "Before=" + sys.executable, "x=/nonexistent/client"):
        r = subprocess.run([sys.executable, observe.BENCH, "--build", build, "--also-client", bad, "--list"],
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 2 or "--also-client" not in r.stderr:
            failures.append(f"--also-client {bad}: exit {r.returncode}: {r.stderr[-300:]}")
    row = also_client_rows([r for r in all_rows([]) if r.id == "ringhttp/plaintext"], ["before"])[1]
    lines = client_comparison(row, {"ringhttp/plaintext": summary("ringhttp/plaintext", client_cpu_us=2.2,
                                                                  server_cpu_us=2.4, rps=400_000.0),
                                    row.id: summary(row.id, client_cpu_us=2.0, server_cpu_us=2.4, rps=400_000.0)})
    if len(lines) != 1 or not all(x in lines[0] for x in ("2.200", "before's 2.000", "(1.100×)", "(1.000×)")):
        failures.append(f"the clients' comparison: {lines}")
    print(("ok" if not failures else "FAIL") + "    nginx's connection log, the handshake figures, the client's report "
          "read; --also-client refused when malformed, compared when run")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(check_target, check_rows, check_commands, check_certificates, check_figures))
