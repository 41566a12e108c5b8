#!/usr/bin/env python3
"""The benchmark measures what it says it measures.

1. Every workload bench/bench.py names does what its description says, on
   every server it runs that workload on, started exactly as the benchmark
   starts it: the response arrives with the right status, type and body (the
   stream with its length and pattern; the pipelined batch answered in full
   and in order; a connection per request closed by the server after its
   answer; over HTTPS, a certificate the run's CA signed for 127.0.0.1).
   The checks below are written from the descriptions, not
   taken from the harness, and the body the harness hands the client to
   compare against must pass them too. A server that is not installed or
   not built fails the test, named: tools/install-deps.sh installs every
   peer, and the build makes ours and the floors.
2. The harness exits non-zero, naming the row and the client's error class,
   when requests fail: against a server that answers 500 (class status) and
   one that answers 200 with a wrong body (class body only); and zero when
   they do not.

Usage: workloads_test.py --build DIR    (meson test runs it)
"""
import argparse
import importlib.util
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # loading bench.py must leave no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PIPELINE_DEPTH = 16
DATABASE_READY_S = 10  # a server's database connections are made after it listens (ringhttp: 503 until then)


def load_harness():
    spec = importlib.util.spec_from_file_location("bench", os.path.join(ROOT, "bench", "bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_response(sock, buf):
    """One response: (status, headers dict, body, leftover). Content-Length framing only.
    Written here rather than borrowed from bench.py: the checker must not
    share code with what it checks."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError("connection closed before a complete header section")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    m = re.fullmatch(r"HTTP/1\.[01] (\d{3}) .*", lines[0])
    if not m:
        raise AssertionError(f"not a status line: {lines[0]!r}")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" not in headers:
        raise AssertionError(f"no Content-Length in {headers}")
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"connection closed {len(rest)} bytes into a {length}-byte body")
        rest += chunk
    return int(m.group(1)), headers, rest[:length], rest[length:]


def connect(port, tls=None):
    """A connection to the server; tls: an ssl.SSLContext (HTTPS, the handshake done here)."""
    raw = socket.create_connection(("127.0.0.1", port), timeout=10)
    return tls.wrap_socket(raw, server_hostname="127.0.0.1") if tls else raw


def fetch(port, path, count=1, method="GET", headers=(), body=b"", tls=None):
    """Sends `count` requests in one send; returns the responses in order."""
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    for h in headers:
        head += h + "\r\n"
    if body or method == "POST":
        head += f"Content-Length: {len(body)}\r\n"
    request = (head + "\r\n").encode() + body
    with connect(port, tls) as s:
        s.sendall(request * count)
        out, buf = [], b""
        for _ in range(count):
            status, headers, body, buf = read_response(s, buf)
            out.append((status, headers, body))
        return out


def closed_after_one(port, workload, tls=None):
    """A connection per request, as the generators ask for it (Connection:
    close): the one answer is right and the server then closes."""
    with connect(port, tls) as s:
        s.sendall(f"GET {workload.path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        status, headers, body, rest = read_response(s, b"")
        response_ok(workload, status, headers, body)
        try:
            more = rest or s.recv(1)
        except ssl.SSLEOFError:  # closed without TLS's close_notify: closed all the same
            more = b""
        expect(more == b"", f"the server sent {more[:40]!r} after the answer to Connection: close, not its close")


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def database_ready(port):
    """Waits, bounded, until a read of user 1 is no longer 503 (a server
    still connecting to its database); the workload's own checks follow."""
    deadline = time.monotonic() + DATABASE_READY_S
    while True:
        (status, _, _), = fetch(port, "/db/users/1")
        if status != 503 or time.monotonic() > deadline:
            return
        time.sleep(0.05)


# What each workload's description promises: requests per send, the
# Content-Type, and a check of the body.
def plaintext_body(body):
    expect(body == b"Hello, World!", f"body {body[:80]!r}")


def json_body(body):
    expect(json.loads(body) == {"message": "Hello, World!"}, f"body {body[:80]!r}")


def stream_body(body):
    expect(len(body) == 65536, f"{len(body)} bytes, not 65536")
    wrong = next((i for i, b in enumerate(body) if b != i % 251), None)
    expect(wrong is None, f"byte {wrong} breaks the pattern i mod 251")


def ping_body(body):
    expect(json.loads(body) == {"ok": True}, f"body {body[:80]!r}")


def echo_body(body):
    expect(json.loads(body) == {"hello": "bench", "doubled": 42}, f"body {body[:80]!r}")


def user_body(body):
    expect(json.loads(body) == {"id": 12345, "name": "user-12345"}, f"body {body[:80]!r}")


def profile_body(body):
    expect(json.loads(body) == {"sub": "bench-user"}, f"body {body[:80]!r}")


# The database workloads' requests vary ({rand:A..B}, {seq:A..B}, expanded
# by the client): checked here with the placeholder as one number.
PLACEHOLDER = re.compile(rb"\{(?:seq|rand):\d+\.\.\d+\}")
DB_ID = 4321


def concrete(data):
    """data (str or bytes) with its placeholder replaced by DB_ID."""
    if isinstance(data, str):
        return PLACEHOLDER.sub(str(DB_ID).encode(), data.encode()).decode()
    return PLACEHOLDER.sub(str(DB_ID).encode(), data)


def db_read_body(body):
    expect(json.loads(concrete(body)) == {"id": DB_ID, "name": f"user-{DB_ID}"}, f"body {body[:80]!r}")


def db_write_body(body):
    row = json.loads(body)
    expect(row.get("name") == f"bench-{DB_ID}" and isinstance(row.get("id"), int) and row["id"] > 10000,
           f"body {body[:80]!r}: not the new row (an id past the 10,000 users, the name sent)")


CHECKS = {
    "plaintext": (1, "text/plain", plaintext_body),
    "json": (1, "application/json", json_body),
    "stream-64k": (1, "application/octet-stream", stream_body),
    "pipelined": (PIPELINE_DEPTH, "text/plain", plaintext_body),
    "pipelined-open": (PIPELINE_DEPTH, "text/plain", plaintext_body),  # the rate is the client's: the answers are these
    "ping": (1, "application/json", ping_body),
    "middleware": (1, "application/json", ping_body),
    "validated": (1, "application/json", echo_body),
    "path-param": (1, "application/json", user_body),
    "authenticated": (1, "application/json", profile_body),
    "database-read": (1, "application/json", db_read_body),
    "database-write": (1, "application/json", db_write_body),
    "handshake": (1, "text/plain", plaintext_body),  # and closed_after_one
    "handshake-full": (1, "text/plain", plaintext_body),  # the same answers; the client offers no session
}


# What a rung adds must really be there: the middleware's headers on the
# response, and the validation and the token check refusing what they must.
def middleware_on_the_response(port, workload, headers):
    for name in ("content-security-policy", "strict-transport-security", "x-content-type-options",
                 "ratelimit-limit", "ratelimit-remaining", "access-control-allow-origin", "vary"):
        expect(name in headers, f"no {name} on the response: {sorted(headers)}")
    origin = next(h.split(":", 1)[1].strip() for h in workload.headers if h.lower().startswith("origin:"))
    expect(headers["access-control-allow-origin"] == origin, f"allowed origin {headers['access-control-allow-origin']}")
    (status, h, _), = fetch(port, workload.path, headers=("Origin: https://not-allowed.example",))
    expect(status == 200 and "access-control-allow-origin" not in h, "a disallowed origin got CORS headers")


def validation_refuses(port, workload, headers):
    for body, status in ((b'{"name":"bench"}', 422), (b'{"name":"bench","n":1,"x":1}', 422), (b"{", 400)):
        (got, _, answer), = fetch(port, workload.path, method="POST", headers=workload.headers, body=body)
        expect(got == status, f"{body!r} answered {got}, not {status}: {answer[:80]!r}")
    (got, _, _), = fetch(port, workload.path, method="POST", body=workload.request_body)
    expect(got == 415, f"a body without Content-Type answered {got}, not 415")


def path_param_refuses(port, workload, headers):
    for bad in ("abc", "0", "9007199254740992"):
        (got, _, answer), = fetch(port, f"/users/{bad}")
        expect(got == 400 and json.loads(answer).get("param") == "id", f"/users/{bad} answered {got} {answer[:80]!r}")


def db_read_refuses(port, workload, headers):
    # A missing row: the largest id there can be (the rows past the 10,000
    # users are the write rows', which a server checked before may have added).
    for path, status in ((f"/db/users/{2 ** 53 - 1}", 404), ("/db/users/0", 400), ("/db/users/abc", 400)):
        (got, _, answer), = fetch(port, path)
        expect(got == status, f"{path} answered {got}, not {status}: {answer[:80]!r}")


def db_write_refuses(port, workload, headers):
    for body, hdrs, status in ((b'{"name":""}', workload.headers, 422), (b"{", workload.headers, 400),
                               (b'{"name":"x"}', (), 415)):
        (got, _, answer), = fetch(port, workload.path, method="POST", headers=hdrs, body=body)
        expect(got == status, f"{body!r} answered {got}, not {status}: {answer[:80]!r}")


def token_required(port, workload, headers):
    (got, h, _), = fetch(port, workload.path)
    expect(got == 401 and "www-authenticate" in h, f"no token answered {got}")
    (got, h, _), = fetch(port, workload.path, headers=("Authorization: Bearer a.b.c",))
    expect(got == 401 and "invalid_token" in h.get("www-authenticate", ""), f"a bad token answered {got}")


EXTRA_CHECKS = {
    "middleware": middleware_on_the_response,
    "validated": validation_refuses,
    "path-param": path_param_refuses,
    "authenticated": token_required,
    "database-read": db_read_refuses,
    "database-write": db_write_refuses,
}


def response_ok(workload, status, headers, body):
    _, content_type, body_ok = CHECKS[workload.name]
    expect(status == workload.status, f"status {status}, not {workload.status}")
    expect(headers.get("content-type", "").startswith(content_type), f"Content-Type {headers.get('content-type')}")
    body_ok(body)


def check_workloads(bench, build):
    ctx = bench.Context(bench.parse_args(["--build", build, "--idle-connections", "0"]))
    failures, checked = [], 0
    missing_checks = set(bench.WORKLOADS) - set(CHECKS)
    for name in sorted(missing_checks):
        failures.append(f"workload '{name}' has no check here: write down what it must do")
    for name, w in bench.WORKLOADS.items():
        if name not in CHECKS:
            continue
        count, _, body_ok = CHECKS[name]
        try:
            if w.check_body:
                body_ok(w.body)  # what the client is told to compare every response with
        except AssertionError as e:
            failures.append(f"the harness expects a body for '{name}' that its description does not: {e}")
        if w.pipelined != (count > 1):
            failures.append(f"workload '{name}' pipelined={w.pipelined}, its description says otherwise")
    pairs = {}
    for row in bench.all_rows([]):
        pairs.setdefault((row.server.name, row.workload.name), row)
    for (server_name, workload_name), row in pairs.items():
        label = f"{server_name}/{workload_name}"
        if workload_name not in CHECKS or not row.server.http:
            continue  # pgbench's rows have no HTTP server: tests/bench/database_test.py runs them
        reason = row.server.missing(ctx)
        if reason:
            failures.append(f"{label}: {reason} (tools/install-deps.sh installs the peers)")
            print(f"FAIL  {label}: {reason}")
            continue
        running = None
        try:
            w = row.workload
            # The database rows' servers get the run's cluster (ringhttp: --db and --db-pool), as the harness does.
            extra = row.server.database_args(ctx, row.variant) if w.database else ()
            running = bench.Running(ctx, row.server, row.variant, extra)
            if w.database:
                database_ready(running.port)
            # Over HTTPS: the run's CA trusted, 127.0.0.1 verified, with Python's ssl (not the harness's code).
            tls = ssl.create_default_context(cafile=ctx.certificates().ca) if row.server.tls else None
            count = CHECKS[workload_name][0]
            responses = fetch(running.port, concrete(w.path), count, w.method,
                              tuple(ctx.resolve(h) for h in w.headers), concrete(w.request_body), tls)
            expect(len(responses) == count, f"{len(responses)} responses to {count} requests")
            for i, r in enumerate(responses):
                try:
                    response_ok(w, *r)
                except AssertionError as e:
                    raise AssertionError(f"response {i + 1} of {count}: {e}")
            if workload_name in EXTRA_CHECKS:
                EXTRA_CHECKS[workload_name](running.port, w, responses[0][1])
            if w.requests_per_connection:
                closed_after_one(running.port, w, tls)
            checked += 1
            print(f"ok    {label}: {row.workload.description}")
        except (AssertionError, OSError, bench.StartError, ValueError) as e:
            failures.append(f"{label}: {e}")
            print(f"FAIL  {label}: {e}")
        finally:
            if running:
                running.stop()
    ctx.close()  # the database rows' cluster, if one was started
    ctx.remove()  # its private directory, the TLS rows' CA among it
    expect(checked > 0 or failures, "nothing was checked")
    return failures, checked


def run_harness(build, *args):
    out = tempfile.mkdtemp(prefix="ringhttp-bench-test.")
    cmd = [sys.executable, os.path.join(ROOT, "bench", "bench.py"), "--build", build, "--out", out,
           "--iterations", "1", "--warmup", "0", "--duration", "1", "--idle-connections", "0",
           "--connections", "8", "--cool-down", "0", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    results = [os.path.join(out, f) for f in os.listdir(out) if f.endswith(".json")]
    report = json.load(open(results[0])) if results else None
    return r, report


def fake(name, *args):
    """A --server for bench.py: tests/bench/fake_server.py with these arguments."""
    return f"{name}={sys.executable} {os.path.join(HERE, 'fake_server.py')} {{port}} {' '.join(args)}"


def failing_row(build, name, fake_args, must_classes, must_not_classes):
    """The harness against a fake server whose every answer is wrong: exit 1,
    the row named on stderr, and the client's error classes (its JSON report's
    `errors`, as the run record keeps them) say which check failed."""
    failures = []
    row = f"{name}/plaintext"
    # A server that never answers rightly has no cold start; 2 s is enough to
    # find that out here (the default waits 10).
    r, report = run_harness(build, "--server", fake(name, *fake_args), "--only", row, "--start-wait", "2")
    if r.returncode != 1:
        failures.append(f"{row}: the harness exited {r.returncode}, not 1:\n{r.stderr}")
    if f"FAILED rows: {row}" not in r.stderr:
        failures.append(f"{row}: the failing row is not named on stderr:\n{r.stderr}")
    if not report:
        return failures + [f"{row}: no results JSON was written"]
    runs = report["runs"].get(row) or []
    classes = runs[0].get("error_classes") if runs else None
    if not classes:
        return failures + [f"{row}: the run has no error classes: {runs}"]
    for c in must_classes:
        if not classes.get(c):
            failures.append(f"{row}: no '{c}' errors counted: {classes}")
    for c in must_not_classes:
        if classes.get(c):
            failures.append(f"{row}: '{c}' errors counted where only the body was wrong: {classes}")
    if not any(f"{c} " in r.stderr for c in must_classes):
        failures.append(f"{row}: stderr does not name the error class:\n{r.stderr}")
    return failures


def check_exit_status(build):
    # 500 with the body 'broken': the status is wrong, and so is the body.
    failures = failing_row(build, "answers500", ("--status", "500", "--body", "broken"), ("status",), ())
    # 200 with a body of the right length but the wrong bytes: only the body check can see it.
    failures += failing_row(build, "wrongbody", ("--body", "Hello,World!!"), ("body",), ("status",))

    r, report = run_harness(build, "--only", "ringhttp/plaintext")
    if r.returncode != 0:
        failures.append(f"against ringhttp the harness exited {r.returncode}, not 0:\n{r.stdout[-2000:]}\n{r.stderr}")
    elif report:
        s = report["summaries"][0]
        if not (s["row"] == "ringhttp/plaintext" and s["errors"] == 0 and s["rps"] and s["server_cpu_us"]):
            failures.append(f"a passing run's summary lacks its figures: {s}")
    print(("ok" if not failures else "FAIL") + "    the harness exits 1 naming a row whose requests fail, and the "
          "error class (status for a 500, body for a wrong body), 0 otherwise")
    return failures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    a = p.parse_args()
    bench = load_harness()
    failures, _ = check_workloads(bench, os.path.realpath(a.build))
    failures += check_exit_status(os.path.realpath(a.build))
    if failures:
        print("\n".join(["", "FAILURES:"] + failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
