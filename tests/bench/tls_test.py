#!/usr/bin/env python3
"""The TLS rows, the handshake rows and --also-client, without load.

1. The targets (bench/harness/summary.py's judge_targets) on figures made
   up here: the client's CPU per request at 0.53x and at exactly 0.6x wrk's
   (met), at 0.87x (NOT MET), each line with both figures and the ratio;
   wrk's row that did not run (not judged, named); wrk's row is the
   target's control, added to a run that selects the TLS row. ringhttp-tls's
   server CPU per request against nginx-tls's: kept alive at 0.60x and
   exactly 0.80x (met) and 0.90x (NOT MET), per handshake at exactly 1.00x
   (met) and 1.10x (NOT MET); nginx-tls's rows not run (not judged) and
   added as the controls; the connection notes' comparison line with the
   goals, and what TLS adds to each server's load (ringhttp's and the
   peers') against the plain row.
2. The rows: nginx-tls/plaintext and nginx-tls/handshake, each with a /wrk
   copy, none in the default run (which is what it was); --only tls is
   exactly them, ringhttp-tls's plaintext, json and handshake rows,
   h2o-tls's plaintext, json and handshake rows, node-tls's plaintext and
   json rows, and the same loads over plain HTTP where the plain server has
   them (h2o has no handshake row).
3. The commands, built for each row as the harness builds them: the
   client over HTTPS trusts the run's CA (--cacert, never -k), checks every
   status and body, and at one request per connection says
   --requests-per-connection 1; wrk has the same connections and one thread,
   an https:// URL, and Connection: close on the handshake row only; the
   plain rows' commands have no TLS option at all. An --also-client row runs
   its own binary with the same arguments. node-tls runs node_http.js with
   the run's certificate and key after the port; node's command has none.
4. The CA: made by the openssl command in the run's private directory (not
   readable by others), the server's certificate verifies against it for
   127.0.0.1 (openssl verify, and Python's ssl), nginx accepts the
   rendered configuration (nginx -t) with " ssl" on its listener and no
   placeholder left; the plain nginx configuration has no TLS in it; h2o
   accepts h2o-tls's (h2o -t): the run's certificate and key on its
   listener, neverbleed off and no OCSP fetching (each would be a process
   beside the server), tickets on, no placeholder left, and h2o's has no
   TLS; the directory is gone after Context.remove(), and after a harness
   run whose nginx (a fake that exits at start) was given the CA's
   certificate.
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
from harness_fixtures import make_context, summary  # noqa: E402
from harness.rows import DEFAULT_ROWS, GROUPS, all_rows, also_client_rows, select  # noqa: E402
from harness.runs import client_argv, client_connection_figures, wrk_argv  # noqa: E402
from harness.render import connection_notes  # noqa: E402
from harness.servers import H2o, H2oTls, Nginx, NginxTls, Node, NodeTls  # noqa: E402
from harness.summary import client_comparison, judge_targets, target_controls  # noqa: E402
from harness.tls import connection_log, handshake_figures, log_difference  # noqa: E402

TLS_ROW, WRK_ROW = "nginx-tls/plaintext", "nginx-tls/plaintext/wrk"
HANDSHAKE_ROW, HANDSHAKE_WRK_ROW = "nginx-tls/handshake", "nginx-tls/handshake/wrk"
OURS_ROW, OURS_HANDSHAKE_ROW = "ringhttp-tls/plaintext", "ringhttp-tls/handshake"
OURS_FULL_ROW, NGINX_FULL_ROW = "ringhttp-tls/handshake-full", "nginx-tls/handshake-full"
PORT, SERVER_PID = 4433, 4242   # made up: nothing listens there
CONNECTIONS = 32
DEFAULT_ROW_COUNT = 17          # the default run before the TLS rows: they must not join it


def context(build, *args):
    return make_context(build, CONNECTIONS, *args)


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


def check_server_targets(_build):
    """ringhttp-tls's server CPU per request against nginx-tls's, kept alive
    (at most 0.80x) and with a full handshake per request (at most 1.00x)."""
    failures = []
    cases = [  # row, nginx-tls's row, ours, nginx's: verdict, what the line must show
        (OURS_ROW, TLS_ROW, "≤ 0.80×", 2.4, 4.0, "met", ["2.400 µs", "4.000", "0.60×"]),
        (OURS_ROW, TLS_ROW, "≤ 0.80×", 3.2, 4.0, "met", ["3.200 µs", "4.000", "0.80×"]),
        (OURS_ROW, TLS_ROW, "≤ 0.80×", 3.6, 4.0, "NOT MET", ["3.600 µs", "4.000", "0.90×"]),
        (OURS_FULL_ROW, NGINX_FULL_ROW, "≤ 1.00×", 40.0, 40.0, "met", ["40.000 µs", "40.000", "1.00×"]),
        (OURS_FULL_ROW, NGINX_FULL_ROW, "≤ 1.00×", 44.0, 40.0, "NOT MET", ["44.000 µs", "40.000", "1.10×"]),
    ]
    for ours_row, nginx_row, goal, ours, nginx, verdict, shown in cases:
        got = [t for t in judge_targets({ours_row: summary(ours_row, server_cpu_us=ours),
                                         nginx_row: summary(nginx_row, server_cpu_us=nginx)})
               if t["row"] == ours_row]
        if len(got) != 1 or got[0]["verdict"] != verdict or f": {verdict} (" not in got[0]["line"]:
            failures.append(f"{ours_row} {ours} against nginx-tls's {nginx}: expected {verdict}: {got}")
            continue
        line = got[0]["line"]
        want = f"{ours_row} server CPU µs/req {goal} {nginx_row}'s"
        missing = [x for x in shown + [want] if x not in line]
        if missing:
            failures.append(f"{ours_row} {ours}, nginx-tls's {nginx}: {missing} not in the line: {line}")
    for ours_row, nginx_row in ((OURS_ROW, TLS_ROW), (OURS_FULL_ROW, NGINX_FULL_ROW)):
        got = [t for t in judge_targets({ours_row: summary(ours_row, server_cpu_us=3.0)}) if t["row"] == ours_row]
        if len(got) != 1 or got[0]["verdict"] != "not judged" or f"row {nginx_row} did not run" not in got[0]["line"]:
            failures.append(f"nginx-tls's row missing: {got}")
        if target_controls({ours_row}) != [nginx_row] or nginx_row in target_controls({ours_row, nginx_row}):
            failures.append(f"control rows of {ours_row}: {target_controls({ours_row})}, "
                            f"{target_controls({ours_row, nginx_row})}")
    if [t for t in judge_targets({TLS_ROW: summary(TLS_ROW, server_cpu_us=4.0)}) if t["row"] == OURS_ROW]:
        failures.append("the server's target printed without its row")
    # The connection notes on the same made-up figures: the comparison line
    # with each goal, and what TLS adds to each server's load.
    by_id = {r.id: r for r in all_rows([])}
    made_up = {OURS_ROW: (3.2, 4.0), TLS_ROW: (4.0, 5.0), OURS_HANDSHAKE_ROW: (44.0, 60.0),
               HANDSHAKE_ROW: (40.0, 66.0), "ringhttp/plaintext": (2.0, 2.5), "ringhttp/handshake": (20.0, 16.0),
               "h2o-tls/plaintext": (6.0, 4.0), "h2o/plaintext": (4.0, 3.0), "node-tls/json": (30.0, 5.0),
               "node/json": (20.0, 3.0), OURS_FULL_ROW: (50.0, 70.0), NGINX_FULL_ROW: (60.0, 80.0)}
    summaries = {rid: summary(rid, server_cpu_us=server, client_cpu_us=client)
                 for rid, (server, client) in made_up.items()}
    summaries[OURS_HANDSHAKE_ROW]["resumed_share"] = (0.99, 0.99, 0.99)
    summaries[HANDSHAKE_ROW]["resumed_share"] = (0.5, 0.5, 0.5)
    notes = connection_notes([by_id[rid] for rid in made_up], summaries)
    comparison = [n for n in notes if n.startswith("ringhttp-tls server CPU per request ÷ nginx-tls's")]
    if len(comparison) != 1 or not all(x in comparison[0] for x in (
            "plaintext 3.20 µs against 4.00 (0.80×, goal ≤ 0.80×)",
            "handshake 44.00 µs against 40.00 (1.10×; sessions resumed 99.0% and 50.0%)",
            "handshake-full 50.00 µs against 60.00 (0.83×, goal ≤ 1.00×)")):
        failures.append(f"the comparison line: {comparison}")
    for tls_row, plain_row, per, shown in (
            (OURS_ROW, "ringhttp/plaintext", "request", "the server's 3.20 µs against 2.00 (+1.20 µs, 1.60×)"),
            (OURS_HANDSHAKE_ROW, "ringhttp/handshake", "connection",
             "the server's 44.00 µs against 20.00 (+24.00 µs, 2.20×)"),
            (TLS_ROW, "nginx/plaintext", None, None),  # nginx's plain row did not run: no note
            ("h2o-tls/plaintext", "h2o/plaintext", "request", "the client's 4.00 µs against 3.00 (+1.00 µs, 1.33×)"),
            ("node-tls/json", "node/json", "request", "the server's 30.00 µs against 20.00 (+10.00 µs, 1.50×)")):
        found = [n for n in notes if f"({tls_row} against {plain_row}," in n]
        if per is None:
            if found:
                failures.append(f"a note against a row that did not run: {found}")
        elif len(found) != 1 or f"What TLS adds per {per} " not in found[0] or shown not in found[0]:
            failures.append(f"what TLS adds to {tls_row}: {found}")
    print(("ok" if not failures else "FAIL") + "    ringhttp-tls's server CPU at most 0.8x nginx-tls's kept alive and "
          "1.0x per full handshake: met, NOT MET and not judged on made-up figures, nginx-tls's rows its controls; the "
          "notes' comparison line and what TLS adds to each server")
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
            [TLS_ROW, WRK_ROW, HANDSHAKE_ROW, HANDSHAKE_WRK_ROW, "nginx/plaintext", "nginx/handshake",
             "nginx/json", "nginx-tls/json", "nginx-tls/handshake-full",
             "ringhttp-tls/plaintext", "ringhttp-tls/json", "ringhttp-tls/handshake", "ringhttp-tls/handshake-full",
             "ringhttp/plaintext", "ringhttp/json", "ringhttp/handshake",
             "h2o-tls/plaintext", "h2o-tls/json", "h2o-tls/handshake", "h2o-tls/handshake-full", "h2o/plaintext",
             "h2o/json",
             "node-tls/plaintext", "node-tls/json", "node/plaintext", "node/json"]):
        failures.append(f"--only tls chose {chosen}")
    for rid in ("h2o-tls/plaintext", "h2o-tls/json", "h2o-tls/handshake", "node-tls/plaintext", "node-tls/json"):
        if rid not in ids:
            failures.append(f"no row {rid}: {ids}")
    by_id = {r.id: r for r in rows}
    if by_id[HANDSHAKE_ROW].workload.requests_per_connection != 1 or by_id[TLS_ROW].workload.requests_per_connection:
        failures.append("the handshake row is not one request per connection, or the TLS row is not kept alive")
    if not by_id[TLS_ROW].server.tls or by_id["nginx/plaintext"].server.tls:
        failures.append("nginx-tls is not TLS, or nginx is")
    if (not by_id["h2o-tls/plaintext"].server.tls or not by_id["node-tls/json"].server.tls
            or by_id["h2o/plaintext"].server.tls or by_id["node/json"].server.tls):
        failures.append("h2o-tls or node-tls is not TLS, or h2o or node is")
    if by_id["h2o-tls/handshake"].workload.requests_per_connection != 1:
        failures.append("h2o-tls's handshake row is not one request per connection")
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
                                         ("nginx/plaintext", f"http://127.0.0.1:{PORT}/plaintext", False),
                                         ("h2o-tls/handshake", f"https://127.0.0.1:{PORT}/plaintext", True),
                                         ("h2o-tls/json", f"https://127.0.0.1:{PORT}/json", False),
                                         ("node-tls/json", f"https://127.0.0.1:{PORT}/json", False),
                                         ("node/json", f"http://127.0.0.1:{PORT}/json", False),
                                         (OURS_FULL_ROW, f"https://127.0.0.1:{PORT}/plaintext", True),
                                         (NGINX_FULL_ROW, f"https://127.0.0.1:{PORT}/plaintext", True)):
            argv = client_argv(ctx, by_id[rid], PORT, SERVER_PID)
            tls = by_id[rid].server.tls
            # Full handshakes: the client offers no session (--no-sessionid), on those rows only.
            if ("--no-sessionid" in argv) != rid.endswith("/handshake-full"):
                failures.append(f"{rid}: --no-sessionid {'missing' if 'full' in rid else 'given'}: {argv}")
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
        made = ctx.certificates()
        rundir = tempfile.mkdtemp(prefix="ringhttp-tls-test.")
        try:
            node_tls, _ = NodeTls().command(ctx, PORT, rundir, None)
            node, _ = Node().command(ctx, PORT, rundir, None)
        finally:
            shutil.rmtree(rundir, ignore_errors=True)
        if node_tls[1:] != [node[1], str(PORT), made.certificate, made.key] or node[2:] != [str(PORT)]:
            failures.append(f"node-tls is not node_http.js with the run's certificate and key: {node_tls}; "
                            f"node: {node}")
        before = also_client_rows([by_id[TLS_ROW]], ["before"])[1]
        argv, ours = client_argv(ctx, before, PORT, SERVER_PID), client_argv(ctx, by_id[TLS_ROW], PORT, SERVER_PID)
        if argv[3] != os.path.realpath(sys.executable) or argv[:3] + argv[4:] != ours[:3] + ours[4:]:
            failures.append(f"an --also-client row: {argv} against {ours}")
    finally:
        ctx.remove()
    print(("ok" if not failures else "FAIL") + "    commands: --cacert the run's CA (never -k), every answer checked, "
          "--requests-per-connection 1 and wrk's Connection: close on the handshake rows only; node-tls's "
          "certificate and key")
    return failures


def check_certificates(build):
    failures = []
    if not shutil.which("openssl"):
        return ["the CA: no openssl command (Debian: openssl; tools/install-deps.sh installs it)"]
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
        failures += check_h2o_configs(ctx, made)
    except Exception as e:  # noqa: BLE001 - reported, and the directory still removed
        failures.append(f"making the CA: {type(e).__name__}: {e}")
    finally:
        ctx.remove()
    if directory and os.path.exists(directory) or os.path.exists(ctx.bodies_dir):
        failures.append(f"{ctx.bodies_dir} is still there after Context.remove()")
    failures += check_removed_after_a_run(build)
    print(("ok" if not failures else "FAIL") + "    the run's CA: made by openssl, private, verifies the server for "
          "127.0.0.1, accepted by nginx -t and h2o -t; removed with the run")
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
            if server.missing(ctx):
                failures.append(f"{server.name}: {server.missing(ctx)} (Debian: nginx-light; tools/install-deps.sh)")
            else:
                r = subprocess.run(argv + ["-t"], capture_output=True, text=True, timeout=30)
                if r.returncode != 0:
                    failures.append(f"{server.name}: nginx -t refuses its configuration: {r.stderr[-500:]}")
    finally:
        for d in rundirs:
            shutil.rmtree(d, ignore_errors=True)
    return failures


def check_h2o_configs(ctx, made):
    failures = []
    rundirs = [tempfile.mkdtemp(prefix="ringhttp-tls-test."), tempfile.mkdtemp(prefix="ringhttp-tls-test.")]
    try:
        for server, rundir in zip((H2oTls(), H2o()), rundirs):
            argv, _ = server.command(ctx, PORT, rundir, None)
            with open(argv[-1]) as f:
                conf = f.read()
            lines = [line.split("#")[0].rstrip() for line in conf.split("\n")]  # the YAML, without its comments
            tls = server.tls
            if any("@" in line for line in lines):
                failures.append(f"{server.name}: a placeholder left in its configuration")
            wanted = [f"  port: {PORT}", "  ssl:", f"    certificate-file: {made.certificate}",
                      f"    key-file: {made.key}", "    neverbleed: OFF", "    ocsp-update-interval: 0",
                      "ssl-session-resumption:", "  mode: all"]
            if tls and [w for w in wanted if w not in lines]:
                failures.append(f"{server.name}: {[w for w in wanted if w not in lines]} not in its configuration")
            if not tls and any("ssl" in line for line in lines):
                failures.append(f"{server.name}: TLS in its configuration")
            if tls and lines.index("  ssl:") != lines.index(f"  port: {PORT}") + 1:
                failures.append(f"{server.name}: ssl is not under its listener")
            if server.missing(ctx):
                failures.append(f"{server.name}: {server.missing(ctx)} (Debian: h2o; tools/install-deps.sh)")
            else:
                r = subprocess.run(argv + ["-t"], capture_output=True, text=True, timeout=30)
                if r.returncode != 0:
                    failures.append(f"{server.name}: h2o -t refuses its configuration: {(r.stdout + r.stderr)[-500:]}")
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
    sys.exit(observe.run_checks(check_target, check_server_targets, check_rows, check_commands, check_certificates,
                                check_figures))
