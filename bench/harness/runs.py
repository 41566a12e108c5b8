"""One measured run of a row: the generator, the server's CPU and system calls, the variant confirmed."""
import json
import os
import re

from .constants import (CLIENT_CPU, CLK_TCK, DB_CONNECTIONS, GENERATOR_GRACE_S, H2_MAX_STREAMS, H2_TLS13_CIPHER, PEERS,
                        SERVER_CPUS, SERVER_SHARDS)
from .servers import Ringhttp
from .processes import Running, StartError, at_edges, child_cpu_s, cpu_ticks, rss_bytes, run_bounded
from .database import DatabaseCpu, connections_up
from .h2load import run_h2load
from .syscalls import ServerSyscalls, client_syscalls
from .units import SIZE_BYTES, TIME_MS, seconds
from .tls import handshake_figures, log_difference


# One measured run of a row.

def open_rate(workload, pipeline):
    """The rate asked of the client: the workload's, a whole number of
    pipelined batches a second (the client refuses one that is not)."""
    if not workload.rate:
        return 0
    return workload.rate // pipeline * pipeline if workload.pipelined else workload.rate


def client_argv(ctx, row, port, server_pid):
    """ringhttp's client's command line for a row (the build's client, or
    the --also-client one the row names): one thread pinned to CLIENT_CPU,
    every response's status and body checked; over HTTPS it trusts the
    run's CA, never -k; against an HTTP/2 server it speaks h2 (offered by
    ALPN) with H2_MAX_STREAMS streams per connection. A variant's
    client_args (--compare backend's client-epoll) come last, before the URL."""
    w = row.workload
    argv = ["taskset", "-c", CLIENT_CPU, ctx.client_binary(row), "-t", "1", "--cpus", CLIENT_CPU,
            "-c", str(ctx.connections), "-w", f"{ctx.warmup}s", "-d", f"{ctx.duration}s",
            "--server-pid", str(server_pid), "--json", "--expect-status", str(w.status)]
    if w.check_body:
        argv += ["--expect-body-file", ctx.body_file(w)]
    if w.method != "GET":
        argv += ["-m", w.method]
    for h in w.headers:
        argv += ["-H", ctx.resolve(h)]
    if w.request_body:
        argv += ["--body-file", ctx.request_body_file(w)]
    if w.pipelined:
        argv += ["-p", str(ctx.pipeline)]
    rate = open_rate(w, ctx.pipeline)
    if rate:
        argv += ["-R", str(rate)]
    if w.requests_per_connection:
        argv += ["--requests-per-connection", str(w.requests_per_connection)]
    if row.server.tls:
        argv += ["--cacert", ctx.certificates().ca]
        if not w.tls_resume:
            argv.append("--no-sessionid")
    if row.server.http2:
        argv += ["--http2", "--max-streams", str(H2_MAX_STREAMS), "--tls13-ciphers", H2_TLS13_CIPHER]
    if row.variant:
        argv += list(row.variant.client_args)
    return argv + [row.server.url(port, w.path)]


