"""Processes: starting, watching and stopping what the harness runs, and reading their CPU time."""
import os
import re
import resource
import shutil
import socket
import subprocess
import tempfile
import time

from .constants import PLAINTEXT, READY_PATH, SERVER_CPUS, START_WAIT_S
from .stopping import close_pipes, drain, stop_child


# Processes.

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def user_system_ticks(pid):
    """(utime, stime) of every thread of the process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def cpu_ticks(pid):
    return sum(user_system_ticks(pid))


def rss_bytes(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def established(port):
    """Established TCP connections whose local port is `port` (a server's
    ends), from /proc/net/tcp and tcp6, each counted once by its address
    pair (the kernel's walk can list a connection made meanwhile twice)."""
    pairs = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if int(parts[1].rsplit(":", 1)[1], 16) == port and parts[3] == "01":
                pairs.add((parts[1], parts[2]))
    return len(pairs)


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


def get_once(port, path, deadline, tls=None):
    """One GET on a new connection: (status, body), or None when there was no
    complete answer (refused, closed, reset, a failed TLS handshake, or
    nothing by the deadline). A connection the kernel has accepted for a
    server that is not yet serving waits here until the server answers it.
    tls: an ssl.SSLContext for an HTTPS server (the handshake is part of it)."""
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=max(0.001, deadline - time.monotonic()))
        try:
            with tls.wrap_socket(raw, server_hostname="127.0.0.1") if tls else raw as s:
                s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
                status, body, _ = read_response(s, b"")
                return status, body
        finally:
            raw.close()  # a handshake that failed leaves it to close here
    except (OSError, ValueError, IndexError):  # ssl.SSLError is an OSError
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
        try:
            argv, env = server.command(ctx, self.port, self.rundir, variant)
            tls = ctx.client_tls() if server.tls else None
        except BaseException:
            shutil.rmtree(self.rundir, ignore_errors=True)
            raise
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
            answer = get_once(self.port, READY_PATH, deadline, tls)
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
        """SIGTERM, bounded wait, SIGKILL, bounded wait. Returns the exit
        status (negative: a signal; None: it could not be reaped)."""
        stop_child(self.proc)
        Running.live.discard(self)
        shutil.rmtree(self.rundir, ignore_errors=True)
        return self.proc.returncode


class StartError(Exception):
    pass


class WrongAnswer(StartError):
    """The server answers, but never rightly: its rows still run, and their
    client names what is wrong with every response."""


def run_bounded(argv, timeout_s, beside=None):
    """Runs argv, stopping it after timeout_s; returns (exit status or None on
    timeout, stdout, stderr). beside(proc), if given, is called once it has
    started (a profiler recording while it runs; what it does is bounded by
    itself, and the timeout counts from the start). It leads its own process
    group, so that what it forks (a wrapper's program, perf's workload) is
    stopped with it."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            process_group=0)
    try:
        if beside:
            beside(proc)
        out, err = proc.communicate(timeout=max(0.0, started + timeout_s - time.monotonic()))
        code = proc.returncode
    except subprocess.TimeoutExpired:
        stop_child(proc, group=True)
        out, err = drain(proc)
        code = None
    except BaseException:
        stop_child(proc, group=True)  # interrupted (SIGTERM, Ctrl-C): the generator does not outlive the harness
        close_pipes(proc)
        raise
    return code, out.decode(errors="replace"), err.decode(errors="replace")


def wait_while_running(proc, until):
    """Sleeps until the monotonic time `until` or until proc has exited;
    True if it is still running then (the helpers beside a generator's
    measured window: a profiler, the database's CPU readings)."""
    while time.monotonic() < until and proc.poll() is None:
        time.sleep(min(0.01, max(0.0, until - time.monotonic())))
    return proc.poll() is None


def at_edges(generator, warmup_s, duration_s, readers):
    """Beside a generator: each reader's begin() as its measured window
    starts (warmup_s after it did) and end() as the window ends, or as the
    generator exits if that is sooner."""
    wait_while_running(generator, time.monotonic() + warmup_s)
    for r in readers:
        r.begin()
    wait_while_running(generator, time.monotonic() + duration_s)
    for r in readers:
        r.end()


def child_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime
