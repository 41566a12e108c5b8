#!/usr/bin/env python3
"""ringhttp's main benchmark: real servers on real sockets, the seeds' method.

Usage: bench/bench.py [options]        (tools/bench.sh installs, builds, then runs this)

  --build DIR          meson build directory with server, client and floors (default build-release)
  --only LIST          rows to run, comma-separated: row ids (ringhttp/json, ringhttp/plaintext/wrk),
                       server names (nginx), workload names (json), generator (wrk), or 'all'
  --duration S         measured seconds per run (default 10)
  --warmup S           warm-up seconds per run, not reported (default 3)
  --connections N      connections (default 128)
  --iterations N       runs per row, each with a freshly started server (default 3)
  --pipeline N         requests per send in the pipelined workload (default 16)
  --quick              one short iteration (1 s warm-up, 2 s measured): a smoke test
  --compare AXIS       ringhttp variations instead of the default rows, each with its ratio to
                       the default variant: uring, send, alloc, shards (comma-separated for several)
  --build-glibc DIR    a -Dallocator=system build, for --compare alloc (default <build>-glibc)
  --idle-connections L  the memory row's counts of idle connections, comma-separated, 'max' the most a
                       server's descriptor limit allows (default 1000,10000,max; 0 skips the row)
  --start-wait S       seconds a started server has to answer its first request (default 10)
  --cool-down S        seconds between runs (default 1)
  --server NAME=CMD    also benchmark your own server: CMD is run with {port} replaced (repeatable)
  --list               print the workloads and rows (--json for machine-readable) and exit
  --json               with --list: JSON
  --out DIR            where results go (default results/)

Method (docs/BENCHMARKS.md): each run starts the server fresh, pinned to CPU 0
with one shard; the load generator (ringhttp's client, one thread) is pinned to
CPU 1; it warms up (not reported), then measures; the server's utime+stime from
/proc/PID/stat over the measured window divided by the responses is the server
CPU per request, the column to compare. Every response is checked (status and
body). Iterations are the outer loop; medians and [min-max] are reported. Any
failed request fails its row and the exit status is 1, naming the row. Cold
start is exec to the first right answer to GET /plaintext, for every server.
"""
import argparse
import base64
import dataclasses
import datetime
import hashlib
import hmac
import json
import os
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(ROOT, "bench", "peers")
CLK_TCK = os.sysconf("SC_CLK_TCK")

SERVER_CPUS = "0"            # the server under test, one shard
CLIENT_CPU = "1"             # the load generator, one thread
START_WAIT_S = 10            # a server not answering its first request by then has failed to start
STOP_WAIT_S = 5              # SIGTERM, then SIGKILL after this long
COOL_DOWN_S = 1              # between runs, so one run's TIME_WAIT and softirq backlog do not land on the next
GENERATOR_GRACE_S = 30       # a generator still running this long after its window has hung
COLD_START_SPAWNS = 3        # cold start is the median of this many spawns
# Every server answers this as the plaintext workload does; cold start ends at
# its first right answer, the same request for every server.
READY_PATH = "/plaintext"
IDLE_CONNECTIONS = "1000,10000,max"  # the memory row's counts; max: what a server's descriptor limit allows
IDLE_CONNECTIONS_CAP = 100_000       # max never asks past this, where descriptors allow a million
SERVER_FD_MARGIN = 256       # descriptors a server keeps beyond its idle connections (listener, ring, stdio, ...)
HOLDER_CONNECTIONS_MAX = 8192   # idle connections per holder process (the memory row's clients)
HOLDER_FD_MARGIN = 64        # descriptors a holder keeps beyond its connections
HOLDERS_MIN = 2              # the connections are always spread over processes and source addresses
IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)  # <linux/in.h>
IDLE_OPEN_TIMEOUT_S = 10     # connect and the one answer, per idle connection
IDLE_OPEN_BUDGET_S = 0.01    # ... and per connection for a whole count, on top
MEMORY_SETTLE_S = 0.5        # after the last answer, before RSS is read
STREAM_BYTES = 65536
STREAM_PERIOD = 251          # ringhttp's /stream: byte i is i mod 251
PLAINTEXT = b"Hello, World!"
JSON_BODY = b'{"message":"Hello, World!"}'
PING_BODY = b'{"ok":true}'
BENCH_ORIGIN = "https://bench.example"   # the origin the middleware row sends, on the server's allow-list
# The middleware row's rate limit: per address per second, far above what one
# run sends, so every request pays for the limiter and none is refused.
BENCH_RATE_LIMIT = 10_000_000
ECHO_REQUEST = b'{"name":"bench","n":21}'
ECHO_BODY = b'{"hello":"bench","doubled":42}'
USER_ID = 12345
USER_BODY = b'{"id":12345,"name":"user-12345"}'
TOKEN_SUBJECT = "bench-user"
PROFILE_BODY = b'{"sub":"bench-user"}'
TOKEN_LIFETIME_S = 86_400    # far past any run; the server checks exp on every request


def stream_body(n):
    return bytes(i % STREAM_PERIOD for i in range(n))


# ---------------------------------------------------------------------------
# Workloads: what is asked and what every response must be.