def run_client(ctx, row, running, window=None):
    """ringhttp's client against a running server: one run's figures.
    window(generator, pid, warmup_s), if given, is called as the generator
    starts (a profiler's measured window: --profile)."""
    w = row.workload
    rate = open_rate(w, ctx.pipeline)
    try:
        argv = client_argv(ctx, row, running.port, running.pid)
    except StartError as e:  # the run's certificates could not be made
        return {"failure": str(e)}
    beside = (lambda proc: window(proc, running.pid, ctx.warmup)) if window else None
    code, out, err = run_bounded(argv, ctx.warmup + ctx.duration + GENERATOR_GRACE_S, beside)
    if code is None:
        return {"failure": "the client did not finish in time"}
    try:
        report = json.loads(out)
    except json.JSONDecodeError:
        return {"failure": f"the client exited {code} without a report: {err.strip()[-300:]}"}
    lat = report.get("latency_us") or {}
    result = {
        "requests": report["requests"],
        "rps": report["requests_per_s"],
        "bytes_per_s": report["bytes_per_s"],
        "server_cpu_us": report.get("server_cpu_us_per_request"),
        "client_cpu_us": report.get("client_cpu_us_per_request"),
        "client_syscalls_per_request": client_syscalls(report),
        "p50_ms": lat.get("p50", 0) / 1000, "p99_ms": lat.get("p99", 0) / 1000,
        "p999_ms": lat.get("p99_9", 0) / 1000,
        "p99_uncorrected_ms": (report.get("latency_uncorrected_us") or {}).get("p99", 0) / 1000 if rate else None,
        "requested_rps": rate or None,
        "errors": report["errors_total"], "error_classes": {k: v for k, v in report["errors"].items() if v},
        "client": report,
    }
    if row.server.tls or w.requests_per_connection:
        result.update(client_connection_figures(report, row.server.tls, w.requests_per_connection > 0))
    if code != 0 or report["errors_total"] or not report["requests"]:
        result["failure"] = (f"{report['errors_total']} failed requests "
                             f"({', '.join(f'{k} {v}' for k, v in result['error_classes'].items()) or 'none'}), "
                             f"{report['requests']} answered, client exit {code}")
    got = (report.get("options") or {}).get("protocol", "?")
    if row.server.http2 and got != "h2" and "failure" not in result:
        result["failure"] = f"the client did not speak HTTP/2 to {row.server.name}: its report says protocol={got}"
    wanted = row.variant and row.variant.expect_client_backend
    got = (report.get("options") or {}).get("backend", "?")
    if wanted and got != wanted and "failure" not in result:
        result["failure"] = (f"{row.instance}'s client is not the variant asked for: backend={wanted} asked for, "
                             f"its report says backend={got}")
    wanted = row.variant and row.variant.expect_client_uring
    got = (report.get("environment") or {}).get("uring", "?")
    if wanted and uring_mismatch(wanted, got) and "failure" not in result:
        result["failure"] = f"{row.instance}'s client is not the variant asked for: {uring_mismatch(wanted, got)}"
    return result


def uring_mismatch(expect, listed):
    """Why a uring= list (the features in use, comma-separated) is not what
    a variant expects: `name` must be in it, `!name` must not; else None."""
    names = listed.split(",")
    if expect.startswith("!"):
        return f"{expect[1:]} turned off, it runs uring={listed}" if expect[1:] in names else None
    return None if expect in names else f"{expect} asked for, it runs uring={listed}"


def client_connection_figures(report, over_tls, per_connection=True):
    """The client's own count of the window's connections: TLS handshakes
    (full and resumed) over HTTPS, reconnects over plain HTTP, with the CPU
    each side spent per connection made where each request has its own
    connection (per_connection; else a few connections carry the run)."""
    tls = (report.get("tls") or {}) if over_tls else {}
    n = report["requests"]
    client_s = report.get("client_cpu_us_per_request") and report["client_cpu_us_per_request"] * n / 1e6
    server_s = report.get("server_cpu_us_per_request") and report["server_cpu_us_per_request"] * n / 1e6
    made = tls.get("handshakes") if over_tls else report.get("reconnects")
    if not per_connection:
        client_s = server_s = None
    figures = handshake_figures(made, tls.get("resumed", 0), report.get("duration_s"), client_s, server_s)
    figures.update({"tls_protocol": tls.get("protocol"), "tls_cipher": tls.get("cipher"),
                    "reconnects": report.get("reconnects"), "connections_counted_by": "client"})
    return figures


def parse_wrk(text):
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+),", text)
    if not m:
        return None
    r = {"requests": int(m.group(1)), "duration_s": float(m.group(2)) * TIME_MS.get(m.group(3), 1) / 1000}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    r["rps"] = float(m.group(1)) if m else 0.0
    m = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", text)
    r["bytes_per_s"] = float(m.group(1)) * SIZE_BYTES.get(m.group(2), 1) if m else 0.0
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(\w+)", text, re.M)
        r[key] = float(m.group(1)) * TIME_MS.get(m.group(2), 1) if m else None
    r["p999_ms"] = None  # wrk prints no 99.9th percentile
    errors = {}
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        for k, v in zip(("connect", "read", "write", "timeout"), m.groups()):
            if int(v):
                errors[k] = int(v)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m and int(m.group(1)):
        errors["status"] = int(m.group(1))
    r["errors"] = sum(errors.values())
    r["error_classes"] = errors
    return r


def wrk_argv(ctx, row, port, seconds, latency):
    """wrk's command line for a row: one thread pinned to CLIENT_CPU, the
    same connections as the client. A connection per request is asked for
    with Connection: close (wrk reconnects after such an answer). Over HTTPS
    wrk has no CA option: it never verifies the server's certificate (its
    ssl.c sets SSL_VERIFY_NONE), as the client with -k would not."""
    w = row.workload
    if w.requests_per_connection > 1:
        raise ValueError(f"wrk cannot close a connection after {w.requests_per_connection} requests")
    a = ["taskset", "-c", CLIENT_CPU, "wrk", "-t1", f"-c{ctx.connections}", f"-d{seconds}s"]
    if latency:
        a.append("--latency")
    if w.requests_per_connection:
        a += ["-H", "Connection: close"]
    url = row.server.url(port, w.path)
    if w.pipelined:
        return a + ["-s", os.path.join(PEERS, "pipeline.lua"), url, "--", str(ctx.pipeline)]
    return a + [url]


