"""h2load (nghttp2's HTTP/2 load generator) on the HTTP/2 rows: its command,
its report read, and one measured run with its CPU and the server's over the
measured window.

h2load warms up and measures in one process (--warm-up-time, then -D), and
counts only the requests of its measured time. Its CPU over that window is
its whole CPU (getrusage of the reaped child, as wrk's is read) less what
/proc said it had spent when the window opened; the server's is its
utime+stime from the window's opening to h2load's exit, as on the wrk rows.
"""
import re
import time

from .constants import CLIENT_CPU, CLK_TCK, GENERATOR_GRACE_S, H2_MAX_STREAMS, H2_TLS13_CIPHER
from .processes import child_cpu_s, cpu_ticks, run_bounded, wait_while_running
from .units import SIZE_BYTES, TIME_MS

REQUESTS_LINE = re.compile(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                           r"(\d+) errored, (\d+) timeout", re.M)
STATUS_LINE = re.compile(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", re.M)
FINISHED_LINE = re.compile(r"^finished in [\d.]+\w+, ([\d.]+) req/s, ([\d.]+)(\w+)/s", re.M)
REQUEST_TIME_LINE = re.compile(r"^time for request:\s+\S+\s+\S+\s+([\d.]+)(\w+)", re.M)
PROTOCOL_LINE = re.compile(r"^Application protocol: (\S+)", re.M)


def parse_h2load(text):
    """h2load's report as a run's figures, or None when it has no requests
    line (it did not run to its end). Error classes: its failed, errored and
    timed-out requests as it counts them, and `status` for every answer that
    is not 2xx. They overlap: h2load's failed holds its errored and timed-out
    requests and its 4xx and 5xx answers (a 3xx it counts a success), so the
    row's errors are the requests done without a 2xx answer, every one of
    those classes within them. h2load checks no body and prints no
    percentiles: the mean latency is kept instead."""
    m = REQUESTS_LINE.search(text)
    if not m:
        return None
    _total, _started, done, _succeeded, failed, errored, timeout = (int(x) for x in m.groups())
    r = {"requests": done, "rps": 0.0, "bytes_per_s": 0.0, "p50_ms": None, "p99_ms": None, "p999_ms": None}
    m = FINISHED_LINE.search(text)
    if m:
        r["rps"] = float(m.group(1))
        r["bytes_per_s"] = float(m.group(2)) * SIZE_BYTES.get(m.group(3), 1)
    m = REQUEST_TIME_LINE.search(text)
    r["latency_mean_ms"] = float(m.group(1)) * TIME_MS[m.group(2)] if m and m.group(2) in TIME_MS else None
    protocols = sorted(set(PROTOCOL_LINE.findall(text)))
    r["protocol"] = "/".join(protocols) or None
    m = STATUS_LINE.search(text)
    answered_2xx = int(m.group(1)) if m else 0  # no status line: no answer is known to be 2xx
    errors = {"failed": failed, "errored": errored, "timeout": timeout,
              "status": sum(int(x) for x in m.groups()[1:]) if m else done}
    r["error_classes"] = {k: v for k, v in errors.items() if v}
    r["errors"] = max([done - answered_2xx] + list(errors.values()))
    return r


def h2load_argv(ctx, row, port):
    """h2load's command line for a row: one thread pinned to CLIENT_CPU, the
    run's connections with H2_MAX_STREAMS streams each (as the client has on
    the same row), warm-up and measured time as the client's. h2load has no
    CA option: it does not verify the server's certificate, as wrk does not."""
    w = row.workload
    if w.pipelined or w.requests_per_connection or w.rate or w.method != "GET" or w.headers:
        raise ValueError(f"h2load rows are kept-alive GETs with no headers of their own; {w.name} is not one")
    argv = ["taskset", "-c", CLIENT_CPU, "h2load", "-c", str(ctx.connections), "-m", str(H2_MAX_STREAMS), "-t", "1",
            "--tls13-ciphers", H2_TLS13_CIPHER, "-D", str(ctx.duration)]
    if ctx.warmup > 0:
        argv += ["--warm-up-time", str(ctx.warmup)]
    return argv + [row.server.url(port, w.path)]


def run_h2load(ctx, row, running, window=None):
    """One run of h2load against a running server. window(generator, pid,
    warmup_s), if given, is called as the measured window opens (a
    profiler's: --profile)."""
    opened = {}

    def beside(proc):
        wait_while_running(proc, time.monotonic() + ctx.warmup)
        if proc.poll() is None:
            opened["h2load"], opened["server"] = cpu_ticks(proc.pid), cpu_ticks(running.pid)
            if window:
                window(proc, running.pid, 0)

    before_cpu = child_cpu_s()
    code, out, err = run_bounded(h2load_argv(ctx, row, running.port), ctx.warmup + ctx.duration + GENERATOR_GRACE_S,
                                 beside)
    h2load_cpu = child_cpu_s() - before_cpu  # h2load was the only child reaped meanwhile
    after_ticks = cpu_ticks(running.pid)
    r = parse_h2load(out) if code == 0 else None
    if r is None:
        return {"failure": f"h2load exited {code}: {(err or out).strip()[-300:]}"}
    r["h2load"] = out
    n = r["requests"]
    if not opened:
        r["failure"] = "h2load exited before its measured time began"
        return r
    r["client_cpu_us"] = (h2load_cpu - opened["h2load"] / CLK_TCK) * 1e6 / n if n else None
    r["server_cpu_us"] = (after_ticks - opened["server"]) / CLK_TCK * 1e6 / n if n else None
    if r["errors"] or not n:
        r["failure"] = (f"{r['errors']} failed requests ("
                        + (", ".join(f"{k} {v}" for k, v in r["error_classes"].items()) or "none")
                        + f"), {n} answered")
    elif r["protocol"] != "h2":
        r["failure"] = f"h2load did not speak HTTP/2 to {row.server.name}: it negotiated {r['protocol'] or 'nothing'}"
    return r