@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    path: str
    description: str
    body: bytes            # every response's body must equal this
    pipelined: bool = False
    method: str = "GET"
    headers: tuple = ()    # "Name: value"; "{token}" is the run's bearer token
    request_body: bytes = b""
    ladder: bool = False   # a rung of the seeds' ladder (docs/BENCHMARKS.md)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint_token(secret, subject, lifetime_s):
    """An HS256 JWT, signed here with Python's hmac (not the server's code)."""
    now = int(time.time())
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps({"sub": subject, "iat": now, "exp": now + lifetime_s},
                                separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode()
    return f"{header}.{payload}." + b64url(hmac.new(secret, signing_input, hashlib.sha256).digest())


WORKLOADS = {w.name: w for w in [
    Workload("plaintext", "/plaintext", "GET /plaintext: 'Hello, World!', text/plain", PLAINTEXT),
    Workload("json", "/json", 'GET /json: {"message":"Hello, World!"}, application/json (ringhttp and node '
             'serialize it per request; nginx and h2o send fixed bytes)', JSON_BODY),
    Workload("stream-64k", f"/stream?bytes={STREAM_BYTES}",
             f"GET {STREAM_BYTES} bytes of application/octet-stream, byte i = i mod {STREAM_PERIOD} "
             "(nginx and h2o send it from a file)",
             stream_body(STREAM_BYTES)),
    Workload("pipelined", "/plaintext", "GET /plaintext, --pipeline requests (default 16) per send", PLAINTEXT,
             pipelined=True),
    # The seeds' ladder: plaintext and json above, then each rung adds one piece.
    Workload("ping", "/ping", 'GET /ping: {"ok":true} from the route table', PING_BODY, ladder=True),
    Workload("middleware", "/mw/ping", "GET /mw/ping: the ping route behind security headers, CORS (an allowed "
             "Origin, echoed) and a per-address token-bucket rate limiter that never refuses in a run",
             PING_BODY, headers=(f"Origin: {BENCH_ORIGIN}",), ladder=True),
    Workload("validated", "/echo", 'POST /echo {"name":"bench","n":21}: JSON body parsed and validated '
             '(simdjson On-Demand), answered {"hello":"bench","doubled":42}', ECHO_BODY, method="POST",
             headers=("Content-Type: application/json",), request_body=ECHO_REQUEST, ladder=True),
    Workload("path-param", f"/users/{USER_ID}", f"GET /users/{USER_ID}: the id validated as an integer "
             f"1..2^53-1, answered with id and name", USER_BODY, ladder=True),
    Workload("authenticated", "/profile", "GET /profile with a valid HS256 bearer token: signature, alg, exp "
             "and nbf checked on every request (no cache), answered with the token's sub", PROFILE_BODY,
             headers=("Authorization: Bearer {token}",), ladder=True),
]}
# The rungs in the seeds' order, with the goal each has against json (issue 5):
# a ratio for ping, an added µs figure for the others.
LADDER = [("plaintext", None), ("json", None), ("ping", ("ratio", 1.05)), ("middleware", ("plus", 0.5)),
          ("validated", ("plus", 1.0)), ("path-param", None), ("authenticated", ("plus", 1.5))]
# The seeds' own figures (Apple M1 Pro, Node 24, their framework): µs more than
# bare node:http's 17.6 µs, or than the rung before, from ../shared/seeds.
SEEDS_LADDER = {"ping": "34.9 (+17 over node:http)", "middleware": "46.9 (+12)", "validated": "48.4 (+13)",
                "authenticated": "68.4 (+33)"}


# ---------------------------------------------------------------------------
# Servers: how each one is started, what it can serve, why it cannot run.

class Server:
    name = ""
    kind = "peer"           # control | ours | peer | custom
    workloads = ()
    memory_row = True       # a real server; the floors' fixed 4096-slot tables are not

    def missing(self, ctx):
        return None

    def command(self, ctx, port, rundir, variant):
        """Returns (argv, extra environment)."""
        raise NotImplementedError

    def version(self, ctx):
        return ""

    def clean_exit(self, code):
        return code in (0, -signal.SIGTERM)


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


class Floor(Server):
    kind = "control"
    workloads = ("plaintext", "pipelined")
    memory_row = False

    def __init__(self, flavour):
        self.name = f"floor-{flavour}"

    def binary(self, ctx):
        return os.path.join(ctx.build, "bench", "floor", self.name)

    def missing(self, ctx):
        return None if os.access(self.binary(ctx), os.X_OK) else f"{self.binary(ctx)} is not built"

    def command(self, ctx, port, rundir, variant):
        return [self.binary(ctx), "--port", str(port)], {}

    def clean_exit(self, code):
        return code == 0


class Ringhttp(Server):
    name = "ringhttp"
    kind = "ours"
    workloads = tuple(WORKLOADS)

    def binary(self, ctx, build=None):
        return os.path.join(build or ctx.build, "server", "server")

    def missing(self, ctx):
        return None if os.access(self.binary(ctx), os.X_OK) else f"{self.binary(ctx)} is not built"

    def command(self, ctx, port, rundir, variant):
        build = ctx.build_glibc if variant and variant.glibc_build else ctx.build
        argv = [self.binary(ctx, build), "--address", "127.0.0.1", "--port", str(port)]
        argv += variant.args if variant and variant.args else ["--shards", "1", "--cpus", "0"]
        # What the ladder's rungs need; the other routes do not look at it.
        argv += ["--jwt-secret-file", ctx.jwt_secret_file, "--cors-origin", BENCH_ORIGIN,
                 "--rate-limit", str(BENCH_RATE_LIMIT)]
        if variant and variant.extra_args:
            argv += variant.extra_args
        env = {}
        if variant and variant.preload:
            env["LD_PRELOAD"] = variant.preload
        return argv, env

    def version(self, ctx):
        return first_line([self.binary(ctx), "--version"])

    def clean_exit(self, code):
        return code == 0  # documented: SIGTERM drains and exits 0


class Nginx(Server):
    name = "nginx"
    workloads = ("plaintext", "json", "stream-64k", "pipelined")

    def missing(self, ctx):
        return None if shutil.which("nginx") else "nginx is not installed (Debian: nginx-light)"

    def command(self, ctx, port, rundir, variant):
        with open(os.path.join(PEERS, "nginx.conf")) as f:
            conf = f.read().replace("@PORT@", str(port)).replace("@RUNDIR@", rundir)
        # Its descriptor limit fits the memory row's largest count (Context).
        # nginx closes idle keep-alive connections ("reusing connections") to
        # keep a sixteenth of its table free: its table is that much larger,
        # and the descriptor limit still bounds what it holds.
        conf = conf.replace("@CONNECTIONS@", str(ctx.server_connections))
        conf = conf.replace("@WORKER_CONNECTIONS@", str(-(-ctx.server_connections * 16 // 15)))
        path = os.path.join(rundir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        write_bodies(rundir, {"stream.bin": WORKLOADS["stream-64k"].body})
        return [shutil.which("nginx"), "-p", rundir, "-c", path, "-e", "stderr"], {}

    def version(self, ctx):
        return first_line(["nginx", "-v"])


class H2o(Server):
    name = "h2o"
    workloads = ("plaintext", "json", "stream-64k", "pipelined")

    def missing(self, ctx):
        return None if shutil.which("h2o") else "h2o is not installed (Debian: h2o)"

    def command(self, ctx, port, rundir, variant):
        docroot = os.path.join(rundir, "docroot")
        os.makedirs(docroot, exist_ok=True)
        write_bodies(docroot, {"plaintext.txt": PLAINTEXT, "json.json": JSON_BODY,
                               "stream.bin": WORKLOADS["stream-64k"].body})
        # h2o drops to `nobody`: the private directory must be readable by it.
        for d in (rundir, docroot):
            os.chmod(d, 0o755)
        with open(os.path.join(PEERS, "h2o.conf")) as f:
            conf = f.read().replace("@PORT@", str(port)).replace("@DOCROOT@", docroot)
        conf = conf.replace("@CONNECTIONS@", str(ctx.server_connections))  # the memory row's largest count fits
        path = os.path.join(rundir, "h2o.conf")
        with open(path, "w") as f:
            f.write(conf)
        return [shutil.which("h2o"), "-c", path], {}

    def version(self, ctx):
        return first_line(["h2o", "--version"])


class Node(Server):
    name = "node"
    workloads = ("plaintext", "json", "stream-64k", "pipelined")

    def missing(self, ctx):
        return None if shutil.which("node") else "node is not installed (Debian: nodejs)"

    def command(self, ctx, port, rundir, variant):
        return [shutil.which("node"), os.path.join(PEERS, "node_http.js"), str(port)], {}

    def version(self, ctx):
        return "node " + first_line(["node", "--version"])


class Custom(Server):
    kind = "custom"
    workloads = tuple(w.name for w in WORKLOADS.values() if not w.ladder)

    def __init__(self, name, cmd):
        self.name = name
        self.cmd = cmd

    def command(self, ctx, port, rundir, variant):
        return shlex.split(self.cmd.replace("{port}", str(port))), {}


def write_bodies(directory, files):
    for name, data in files.items():
        path = os.path.join(directory, name)
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o644)


# ---------------------------------------------------------------------------
# Rows: a server (perhaps a variant of it), a workload, a generator.

@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    args: tuple = ()          # replaces the default "--shards 1 --cpus 0"
    extra_args: tuple = ()
    preload: str = ""
    glibc_build: bool = False
    cpus: str = SERVER_CPUS
    expect_allocator: str = ""  # the start-up line's allocator= must say this
    expect_uring: str = ""      # ... its uring= list must name this
    expect_send: str = ""       # ... its send= must say this


@dataclasses.dataclass(frozen=True)
class Row:
    server: Server
    workload: Workload
    generator: str = "client"   # client | wrk
    variant: Variant = None
    axis: str = ""
    default: bool = False       # in the run without --only

    @property
    def id(self):
        name = self.server.name + (f":{self.variant.name}" if self.variant else "")
        return f"{name}/{self.workload.name}" + ("/wrk" if self.generator == "wrk" else "")

    @property
    def instance(self):
        """Which started process this row's cold start and memory belong to."""
        return self.server.name + (f":{self.variant.name}" if self.variant else "")


SERVERS = [Floor("epoll"), Floor("uring"), Ringhttp(), Nginx(), H2o(), Node()]
BY_NAME = {s.name: s for s in SERVERS}

# The default run: about twelve minutes (3 x 13 s per row, plus start-ups).
DEFAULT_ROWS = {
    "floor-epoll/plaintext", "floor-uring/plaintext", "ringhttp/plaintext", "ringhttp/json",
    "ringhttp/ping", "ringhttp/middleware", "ringhttp/validated", "ringhttp/path-param", "ringhttp/authenticated",
    "ringhttp/stream-64k", "floor-uring/pipelined", "ringhttp/pipelined", "nginx/plaintext",
    "h2o/plaintext", "node/json", "ringhttp/plaintext/wrk",
}
WRK_ROWS = [("ringhttp", "plaintext"), ("ringhttp", "pipelined"), ("ringhttp", "stream-64k"),
            ("floor-uring", "plaintext"), ("floor-uring", "pipelined")]

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"          # Debian libjemalloc2
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"  # Debian libtcmalloc-minimal4

AXES = {
    # axis: (workloads, variants; the first variant is the default the others are divided by)
    "uring": (("plaintext", "pipelined"), [
        Variant("all"),
        Variant("6.1", extra_args=("--uring", "6.1")),
        Variant("6.0", extra_args=("--uring", "6.0")),
        Variant("5.19", extra_args=("--uring", "5.19")),
        Variant("5.10", extra_args=("--uring", "5.10")),
        Variant("sqpoll", extra_args=("--uring", "all,sqpoll"), expect_uring="sqpoll"),
    ]),
    "send": (("plaintext", "stream-64k"), [
        Variant("sendmsg", extra_args=("--send", "sendmsg"), expect_send="sendmsg"),
        Variant("writev", extra_args=("--send", "writev"), expect_send="writev"),
        Variant("zc", extra_args=("--send", "zc"), expect_send="zc"),
    ]),
    "alloc": (("json", "pipelined"), [
        Variant("mimalloc", expect_allocator="mimalloc"),
        Variant("glibc", glibc_build=True, expect_allocator="glibc"),
        Variant("jemalloc", glibc_build=True, preload=JEMALLOC, expect_allocator="jemalloc"),
        Variant("tcmalloc", glibc_build=True, preload=TCMALLOC, expect_allocator="tcmalloc"),
    ]),
    "shards": (("plaintext", "pipelined"), [
        Variant("1-shard"),
        Variant("2-shards", args=("--shards", "2", "--cpus", "0,1"), cpus="0,1"),
    ]),
}


def all_rows(custom):
    rows = []
    for s in SERVERS + custom:
        for w in s.workloads:
            r = Row(s, WORKLOADS[w])
            rows.append(dataclasses.replace(r, default=r.id in DEFAULT_ROWS or s.kind == "custom"))
    for s, w in WRK_ROWS:
        r = Row(BY_NAME[s], WORKLOADS[w], generator="wrk")
        rows.append(dataclasses.replace(r, default=r.id in DEFAULT_ROWS))
    return rows


def axis_rows(axes):
    rows = []
    for axis in axes:
        workloads, variants = AXES[axis]
        for w in workloads:
            for v in variants:
                rows.append(Row(BY_NAME["ringhttp"], WORKLOADS[w], variant=v, axis=axis, default=True))
    return rows


def usage_error(message):
    print(f"bench: {message}", file=sys.stderr)
    raise SystemExit(2)


def select(rows, only):
    if not only:
        return [r for r in rows if r.default]
    wanted = [t for t in only.split(",") if t]
    chosen = []
    for token in wanted:
        hits = [r for r in rows if token in ("all", r.id, r.server.name, r.workload.name, r.instance)
                or (token == "wrk" and r.generator == "wrk")]
        if not hits:
            usage_error(f"--only: nothing is named '{token}' (bench/bench.py --list shows the rows)")
        chosen += [r for r in hits if r not in chosen]
    return [r for r in rows if r in chosen]  # in the table's order


# ---------------------------------------------------------------------------
# Processes.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime: every thread of the process


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def read_response(sock, buf):
    """Reads one Content-Length-framed response; returns (status, body, leftover bytes)."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("closed before a response")
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    m = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    length = int(m.group(1)) if m else 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError("closed inside a body")
        rest += chunk
    return status, rest[:length], rest[length:]


def get_once(port, path, deadline):
    """One GET on a new connection: (status, body), or None when there was no
    complete answer (refused, closed, reset, or nothing by the deadline). A
    connection the kernel has accepted for a server that is not yet serving
    waits here until the server answers it."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=max(0.001, deadline - time.monotonic())) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            status, body, _ = read_response(s, b"")
            return status, body
    except (OSError, ValueError, IndexError):
        return None


class Running:
    """One started server: its process, port and start-up output.

    It is started when it has answered a request: GET /plaintext on a new
    connection, polled every millisecond from exec. `answered_s` is the time to
    the first complete answer, whatever it said; with right_answer=True the
    polling goes on through wrong answers (a status other than 200, or a body
    other than the plaintext workload's) until the right one, and
    `answered_right_s` is the cold start. A connection accepted by the kernel
    as soon as a listener exists is not an answer: a server whose threads and
    rings are not running yet keeps the request waiting, and that wait counts."""

    live = set()  # stopped on the way out, whatever happens

    def __init__(self, ctx, server, variant=None, extra_args=(), right_answer=False):
        self.server = server
        self.variant = variant
        self.port = free_port()
        self.rundir = tempfile.mkdtemp(prefix=f"ringhttp-bench-{server.name}.")
        argv, env = server.command(ctx, self.port, self.rundir, variant)
        argv = argv + list(extra_args)
        cpus = variant.cpus if variant else SERVER_CPUS
        self.out_path = os.path.join(self.rundir, "stdout")
        self.err_path = os.path.join(self.rundir, "stderr")
        full_env = dict(os.environ, **env)
        self.started = time.monotonic()
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(["taskset", "-c", cpus] + argv, stdout=out, stderr=err,
                                         stdin=subprocess.DEVNULL, env=full_env, cwd=self.rundir)
        Running.live.add(self)
        self.answered_s = self.answered_right_s = None
        wait_s = ctx.start_wait
        deadline = self.started + wait_s
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise StartError(f"{server.name} exited with status {self.proc.returncode} during start-up: "
                                 + self.tail())
            answer = get_once(self.port, READY_PATH, deadline)
            if answer is not None:
                now = time.monotonic() - self.started
                if self.answered_s is None:
                    self.answered_s = now
                if not right_answer:
                    return
                if answer == (200, PLAINTEXT):
                    self.answered_right_s = now
                    return
                last = answer
            time.sleep(0.001)
        self.stop()
        if last is not None:
            raise WrongAnswer(f"{server.name} never answered GET {READY_PATH} with 200 and {PLAINTEXT!r} within "
                              f"{wait_s:g} s: its last answer was {last[0]} {last[1][:40]!r}")
        raise StartError(f"{server.name} did not answer GET {READY_PATH} within {wait_s:g} s: {self.tail()}")

    @property
    def pid(self):
        return self.proc.pid

    def tail(self):
        try:
            with open(self.err_path, errors="replace") as f:
                lines = f.read().strip().splitlines()
            return " | ".join(lines[-3:]) or "(no stderr)"
        except OSError:
            return "(no stderr)"

    def startup_line(self):
        """The first line the server printed; a server can answer before it
        has printed it."""
        deadline = time.monotonic() + START_WAIT_S
        while True:
            with open(self.out_path, errors="replace") as f:
                line = f.readline()
            if line.endswith("\n") or time.monotonic() > deadline or self.proc.poll() is not None:
                return line.strip()
            time.sleep(0.001)

    def cmdline(self):
        """The arguments the running process was started with, as the kernel has them."""
        try:
            with open(f"/proc/{self.pid}/cmdline", "rb") as f:
                return [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
        except OSError:
            return []

    def maps_mention(self, path):
        base = os.path.basename(path)
        try:
            with open(f"/proc/{self.pid}/maps") as f:
                return base in f.read()
        except OSError:
            return False

    def stop(self):
        """SIGTERM, bounded wait, SIGKILL. Returns the exit status (negative: a signal)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        Running.live.discard(self)
        shutil.rmtree(self.rundir, ignore_errors=True)
        return self.proc.returncode


class StartError(Exception):
    pass


class WrongAnswer(StartError):
    """The server answers, but never rightly: its rows still run, and their
    client names what is wrong with every response."""


def run_bounded(argv, timeout_s):
    """Runs argv, killing it after timeout_s; returns (exit status or None on timeout, stdout, stderr)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        out, err = proc.communicate(timeout=timeout_s)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        code = None
    return code, out.decode(errors="replace"), err.decode(errors="replace")


def child_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


# ---------------------------------------------------------------------------
# One measured run of a row.

def run_client(ctx, row, running):
    w = row.workload
    url = f"http://127.0.0.1:{running.port}{w.path}"
    argv = ["taskset", "-c", CLIENT_CPU, ctx.client, "-t", "1", "--cpus", CLIENT_CPU,
            "-c", str(ctx.connections), "-w", f"{ctx.warmup}s", "-d", f"{ctx.duration}s",
            "--server-pid", str(running.pid), "--json", "--expect-status", "200",
            "--expect-body-file", ctx.body_file(w)]
    if w.method != "GET":
        argv += ["-m", w.method]
    for h in w.headers:
        argv += ["-H", ctx.resolve(h)]
    if w.request_body:
        argv += ["--body-file", ctx.request_body_file(w)]
    if w.pipelined:
        argv += ["-p", str(ctx.pipeline)]
    argv.append(url)
    code, out, err = run_bounded(argv, ctx.warmup + ctx.duration + GENERATOR_GRACE_S)
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
        "p50_ms": lat.get("p50", 0) / 1000, "p99_ms": lat.get("p99", 0) / 1000,
        "p999_ms": lat.get("p99_9", 0) / 1000,
        "errors": report["errors_total"], "error_classes": {k: v for k, v in report["errors"].items() if v},
        "client": report,
    }
    if code != 0 or report["errors_total"] or not report["requests"]:
        result["failure"] = (f"{report['errors_total']} failed requests "
                             f"({', '.join(f'{k} {v}' for k, v in result['error_classes'].items()) or 'none'}), "
                             f"{report['requests']} answered, client exit {code}")
    return result


WRK_SIZE = {"B": 1, "KB": 1024, "MB": 1024 ** 2, "GB": 1024 ** 3}
WRK_TIME_MS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def parse_wrk(text):
    m = re.search(r"(\d+) requests in ([\d.]+)(\w+),", text)
    if not m:
        return None
    r = {"requests": int(m.group(1))}
    m = re.search(r"Requests/sec:\s+([\d.]+)", text)
    r["rps"] = float(m.group(1)) if m else 0.0
    m = re.search(r"Transfer/sec:\s+([\d.]+)(\w+)", text)
    r["bytes_per_s"] = float(m.group(1)) * WRK_SIZE.get(m.group(2), 1) if m else 0.0
    for pct, key in (("50", "p50_ms"), ("99", "p99_ms")):
        m = re.search(rf"^\s+{pct}%\s+([\d.]+)(\w+)", text, re.M)
        r[key] = float(m.group(1)) * WRK_TIME_MS.get(m.group(2), 1) if m else None
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


def run_wrk(ctx, row, running):
    w = row.workload
    url = f"http://127.0.0.1:{running.port}{w.path}"

    def argv(seconds, latency):
        a = ["taskset", "-c", CLIENT_CPU, "wrk", "-t1", f"-c{ctx.connections}", f"-d{seconds}s"]
        if latency:
            a.append("--latency")
        if w.pipelined:
            return a + ["-s", os.path.join(PEERS, "pipeline.lua"), url, "--", str(ctx.pipeline)]
        return a + [url]

    if ctx.warmup > 0:
        code, out, err = run_bounded(argv(ctx.warmup, False), ctx.warmup + GENERATOR_GRACE_S)
        if code != 0:
            return {"failure": f"wrk warm-up exited {code}: {err.strip()[-300:]}"}
    before_ticks = cpu_ticks(running.pid)
    before_cpu = child_cpu_s()
    code, out, err = run_bounded(argv(ctx.duration, True), ctx.duration + GENERATOR_GRACE_S)
    wrk_cpu = child_cpu_s() - before_cpu  # wrk was the only child reaped meanwhile
    after_ticks = cpu_ticks(running.pid)
    r = parse_wrk(out) if code == 0 else None
    if r is None:
        return {"failure": f"wrk exited {code}: {(err or out).strip()[-300:]}"}
    if w.pipelined:
        r["p50_ms"] = r["p99_ms"] = None  # wrk's percentiles read 0 when a script pipelines
    n = r["requests"]
    r["server_cpu_us"] = (after_ticks - before_ticks) / CLK_TCK * 1e6 / n if n else None
    r["client_cpu_us"] = wrk_cpu * 1e6 / n if n else None
    r["wrk"] = out
    if r["errors"] or not n:
        r["failure"] = (f"{r['errors']} failed requests ("
                        + (", ".join(f"{k} {v}" for k, v in r["error_classes"].items()) or "none")
                        + f"), {n} answered")
    return r


def measure(ctx, row, right_answer=True):
    """Starts the row's server, runs its generator, stops the server. Returns one run's record.
    The generator starts once the server has answered rightly, as for cold
    start; with right_answer=False (a server whose cold start found it never
    does), once it has answered at all, so that the generator names what is
    wrong."""
    try:
        running = Running(ctx, row.server, row.variant, right_answer=right_answer)
    except StartError as e:
        return {"failure": str(e)}
    record = {}
    try:
        confirm_variant(ctx, row, running, record)
        if "failure" not in record:
            record.update(run_client(ctx, row, running) if row.generator == "client" else run_wrk(ctx, row, running))
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


# The start-up line's fields a variant is confirmed by.
CONFIRMED_FIELDS = ("shards", "cpus", "allocator", "uring", "send")


def startup_fields(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def variant_flags(variant):
    """The server flags that make a variant, in two parts: its placement (the
    default: one shard on CPU 0) and its switches. Written apart from
    Ringhttp.command on purpose: it is what the running server is held to."""
    placement = tuple(variant.args) if variant and variant.args else ("--shards", "1", "--cpus", SERVER_CPUS)
    return placement, tuple(variant.extra_args) if variant else ()


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
    if v and v.expect_uring and v.expect_uring not in fields.get("uring", "").split(","):
        problems.append(f"{v.expect_uring} asked for, the server runs uring={fields.get('uring', '?')}")
    if v and v.expect_send and fields.get("send") != v.expect_send:
        problems.append(f"send={v.expect_send} asked for, the server reports send={fields.get('send', '?')}")
    if problems:
        record["failure"] = f"{row.instance} is not the variant asked for: " + "; ".join(problems)


# ---------------------------------------------------------------------------
# Cold start: once per server instance.

def cold_start(ctx, server, variant):
    """Exec to the first right answer to GET /plaintext (see Running), the
    median of COLD_START_SPAWNS spawns. A server that never answers rightly
    raises WrongAnswer on its first spawn."""
    times = []
    for _ in range(COLD_START_SPAWNS):
        running = Running(ctx, server, variant, right_answer=True)
        times.append(running.answered_right_s)
        running.stop()
    return statistics.median(times) * 1000


# ---------------------------------------------------------------------------
# The memory row: RSS growth per idle keep-alive connection at several counts.
#
# The connections are held by HOLDERS, forked helper processes, each with its
# own 127.0.0.x source address, so that neither the harness nor any one
# holder needs more descriptors than its limit allows, nor more ephemeral
# ports than one source address has towards one destination.

def descriptor_limits():
    """The soft descriptor limit raised to the hard one (the started servers
    inherit it), and what bounds the memory row's largest count: the hard
    limit (`ulimit -Hn`), which root cannot raise past fs.nr_open, and may
    not be allowed to raise at all (it is not tried)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    with open("/proc/sys/fs/nr_open") as f:
        nr_open = int(f.read())
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = (int(x) for x in f.read().split())
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    hard = hard if hard != resource.RLIM_INFINITY else nr_open
    largest = min(soft, nr_open) - SERVER_FD_MARGIN
    return {"soft": soft, "hard": hard, "nr_open": nr_open, "ephemeral_ports": high - low + 1,
            "largest": max(0, min(largest, IDLE_CONNECTIONS_CAP)),
            "capped": largest > IDLE_CONNECTIONS_CAP}


def idle_counts(text):
    """--idle-connections: '0' (no memory row), or counts and 'max', comma-separated."""
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if tokens == ["0"]:
        return []
    counts = []
    for t in tokens:
        if t != "max" and not (t.isdigit() and int(t) >= 2):
            raise argparse.ArgumentTypeError(f"'{t}': a count of 2 or more, or 'max' (or 0 alone: no memory row)")
        counts.append(t if t == "max" else int(t))
    if not counts:
        raise argparse.ArgumentTypeError("no count given")
    return counts


def resolve_counts(counts, limits):
    """The counts as numbers, 'max' the largest the servers can hold, in
    increasing order; a count past that largest is an error (None, why)."""
    out = sorted({limits["largest"] if c == "max" else c for c in counts})
    if out and out[-1] > limits["largest"]:
        return None, (f"{out[-1]:,} idle connections is more than a server here can hold: the most is "
                      f"{limits['largest']:,}, " + largest_count_reason(limits))
    if out and out[0] < 2:
        return None, f"the most a server here can hold is {limits['largest']}, under 2: " + largest_count_reason(limits)
    return out, None


def largest_count_reason(limits):
    if limits["capped"]:
        return f"the row stops at {IDLE_CONNECTIONS_CAP:,} (IDLE_CONNECTIONS_CAP) though descriptors allow more"
    return (f"the descriptor limit a server inherits ({limits['soft']:,}; ulimit -Hn "
            f"{limits['hard']:,}, fs.nr_open {limits['nr_open']:,}) less {SERVER_FD_MARGIN} for the server's own "
            "descriptors")


def holder_plan(limits, count_max):
    """How many holders, on which source addresses: each under its descriptor
    limit and under one source address's ephemeral ports, and at least
    HOLDERS_MIN so that the spreading is always exercised."""
    per = max(1, min(HOLDER_CONNECTIONS_MAX, limits["soft"] - HOLDER_FD_MARGIN,
                     limits["ephemeral_ports"] - HOLDER_FD_MARGIN))
    n = max(HOLDERS_MIN, -(-count_max // per))
    assert n <= 253, f"{n} holders: more than 127.0.0.2-254 has addresses"
    return [f"127.0.0.{2 + i}" for i in range(n)], per


def open_idle(source, port):
    """One keep-alive connection from `source`, one request answered on it."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # The port is picked at connect(), per destination, not at bind():
        # a bound source would otherwise hold a port for every destination.
        s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        s.bind((source, 0))
        s.settimeout(IDLE_OPEN_TIMEOUT_S)
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, _ = read_response(s, b"")
        if status != 200:
            raise OSError(f"status {status}")
    except BaseException:
        s.close()
        raise
    return s


def still_open(sock):
    """Whether the peer has neither closed nor reset this connection (a FIN reads as b"")."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def holder_main(pipe, source):
    """A holder's loop: ("open", port, total) opens connections until it holds
    `total`; ("held",) counts those still open; ("close",) closes them all."""
    socks = []
    while True:
        cmd = pipe.recv()
        if cmd[0] == "open":
            _, port, total = cmd
            try:
                while len(socks) < total:
                    socks.append(open_idle(source, port))
                pipe.send(("ok", len(socks)))
            except (OSError, ValueError, IndexError) as e:
                pipe.send(("error", f"from {source}, connection {len(socks) + 1}: {e or type(e).__name__}"))
        elif cmd[0] == "held":
            pipe.send(("ok", sum(still_open(s) for s in socks)))
        else:
            for s in socks:
                s.close()
            pipe.send(("ok", 0))
            return


class Holders:
    """The holder processes of one memory row, started for it and stopped after."""

    def __init__(self, sources):
        import multiprocessing
        fork = multiprocessing.get_context("fork")
        self.pipes, self.procs = [], []
        for source in sources:
            mine, theirs = fork.Pipe()
            p = fork.Process(target=holder_main, args=(theirs, source), daemon=True)
            p.start()
            theirs.close()
            self.pipes.append(mine)
            self.procs.append(p)

    def ask(self, commands, wait_s):
        """Sends each holder its command, then collects every answer."""
        for pipe, cmd in zip(self.pipes, commands):
            pipe.send(cmd)
        answers = []
        deadline = time.monotonic() + wait_s
        for pipe, proc in zip(self.pipes, self.procs):
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise OSError(f"a holder did not answer within {wait_s:g} s")
            kind, value = pipe.recv()
            if kind != "ok":
                raise OSError(value)
            answers.append(value)
        return answers

    def open_to(self, port, total):
        """Spreads `total` connections over the holders, as evenly as can be."""
        n = len(self.pipes)
        shares = [total // n + (i < total % n) for i in range(n)]
        self.ask([("open", port, s) for s in shares], IDLE_OPEN_TIMEOUT_S * 2 + total * IDLE_OPEN_BUDGET_S)

    def held(self):
        return sum(self.ask([("held",)] * len(self.pipes), IDLE_OPEN_TIMEOUT_S))

    def close(self):
        try:
            self.ask([("close",)] * len(self.pipes), IDLE_OPEN_TIMEOUT_S + 60)
        except (OSError, EOFError):
            pass
        for p in self.procs:
            p.join(timeout=STOP_WAIT_S)
            if p.is_alive():
                p.kill()
                p.join()


def memory_per_connection(ctx, server, variant):
    """RSS growth per idle keep-alive connection at each of ctx.idle_counts,
    each connection having had one request answered, on one server process.

    RSS is read with one connection open, then with each count open; the
    growth is divided by the connections it covers: those still open at that
    reading (a server may have closed some, as ringhttp closes the oldest
    idle one when its table is full), less the one already open at the first.
    The slope is the growth from the previous reading divided by the
    connections held added since, so a figure that holds as the count grows
    shows as a slope equal to it."""
    extra = ("--connections-max", str(ctx.server_connections)) if server.name == "ringhttp" else ()
    record = {"rss_before": None, "points": [], "sources": ctx.holder_sources,
              "holder_connections_max": ctx.holder_connections_max}
    running = Running(ctx, server, variant, extra)
    holders = Holders(ctx.holder_sources)
    try:
        holders.open_to(running.port, 1)
        time.sleep(MEMORY_SETTLE_S / 2)
        record["rss_before"] = prev_rss = rss_bytes(running.pid)
        prev_held = 1
        for count in ctx.idle_counts:
            holders.open_to(running.port, count)
            time.sleep(MEMORY_SETTLE_S)  # let the server finish whatever it does after answering
            rss = rss_bytes(running.pid)
            held = holders.held()
            if running.proc.poll() is not None:
                record["failure"] = f"the server died holding {count} connections"
                break
            if held < 2:
                record["failure"] = f"the server kept {held} of the {count} idle connections open"
                break
            record["points"].append({
                "requested": count, "connections": held, "rss_after": rss,
                "bytes_per_connection": (rss - record["rss_before"]) / (held - 1),
                "slope_bytes_per_connection": (rss - prev_rss) / (held - prev_held) if held > prev_held else None})
            prev_rss, prev_held = rss, held
    except (OSError, EOFError) as e:
        record["failure"] = f"opening {count if record['rss_before'] is not None else 1} connections: {e}"
    finally:
        holders.close()
        running.stop()
    return record


def memory_summary(m):
    """One line for the progress output."""
    parts = [f"{p['bytes_per_connection'] / 1024:.2f} KiB per idle connection at {p['connections']:,}"
             for p in m.get("points", [])]
    if "failure" in m:
        parts.append(f"memory row failed: {m['failure']}")
    return ", " + "; ".join(parts) if parts else ""


# ---------------------------------------------------------------------------
# Environment block.

def environment(ctx, servers):
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    env["cpu"] = f"{model}, {os.cpu_count()} CPUs"
    env["kernel"] = os.uname().release
    with open("/proc/loadavg") as f:
        env["load_average"] = " ".join(f.read().split()[:3])
    env["memory"] = f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.1f} GiB"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    env["commit"] = (commit.stdout.strip() or "no commit") + (" (uncommitted changes)" if dirty else "")
    env["build"] = build_description(ctx.build)
    env["compiler"] = first_line([os.environ.get("CXX", "c++"), "--version"])
    env["liburing"] = first_line(["pkg-config", "--modversion", "liburing"])
    env["io_uring"] = uring_description(ctx)
    for s in servers:
        if s.kind in ("peer", "ours"):
            env[f"{s.name} version"] = s.version(ctx)
    env["wrk version"] = first_line(["wrk", "-v"]) if shutil.which("wrk") else "not installed"
    env["method"] = (f"server pinned to CPU {SERVER_CPUS} (one shard), generator one thread on CPU {CLIENT_CPU}, "
                     f"{ctx.connections} connections, {ctx.warmup} s warm-up (not reported), {ctx.duration} s "
                     f"measured, {ctx.iterations} iteration(s), fresh server per run, {ctx.cool_down:g} s cool-down, "
                     f"pipelined: {ctx.pipeline} per send")
    return env


def build_description(build):
    try:
        out = subprocess.run(["meson", "introspect", "--buildoptions", build], capture_output=True, text=True,
                             timeout=30)
        opts = {o["name"]: o["value"] for o in json.loads(out.stdout)}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return f"{build} (meson introspect failed)"
    args = " ".join(opts.get("cpp_args") or []) or "none"
    return (f"{os.path.relpath(build, ROOT)}: buildtype={opts.get('buildtype')} optimization=-O{opts.get('optimization')} "
            f"debug={opts.get('debug')} b_ndebug={opts.get('b_ndebug')} b_lto={opts.get('b_lto')} "
            f"cpp_args={args} allocator={opts.get('allocator')}")


def uring_description(ctx):
    """What this kernel offers, as ringhttp itself reports it: the default
    feature set (everything but the opt-ins), then whether SQPOLL and
    zero-copy send, which fall back when refused, are really available."""
    server = BY_NAME["ringhttp"]
    if server.missing(ctx):
        return "unknown (ringhttp not built)"
    fields = {}
    for name, extra in (("default", ()), ("opt-in", ("--uring", "all,sqpoll", "--send", "zc"))):
        try:
            running = Running(ctx, server, None, extra)
        except StartError:
            return "unknown (ringhttp did not start)"
        line = running.startup_line()
        running.stop()
        fields[name] = dict(f.split("=", 1) for f in line.split() if "=" in f)
    opt = fields["opt-in"]
    return (f"{fields['default'].get('uring', '?')}; sqpoll "
            f"{'available' if 'sqpoll' in opt.get('uring', '').split(',') else 'refused'}; send zc "
            f"{'available' if opt.get('send') == 'zc' else 'refused'} (ringhttp's own probe; "
            f"allocator={fields['default'].get('allocator', '?')})")


# ---------------------------------------------------------------------------
# Summaries, tables, chart.

def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def summarize(row, runs):
    ok = [r for r in runs if "failure" not in r]
    s = {"row": row.id, "server": row.server.name, "workload": row.workload.name, "generator": row.generator,
         "variant": row.variant.name if row.variant else None, "axis": row.axis, "kind": row.server.kind,
         "iterations": len(runs), "failures": [r["failure"] for r in runs if "failure" in r],
         "errors": sum(r.get("errors", 0) for r in runs)}
    for key in ("rps", "server_cpu_us", "client_cpu_us", "p50_ms", "p99_ms", "p999_ms", "rss_bytes", "bytes_per_s"):
        s[key] = spread([r.get(key) for r in ok])
    return s


def ratio_base(row, summaries):
    """The row a row is divided by: the default variant on an axis, else the io_uring floor."""
    if row.axis:
        base_variant = AXES[row.axis][1][0].name
        return f"ringhttp:{base_variant}/{row.workload.name}"
    if row.workload.ladder:
        return "ringhttp/json"  # each rung's price is its difference from json
    if row.workload.name in ("plaintext", "json"):
        return "floor-uring/plaintext"
    if row.workload.name == "pipelined":
        return "floor-uring/pipelined"
    return None


def generator_comparison(rows, summaries):
    """ringhttp's client against wrk on the same server and workload, same run."""
    lines = []
    for row in rows:
        if row.generator != "wrk":
            continue
        ours = summaries.get(row.id[:-len("/wrk")])
        theirs = summaries[row.id]
        if not ours or not ours["client_cpu_us"] or not theirs["client_cpu_us"] or not theirs["rps"]:
            continue
        lines.append(f"Generators on {ours['row']}: ringhttp's client {ours['client_cpu_us'][0]:.2f} µs/req of its "
                     f"own CPU, wrk {theirs['client_cpu_us'][0]:.2f} "
                     f"({ours['client_cpu_us'][0] / theirs['client_cpu_us'][0]:.2f}×); req/s "
                     f"{ours['rps'][0] / theirs['rps'][0]:.2f}× wrk's.")
    return lines


def ladder_table(summaries):
    """The seeds' ladder on ringhttp: each rung's server CPU µs/req, its
    difference from json measured in the same run, and the goal it has."""
    base = summaries.get("ringhttp/json")
    base_cpu = base and base["server_cpu_us"] and base["server_cpu_us"][0]
    body, verdicts = [], []
    for name, goal in LADDER:
        s = summaries.get(f"ringhttp/{name}")
        if not s or not s["server_cpu_us"]:
            continue
        cpu = s["server_cpu_us"][0]
        delta = cpu - base_cpu if base_cpu else None
        ratio = cpu / base_cpu if base_cpu else None
        goal_text, verdict = "—", ""
        if goal and base_cpu:
            kind, limit = goal
            met = ratio <= limit if kind == "ratio" else delta <= limit
            goal_text = f"≤ {limit:.2f}× json" if kind == "ratio" else f"≤ json + {limit:.1f} µs"
            verdict = "met" if met else "NOT MET"
            verdicts.append(f"{name}: {verdict} ({goal_text}; measured {ratio:.3f}×, {delta:+.2f} µs)")
        body.append([name, with_range(s["server_cpu_us"], ".2f"), fmt(delta, "+.2f", "—"), fmt(ratio, ".3f", "—"),
                     goal_text, verdict, SEEDS_LADDER.get(name, "—")])
    return body, verdicts


LADDER_HEADER = ["rung", "server CPU µs/req", "− json µs", "÷ json", "goal", "", "seeds' figure (M1, Node)"]


def fmt(v, spec, missing="n/a"):
    return missing if v is None else format(v, spec)


def with_range(m, spec):
    """median [min–max], or the median alone when the runs agree (or there was one)."""
    if not m:
        return "n/a"
    median, lo, hi = m
    return format(median, spec) + ("" if format(lo, spec) == format(hi, spec) else
                                   f" [{format(lo, spec)}–{format(hi, spec)}]")


def table_rows(rows, summaries, instances):
    out = []
    for row in rows:
        s = summaries[row.id]
        base = summaries.get(ratio_base(row, summaries) or "")
        ratio = None
        if base and s["server_cpu_us"] and base["server_cpu_us"]:
            ratio = s["server_cpu_us"][0] / base["server_cpu_us"][0]
        s["ratio"] = ratio
        s["ratio_base"] = base["row"] if base else None
        inst = instances.get(row.instance, {})
        cpu = s["server_cpu_us"]
        rps = s["rps"] and tuple(v / 1000 for v in s["rps"])
        out.append([
            row.id + ("  FAILED" if s["failures"] else ""),
            with_range(rps, ".1f"),
            with_range(cpu, ".2f"),
            fmt(ratio, ".2f", "—"),
            fmt(s["client_cpu_us"] and s["client_cpu_us"][0], ".2f"),
            fmt(s["p50_ms"] and s["p50_ms"][0], ".2f"),
            fmt(s["p99_ms"] and s["p99_ms"][0], ".2f"),
            fmt(s["p999_ms"] and s["p999_ms"][0], ".2f"),
            fmt(inst.get("cold_start_ms"), ".1f"),
            fmt(s["rss_bytes"] and s["rss_bytes"][0] / 2**20, ".1f"),
            str(s["errors"]),
        ])
    return out


HEADER = ["row", "req/s (k)", "server CPU µs/req", "÷ base", "client CPU µs/req", "p50 ms", "p99 ms",
          "p99.9 ms", "cold start ms", "RSS MiB", "errors"]


def text_table(header, body):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def md_table(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def memory_table(instances):
    """Each server's readings: one connection, then each count."""
    body = []
    for name, inst in instances.items():
        m = inst.get("memory")
        if not m:
            continue
        if m.get("rss_before") is not None:
            body.append([name, "1", f"{m['rss_before'] / 2**20:.1f}", "", ""])
        for p in m.get("points", []):
            held = f"{p['connections']:,}" + ("" if p["connections"] == p["requested"] else
                                              f" of {p['requested']:,} opened")
            body.append([name, held, f"{p['rss_after'] / 2**20:.1f}", f"{p['bytes_per_connection'] / 1024:.2f}",
                         fmt(p["slope_bytes_per_connection"] and p["slope_bytes_per_connection"] / 1024, ".2f")])
        if "failure" in m:
            body.append([name, "FAILED", m["failure"], "", ""])
    return ["server", "idle connections held", "RSS MiB", "KiB per connection",
            "KiB per added connection (slope)"], body


def memory_side_by_side(instances, counts):
    """Per count, each server's KiB per connection and slope beside it."""
    names = [n for n, inst in instances.items() if inst.get("memory")]
    header = ["idle connections"]
    for n in names:
        header += [f"{n} KiB/conn", f"{n} slope"]
    body = []
    for count in counts:
        row = [f"{count:,}"]
        for n in names:
            m = instances[n]["memory"]
            p = next((p for p in m.get("points", []) if p["requested"] == count), None)
            if p is None:
                row += ["failed" if "failure" in m else "—", ""]
                continue
            held = "" if p["connections"] == count else f" (held {p['connections']:,})"
            row += [f"{p['bytes_per_connection'] / 1024:.2f}{held}",
                    fmt(p["slope_bytes_per_connection"] and p["slope_bytes_per_connection"] / 1024, ".2f")]
        body.append(row)
    return header, body


def memory_notes(ctx, instances):
    limits = ctx.fd_limits
    notes = [f"Memory row: RSS growth from one idle keep-alive connection open to each count (one request answered "
             f"on each) ÷ the connections the server still held at that reading, less the first; slope: the "
             f"growth since the previous reading ÷ the connections added since (the first count's is from the one "
             f"connection). A figure that holds as the count grows has a slope equal to it. Largest count "
             f"{limits['largest']:,}: {largest_count_reason(limits)}. The connections come from "
             f"{len(ctx.holder_sources)} holder processes on {ctx.holder_sources[0]}–{ctx.holder_sources[-1]}, "
             f"at most {ctx.holder_connections_max:,} each."]
    for name, inst in instances.items():
        points = [p for p in inst.get("memory", {}).get("points", []) if p["slope_bytes_per_connection"]]
        if points:
            slope = points[-1]["slope_bytes_per_connection"]
            notes.append(f"{name} at its last slope ({slope / 1024:.2f} KiB): 100,000 idle connections would add "
                         f"{slope * 1e5 / 2**20:,.0f} MiB, 1,000,000 {slope * 1e6 / 2**30:,.1f} GiB.")
    return notes


CHART_COLOURS = {"ours": "0x3b6ea8", "control": "0x9a9a9a", "peer": "0xd9822b", "custom": "0x6aa84f"}


def chart(path, rows, summaries):
    if not shutil.which("gnuplot"):
        return "gnuplot is not installed (Debian: gnuplot-nox)"
    data = path + ".dat"
    n = 0
    with open(data, "w") as f:
        for row in rows:
            cpu = summaries[row.id]["server_cpu_us"]
            if cpu:
                colour = CHART_COLOURS[row.server.kind]
                f.write(f'"{row.id}" {cpu[0]:.4f} {cpu[1]:.4f} {cpu[2]:.4f} {colour}\n')
                n += 1
    if not n:
        return "no row has a figure to plot"
    script = f"""
set terminal pngcairo size {max(900, 60 * n + 200)},640 font ",10"
set output "{path}"
set title "server CPU µs per request, median with min–max (blue: ringhttp, grey: floor controls, orange: peers)"
set ylabel "µs per request"
set style fill solid 0.7 border -1
set boxwidth 0.75
set xtics rotate by -40 left noenhanced
set yrange [0:*]
set xrange [-0.6:{n - 0.4}]
set grid ytics
set bmargin 11
unset key
plot "{data}" using 0:2:5:xtic(1) with boxes linecolor rgb variable, \\
     "{data}" using 0:2:3:4 with yerrorbars linecolor rgb "black" pointtype -1, \\
     "{data}" using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.8 font ",8"
"""
    r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
    os.unlink(data)
    return None if r.returncode == 0 else f"gnuplot failed: {r.stderr.strip()[-200:]}"


# ---------------------------------------------------------------------------

class Context:
    def __init__(self, a):
        self.build = os.path.realpath(a.build)
        self.build_glibc = os.path.realpath(a.build_glibc or (self.build.rstrip("/") + "-glibc"))
        self.client = os.path.join(self.build, "client", "client")
        self.duration, self.warmup, self.iterations = a.duration, a.warmup, a.iterations
        self.connections, self.pipeline = a.connections, a.pipeline
        # The memory row: its counts with 'max' resolved, what the servers'
        # tables are sized to, and the holders that open the connections.
        self.fd_limits = descriptor_limits()
        self.idle_counts, self.idle_error = resolve_counts(a.idle_connections, self.fd_limits)
        self.server_connections = self.fd_limits["largest"] + SERVER_FD_MARGIN
        self.holder_sources, self.holder_connections_max = holder_plan(
            self.fd_limits, self.idle_counts[-1] if self.idle_counts else 0)
        self.start_wait, self.cool_down = a.start_wait, a.cool_down
        self.references = {}  # variant name -> the start-up line's fields for its flags alone
        self.bodies_dir = tempfile.mkdtemp(prefix="ringhttp-bench-bodies.")
        self._bodies = {}
        # A secret made for this run (never a default), and a token signed with it.
        secret = os.urandom(32).hex().encode()
        self.jwt_secret_file = os.path.join(self.bodies_dir, "jwt-secret")
        with open(self.jwt_secret_file, "wb") as f:
            f.write(secret)
        os.chmod(self.jwt_secret_file, 0o600)
        self.token = mint_token(secret, TOKEN_SUBJECT, TOKEN_LIFETIME_S)

    def resolve(self, header):
        return header.replace("{token}", self.token)

    def request_body_file(self, w):
        path = os.path.join(self.bodies_dir, w.name + ".request")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(w.request_body)
        return path

    def body_file(self, w):
        if w.name not in self._bodies:
            path = os.path.join(self.bodies_dir, w.name)
            with open(path, "wb") as f:
                f.write(w.body)
            self._bodies[w.name] = path
        return self._bodies[w.name]


def positive(text):
    v = int(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("must be a positive whole number")
    return v


def non_negative(text):
    v = int(text)
    if v < 0:
        raise argparse.ArgumentTypeError("must be a whole number")
    return v


def seconds(text):
    v = float(text)
    if not v >= 0:
        raise argparse.ArgumentTypeError("must be a number of seconds, 0 or more")
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/bench.py", add_help=False, usage="bench/bench.py [options] (--help)")
    p.add_argument("-h", "--help", action="store_true")
    p.add_argument("--build", default=os.path.join(ROOT, "build-release"))
    p.add_argument("--build-glibc")
    p.add_argument("--only", default="")
    p.add_argument("--duration", type=positive)
    p.add_argument("--warmup", type=non_negative)
    p.add_argument("--connections", type=positive, default=128)
    p.add_argument("--iterations", type=positive)
    p.add_argument("--pipeline", type=positive, default=16)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--compare", default="")
    p.add_argument("--idle-connections", type=idle_counts, default=idle_counts(IDLE_CONNECTIONS))
    p.add_argument("--start-wait", type=seconds, default=START_WAIT_S)
    p.add_argument("--cool-down", type=seconds, default=COOL_DOWN_S)
    p.add_argument("--server", action="append", default=[], metavar="NAME=CMD")
    p.add_argument("--list", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--out", default=os.path.join(ROOT, "results"))
    a = p.parse_args(argv)
    if a.help:
        print(__doc__.strip())
        raise SystemExit(0)
    quick = (2, 1, 1) if a.quick else (10, 3, 3)
    a.duration = a.duration or quick[0]
    a.warmup = quick[1] if a.warmup is None else a.warmup
    a.iterations = a.iterations or quick[2]
    a.axes = [x for x in a.compare.split(",") if x]
    for x in a.axes:
        if x not in AXES:
            p.error(f"--compare: unknown axis '{x}' (axes: {', '.join(AXES)})")
    a.custom = []
    for spec in a.server:
        name, sep, cmd = spec.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name) or "{port}" not in cmd:
            p.error(f"--server '{spec}': expected NAME=COMMAND with {{port}} in COMMAND, NAME in [a-z0-9_.-]")
        if name in BY_NAME:
            p.error(f"--server: '{name}' is already a server here")
        a.custom.append(Custom(name, cmd))
    if a.start_wait <= 0:
        p.error("--start-wait: more than 0 seconds")
    return a


def list_rows(rows, as_json):
    if as_json:
        print(json.dumps({
            "workloads": [{"name": w.name, "path": w.path, "description": w.description, "pipelined": w.pipelined,
                           "body_bytes": len(w.body)} for w in WORKLOADS.values()],
            "rows": [{"id": r.id, "server": r.server.name, "workload": r.workload.name, "generator": r.generator,
                      "variant": r.variant.name if r.variant else None, "axis": r.axis, "default": r.default}
                     for r in rows],
        }, indent=2))
        return
    print("workloads:")
    for w in WORKLOADS.values():
        print(f"  {w.name:<12} {w.description}")
    print("rows (* = in the default run):")
    for r in rows:
        print(f"  {'*' if r.default else ' '} {r.id}")
    print("--compare axes: " + "; ".join(f"{k}: {', '.join(v.name for v in vs)} on {', '.join(ws)}"
                                         for k, (ws, vs) in AXES.items()))


def main(argv):
    a = parse_args(argv)
    rows = axis_rows(a.axes) + (all_rows(a.custom) if not a.axes else [])
    if a.list:
        list_rows(rows if a.axes else all_rows(a.custom) + axis_rows(list(AXES)), a.json)
        return 0
    rows = select(rows, a.only)
    ctx = Context(a)
    if ctx.idle_error:
        shutil.rmtree(ctx.bodies_dir, ignore_errors=True)
        usage_error(f"--idle-connections: {ctx.idle_error}")
    if not os.access(ctx.client, os.X_OK):
        raise SystemExit(f"bench: {ctx.client} is not built (tools/bench.sh builds it)")
    for tool in ("taskset",) + (("wrk",) if any(r.generator == "wrk" for r in rows) else ()):
        if not shutil.which(tool):
            print(f"bench: {tool} is not installed: its rows are skipped", file=sys.stderr)

    skipped = {}
    runnable = []
    for r in rows:
        reason = r.server.missing(ctx)
        if not reason and r.generator == "wrk" and not shutil.which("wrk"):
            reason = "wrk is not installed (Debian: wrk)"
        if not reason and r.variant and r.variant.glibc_build and not os.access(
                Ringhttp().binary(ctx, ctx.build_glibc), os.X_OK):
            reason = f"{ctx.build_glibc} has no server (tools/bench.sh --compare alloc builds it)"
        if not reason and r.variant and r.variant.preload and not os.path.exists(r.variant.preload):
            reason = f"{r.variant.preload} is not installed"
        if reason:
            skipped[r.id] = reason
        else:
            runnable.append(r)
    if not runnable:
        raise SystemExit("bench: no row can run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))

    os.makedirs(a.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = os.path.join(a.out, f"bench-{stamp}")
    servers = list({r.server.name: r.server for r in runnable}.values())
    env = environment(ctx, servers)
    env_lines = [f"- {k}: {v}" for k, v in env.items()]
    print("## Environment\n\n" + "\n".join(env_lines) + "\n", flush=True)
    for rid, why in skipped.items():
        print(f"skipping {rid}: {why}")

    # Cold start and memory: once per server instance, before the load runs.
    instances = {}
    for r in runnable:
        if r.instance in instances:
            continue
        inst = instances[r.instance] = {}
        try:
            inst["cold_start_ms"] = cold_start(ctx, r.server, r.variant)
        except WrongAnswer as e:
            inst["cold_start_failure"] = str(e)  # its rows still run: their client names what is wrong
        except StartError as e:
            inst["failure"] = str(e)
            continue
        if ctx.idle_counts and r.server.memory_row and (not r.axis or r.axis == "alloc"):
            inst["memory"] = memory_per_connection(ctx, r.server, r.variant)
        print(f"{r.instance}: cold start "
              + (f"{fmt(inst.get('cold_start_ms'), '.1f')} ms" if "cold_start_failure" not in inst else
                 f"failed: {inst['cold_start_failure']}")
              + memory_summary(inst.get("memory", {})), flush=True)

    runs = {r.id: [] for r in runnable}
    total = len(runnable) * a.iterations
    done = 0
    for it in range(1, a.iterations + 1):
        for r in runnable:
            done += 1
            inst = instances[r.instance]
            rec = measure(ctx, r, "cold_start_failure" not in inst) if "failure" not in inst else {
                "failure": inst["failure"]}
            rec["iteration"] = it
            runs[r.id].append(rec)
            if "failure" in rec:
                print(f"[{done}/{total}] {r.id} iteration {it}: FAILED: {rec['failure']}", flush=True)
            else:
                print(f"[{done}/{total}] {r.id} iteration {it}: {rec['rps'] / 1000:.1f}k req/s, server "
                      f"{fmt(rec.get('server_cpu_us'), '.2f')} µs/req, client {fmt(rec.get('client_cpu_us'), '.2f')}"
                      f" µs/req, {rec['errors']} errors", flush=True)
            time.sleep(ctx.cool_down)

    summaries = {r.id: summarize(r, runs[r.id]) for r in runnable}
    for r in runnable:
        if "cold_start_failure" in instances[r.instance]:
            summaries[r.id]["failures"].append("cold start: " + instances[r.instance]["cold_start_failure"])
    body = table_rows(runnable, summaries, instances)
    mem_header, mem_body = memory_table(instances)
    side_header, side_body = memory_side_by_side(instances, ctx.idle_counts)
    mem_notes = memory_notes(ctx, instances) if mem_body else []
    chart_error = chart(base + ".png", runnable, summaries)
    failed = [r.id for r in runnable if summaries[r.id]["failures"]]
    failed += [f"{name} (memory row)" for name, inst in instances.items() if "failure" in inst.get("memory", {})]

    notes = [
        "Medians over iterations, [min–max] where they differ. Server CPU µs/req: the server process's utime+stime "
        "over the measured window ÷ responses (the column to compare). ÷ base: that figure divided by the row named "
        "in the JSON's ratio_base (the io_uring floor's row of the same kind, ringhttp/json for the ladder's rungs, "
        "or the axis's default variant).",
        "Client CPU µs/req: the generator's own CPU (ringhttp's client, or wrk in /wrk rows). wrk checks statuses "
        "only, and prints no p99.9; ringhttp's client checks every status and body.",
        f"Cold start: exec to the first right answer to GET {READY_PATH} (status 200 and its body, on a new "
        f"connection polled every 1 ms), median of {COLD_START_SPAWNS} spawns. RSS: the server's VmRSS right after "
        "the measured run.",
    ]
    notes += generator_comparison(runnable, summaries)
    ladder_body, ladder_verdicts = ladder_table(summaries)
    text = "## Results\n\n" + text_table(HEADER, body)
    ladder_note = ("The seeds' figures are another machine (Apple M1 Pro), another runtime (Node 24) and their "
                   "framework: compare the differences between rungs, not the absolute numbers.")
    if ladder_body:
        text += ("\n\n## The seeds' ladder (ringhttp, differences from json in this run)\n\n"
                 + text_table(LADDER_HEADER, ladder_body) + "\n" + "\n".join(ladder_verdicts) + "\n" + ladder_note)
    if mem_body:
        text += ("\n\n## Memory per idle keep-alive connection\n\n" + text_table(side_header, side_body) + "\n\n"
                 + text_table(mem_header, mem_body) + "\n\n" + "\n".join(mem_notes))
    print("\n" + text + "\n\n" + "\n".join(notes))
    md = ("# ringhttp benchmark " + stamp + "\n\n## Environment\n\n" + "\n".join(env_lines) + "\n\n## Results\n\n"
          + md_table(HEADER, body) + "\n\n" + "\n\n".join(notes) + "\n")
    if ladder_body:
        md += ("\n## The seeds' ladder (ringhttp, differences from json in this run)\n\n"
               + md_table(LADDER_HEADER, ladder_body) + "\n\n" + "\n".join(f"- {v}" for v in ladder_verdicts)
               + "\n\n" + ladder_note + "\n")
    if mem_body:
        md += ("\n## Memory per idle keep-alive connection\n\n" + md_table(side_header, side_body) + "\n\n"
               + md_table(mem_header, mem_body) + "\n\n" + "\n\n".join(mem_notes) + "\n")
    if skipped:
        md += "\nSkipped: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()) + "\n"
    with open(base + ".md", "w") as f:
        f.write(md)
    with open(base + ".json", "w") as f:
        json.dump({"environment": env, "options": {k: v for k, v in vars(a).items() if k != "custom"},
                   "summaries": list(summaries.values()), "runs": runs, "instances": instances,
                   "skipped": skipped, "workloads": {w.name: w.description for w in WORKLOADS.values()},
                   "memory_row": {"counts": ctx.idle_counts, "descriptor_limits": ctx.fd_limits,
                                  "holder_sources": ctx.holder_sources,
                                  "holder_connections_max": ctx.holder_connections_max, "notes": mem_notes},
                   "ladder": {"rows": ladder_body, "verdicts": ladder_verdicts}},
                  f, indent=1, default=str)
    print(f"\nraw results: {os.path.relpath(base + '.json', ROOT)}\nmarkdown:    {os.path.relpath(base + '.md', ROOT)}")
    print(f"chart:       {os.path.relpath(base + '.png', ROOT)}" if not chart_error else f"chart:       none ({chart_error})")
    shutil.rmtree(ctx.bodies_dir, ignore_errors=True)
    if failed:
        print("bench: FAILED rows: " + ", ".join(failed), file=sys.stderr)
        for rid in failed:
            for why in summaries.get(rid, {}).get("failures", []):
                print(f"  {rid}: {why}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    code = 130
    try:
        code = main(sys.argv[1:])
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
    finally:
        for running in list(Running.live):
            running.stop()
    sys.exit(code)