def run_wrk(ctx, row, running, window=None):
    w = row.workload

    def argv(seconds, latency):
        return wrk_argv(ctx, row, running.port, seconds, latency)

    if ctx.warmup > 0:
        code, out, err = run_bounded(argv(ctx.warmup, False), ctx.warmup + GENERATOR_GRACE_S)
        if code != 0:
            return {"failure": f"wrk warm-up exited {code}: {err.strip()[-300:]}"}
    log_before = running.server.connection_log(running.rundir)
    before_ticks = cpu_ticks(running.pid)
    before_cpu = child_cpu_s()
    beside = (lambda proc: window(proc, running.pid, 0)) if window else None  # its warm-up was the run before
    code, out, err = run_bounded(argv(ctx.duration, True), ctx.duration + GENERATOR_GRACE_S, beside)
    wrk_cpu = child_cpu_s() - before_cpu  # wrk was the only child reaped meanwhile
    after_ticks = cpu_ticks(running.pid)
    window_log = log_difference(running.server.connection_log(running.rundir), log_before)
    r = parse_wrk(out) if code == 0 else None
    if r is None:
        return {"failure": f"wrk exited {code}: {(err or out).strip()[-300:]}"}
    if w.pipelined:
        r["p50_ms"] = r["p99_ms"] = None  # wrk's percentiles read 0 when a script pipelines
    n = r["requests"]
    r["server_cpu_us"] = (after_ticks - before_ticks) / CLK_TCK * 1e6 / n if n else None
    r["client_cpu_us"] = wrk_cpu * 1e6 / n if n else None
    r["wrk"] = out
    if window_log and (row.server.tls or w.requests_per_connection):
        # wrk does not say what it connected: the server's log of the measured run does. CPU per
        # connection only where each request has its own (else 128 connections carry the run).
        per_connection = w.requests_per_connection > 0
        r.update(handshake_figures(window_log["connections"], window_log["resumed"], r["duration_s"],
                                   wrk_cpu if per_connection else None,
                                   (after_ticks - before_ticks) / CLK_TCK if per_connection else None))
        r["connections_counted_by"] = "server log"
    if r["errors"] or not n:
        r["failure"] = (f"{r['errors']} failed requests ("
                        + (", ".join(f"{k} {v}" for k, v in r["error_classes"].items()) or "none")
                        + f"), {n} answered")
    return r


def run_pgbench(ctx, row):
    """The database rows' ceiling: pgbench on the run's cluster, pinned where
    the generators run, a warm-up run first; its transactions are the
    requests, the cluster's CPU over the measured run is the database's."""
    try:
        database = ctx.database()
    except StartError as e:
        return {"failure": str(e)}
    script = os.path.join(ctx.bodies_dir, f"pgbench-{row.workload.name}.sql")
    with open(script, "w") as f:
        f.write(row.server.scripts[row.workload.name])
    argv = ["taskset", "-c", CLIENT_CPU, "pgbench", "-n", "-M", "prepared", "-f", script,
            "-c", str(DB_CONNECTIONS), "-j", "1", database.url, "-T"]
    if ctx.warmup > 0:
        code, out, err = run_bounded(argv + [str(ctx.warmup)], ctx.warmup + GENERATOR_GRACE_S)
        if code != 0:
            return {"failure": f"pgbench's warm-up exited {code}: {(err or out).strip()[-300:]}"}
    window = DatabaseCpu(database, ctx.duration)
    before_cpu = child_cpu_s()
    code, out, err = run_bounded(argv + [str(ctx.duration)], ctx.duration + GENERATOR_GRACE_S,
                                 lambda proc: window(proc, None, 0))
    pgbench_cpu = child_cpu_s() - before_cpu  # pgbench was the only child reaped meanwhile
    done = re.search(r"number of transactions actually processed: (\d+)", out)
    tps = re.search(r"tps = ([\d.]+) \(without initial connection time\)", out)
    failed = re.search(r"number of failed transactions: (\d+)", out)
    latency = re.search(r"latency average = ([\d.]+) ms", out)
    if code != 0 or not done or not tps:
        return {"failure": f"pgbench exited {code}: {(err or out).strip()[-300:]}"}
    n, errors = int(done.group(1)), int(failed.group(1)) if failed else 0
    result = {"requests": n, "rps": float(tps.group(1)), "bytes_per_s": None, "server_cpu_us": None,
              "database_connections": DB_CONNECTIONS,
              "client_cpu_us": pgbench_cpu * 1e6 / n if n else None,
              "database_cpu_us": window.ticks / CLK_TCK * 1e6 / n if n and window.ticks is not None else None,
              "p50_ms": None, "p99_ms": None, "p999_ms": None,
              "latency_average_ms": float(latency.group(1)) if latency else None,
              "errors": errors, "error_classes": {"failed": errors} if errors else {}, "pgbench": out}
    if errors or not n:
        result["failure"] = f"{errors} failed transactions, {n} processed"
    return result


def measure(ctx, row, right_answer=True, window=None):
    """Starts the row's server, runs its generator, stops the server. Returns one run's record.
    window: as run_client's (a profiler beside the measured window).
    A row with no HTTP server (pgbench) is its generator alone.
    The generator starts once the server has answered rightly, as for cold
    start; with right_answer=False (a server whose cold start found it never
    does), once it has answered at all, so that the generator names what is
    wrong."""
    if not row.server.http:
        return run_pgbench(ctx, row)
    try:
        extra = row.server.database_args(ctx, row.variant) if row.workload.database else ()
        running = Running(ctx, row.server, row.variant, extra_args=extra, right_answer=right_answer)
    except StartError as e:
        return {"failure": str(e)}
    record = {}
    try:
        confirm_variant(ctx, row, running, record)
        if "failure" not in record and row.workload.database:
            database_ready(ctx, row, running, record)
        database_cpu = syscalls = None
        if window is None:  # else a profiler's: the readings of a plain run only
            readers = []
            if row.workload.database:
                database_cpu = DatabaseCpu(ctx.database(), ctx.duration)
                readers.append(database_cpu)
            if row.server.counts_syscalls:
                syscalls = ServerSyscalls(running.port, ctx.client_tls() if row.server.tls else None)
                readers.append(syscalls)
            if readers:
                def window(generator, pid, warmup_s):
                    at_edges(generator, warmup_s, ctx.duration, readers)
        if "failure" not in record:
            generate = {"client": run_client, "wrk": run_wrk, "h2load": run_h2load}[row.generator]
            record.update(generate(ctx, row, running, window))
        if database_cpu and database_cpu.ticks is not None and record.get("requests"):
            # Every Postgres process's utime+stime over the window ÷ responses.
            record["database_cpu_us"] = database_cpu.ticks / CLK_TCK * 1e6 / record["requests"]
        record["server_syscalls_per_request"] = syscalls.per_request if syscalls else None
        log = running.server.connection_log(running.rundir)
        if log is not None:
            record["server_connection_log"] = log  # the whole run's, warm-up and start-up check included
        if running.proc.poll() is None:
            record["rss_bytes"] = rss_bytes(running.pid)
        elif "failure" not in record:
            record["failure"] = f"{row.server.name} died during the run (status {running.proc.returncode})"
    finally:
        code = running.stop()
    record["server_exit"] = code
    if "failure" not in record and not row.server.clean_exit(code):
        record["failure"] = f"{row.server.name} exited with status {code} after SIGTERM: {running.tail()}"
    return record


def database_ready(ctx, row, running, record):
    """ringhttp on a database row: the load starts once every database
    connection it was given is up (its /metrics, within --start-wait), so
    that no request of the window meets a server still connecting, and the
    count up confirms the pool: shards (its start-up line) × --db-pool."""
    if row.server.name != "ringhttp":
        return
    shards = int(startup_fields(record.get("startup") or running.startup_line()).get("shards", 0))
    pool = row.server.db_pool(row.variant)
    expected = shards * pool
    got = connections_up(running.port, expected, ctx.start_wait)
    record["database_connections"] = got
    if got != expected:
        record["failure"] = (f"{row.instance} holds {got} database connections after {ctx.start_wait:g} s, not the "
                             f"{expected} of its {shards} shard(s) × --db-pool {pool}: {running.tail()}")


# The start-up line's fields a variant is confirmed by.
CONFIRMED_FIELDS = ("shards", "cpus", "allocator", "backend", "uring", "send")


def startup_fields(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def variant_flags(variant):
    """The server flags that make a variant, in two parts: its placement (the
    default: one shard on CPU 0) and its switches. Written apart from
    Ringhttp.command on purpose: it is what the running server is held to."""
    placement = (tuple(variant.args) if variant and variant.args else
                 ("--shards", str(SERVER_SHARDS), "--cpus", SERVER_CPUS))
    switches = tuple(variant.extra_args) if variant else ()
    if variant and variant.db_pool:
        switches += ("--db-pool", str(variant.db_pool))
    return placement, switches


class Reference(Ringhttp):
    """ringhttp given a variant's own flags and nothing else: what its start-up
    line says for them on this kernel, the line a row's server must match."""

    def command(self, ctx, port, rundir, variant):
        build = ctx.build_glibc if variant and variant.glibc_build else ctx.build
        placement, switches = variant_flags(variant)
        argv = [self.binary(ctx, build), "--address", "127.0.0.1", "--port", str(port), *placement, *switches]
        return argv, ({"LD_PRELOAD": variant.preload} if variant and variant.preload else {})


def reference_fields(ctx, variant):
    key = variant.name if variant else ""
    if key not in ctx.references:
        running = Running(ctx, Reference(), variant)
        try:
            ctx.references[key] = startup_fields(running.startup_line())
        finally:
            running.stop()
    return ctx.references[key]


def contains(seq, part):
    return any(seq[i:i + len(part)] == part for i in range(len(seq) - len(part) + 1))


def confirm_variant(ctx, row, running, record):
    """What the server says it runs must be what the row asked for, not assumed:
    the running process's arguments hold the variant's flags, and its start-up
    line says what the same binary says for those flags alone (on a kernel
    with every feature, `all` and `6.1` run the same features and print the
    same line: their arguments tell them apart)."""
    if row.server.name == "floor-uring":
        return confirm_floor_variant(row, running, record)
    if row.server.name != "ringhttp":
        return
    line = running.startup_line()
    record["startup"] = line
    fields = startup_fields(line)
    v = row.variant
    problems = []
    args = running.cmdline()
    for part in variant_flags(v):
        if part and not contains(args, list(part)):
            problems.append(f"the server runs without {' '.join(part)}")
    try:
        want = reference_fields(ctx, v)
    except StartError as e:
        want = {}
        problems.append(f"the reference start failed: {e}")
    for k in CONFIRMED_FIELDS:
        if want and fields.get(k) != want.get(k):
            problems.append(f"it reports {k}={fields.get(k, '?')}, the variant's flags alone give "
                            f"{k}={want.get(k, '?')}")
    cpus = v.cpus if v else SERVER_CPUS
    if fields.get("cpus") != cpus:
        problems.append(f"its shards run on cpus={fields.get('cpus', '?')}, not {cpus}")
    if v and v.expect_allocator:
        got = fields.get("allocator", "?")
        if got != v.expect_allocator:
            problems.append(f"asked for allocator {v.expect_allocator}, the server reports {got}")
        elif v.preload and not running.maps_mention(v.preload):
            problems.append(f"{v.preload} is not mapped into the server")
    if v and v.expect_uring and uring_mismatch(v.expect_uring, fields.get("uring", "?")):
        problems.append("the server: " + uring_mismatch(v.expect_uring, fields.get("uring", "?")))
    if v and v.expect_send and fields.get("send") != v.expect_send:
        problems.append(f"send={v.expect_send} asked for, the server reports send={fields.get('send', '?')}")
    if v and v.expect_backend and fields.get("backend") != v.expect_backend:
        problems.append(f"backend={v.expect_backend} asked for, the server reports "
                        f"backend={fields.get('backend', '?')}")
    if problems:
        record["failure"] = f"{row.instance} is not the variant asked for: " + "; ".join(problems)


def confirm_floor_variant(row, running, record):
    """floor-uring on an axis's variant: the running process holds the
    variant's --uring value, and the features its start-up line lists hold
    what the variant expects (the floor has no reference start: ringhttp's
    list names features the floor has no use for)."""
    v = row.variant
    if not v or not v.extra_args:
        return
    line = running.startup_line()
    record["startup"] = line
    problems = []
    if not contains(running.cmdline(), list(v.extra_args)):
        problems.append(f"the floor runs without {' '.join(v.extra_args)}")
    listed = startup_fields(line).get("uring")
    if listed is None:
        problems.append(f"its start-up line names no uring= list: {line!r}")
    elif v.expect_uring and uring_mismatch(v.expect_uring, listed):
        problems.append("the floor: " + uring_mismatch(v.expect_uring, listed))
    if problems:
        record["failure"] = f"{row.instance} is not the variant asked for: " + "; ".join(problems)
