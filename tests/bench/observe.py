"""Watching bench/bench.py's real processes from outside, for the benchmark's
method tests: which servers and clients it starts (its children in /proc),
their arguments, where their threads may run (Cpus_allowed_list), their
state, a ringhttp server's /metrics, and a port's established connections.
Nothing here comes from the harness: it is what the kernel and the server
say. Every wait is for an event, bounded in time."""
import os
import re
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BENCH = os.path.join(ROOT, "bench", "bench.py")
POLL_S = 0.005  # how often a wait looks again


def eventually(condition, timeout_s, what):
    """Polls condition() until it returns something true, which is returned;
    AssertionError naming `what` after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s} s for {what}")
        time.sleep(POLL_S)


def _read(path, mode="r"):
    try:
        with open(path, mode) as f:
            return f.read()
    except OSError:  # the process is gone, or is a zombie without these files
        return None


def stat(pid):
    """(state letter, parent pid) from /proc/PID/stat, or None when gone."""
    text = _read(f"/proc/{pid}/stat")
    if not text:
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def children(pid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            s = stat(int(name))
            if s and s[1] == pid:
                out.append(int(name))
    return sorted(out)


def descendants(pid):
    """Every live descendant of pid (children, their children, ...)."""
    out, todo = set(), [pid]
    while todo:
        for c in children(todo.pop()):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def alive(pid):
    """Running, or stopped, or stuck: anything but gone or a zombie."""
    s = stat(pid)
    return s is not None and s[0] != "Z"


def exe(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def cmdline(pid):
    data = _read(f"/proc/{pid}/cmdline", "rb")
    return [a.decode(errors="replace") for a in data.split(b"\0")[:-1]] if data else []


def arg_after(args, flag):
    return args[args.index(flag) + 1] if flag in args else None


def threads_cpus(pid):
    """{thread id: (name, Cpus_allowed_list)} of every thread of a process."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        text = _read(f"/proc/{pid}/task/{tid}/status")
        if text:
            fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
            out[int(tid)] = (fields["Name"].strip(), fields["Cpus_allowed_list"].strip())
    return out


def startup_line(pid):
    """The first line a running server printed, read from its own stdout (a
    file the harness made) through /proc/PID/fd/1."""
    text = _read(f"/proc/{pid}/fd/1")
    return text.splitlines()[0] if text else ""


def fields(line):
    return dict(f.split("=", 1) for f in line.split() if "=" in f)


def metrics(port):
    """ringhttp's /metrics as {sample: value}; a sample is its name with its labels."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), f"/metrics answered {head[:40]!r}"
    out = {}
    for line in body.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def established_pairs(port):
    """The (local, remote) address pairs, as /proc/net/tcp{,6} writes them, of
    the established TCP connections whose local port is `port` (the server's
    ends). The kernel walks its hash table a bucket at a time while the file
    is read, so a connection made meanwhile can show twice: a set has it once."""
    pairs = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (_read(table) or "").splitlines()[1:]:
            parts = line.split()
            if int(parts[1].rsplit(":", 1)[1], 16) == port and parts[3] == "01":
                pairs.add((parts[1], parts[2]))
    return pairs


def established(port):
    """How many established TCP connections have local port `port`."""
    return len(established_pairs(port))


def start_bench(build, out_dir, *args, env=None):
    argv = [sys.executable, BENCH, "--build", build, "--out", out_dir, *args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, env=env)


def results(out_dir, kind="bench"):
    """The run's results JSON (kind: bench, or profile for --profile), None unless exactly one."""
    import json
    names = [f for f in os.listdir(out_dir) if re.fullmatch(kind + r"-.*\.json", f)]
    if len(names) != 1:
        return None
    with open(os.path.join(out_dir, names[0])) as f:
        return json.load(f)


class Frozen:
    """The harness stopped (SIGSTOP) for as long as the block lasts: a child
    that exits meanwhile stays a zombie, unreaped, and the server it ran
    against is not yet stopped."""

    def __init__(self, pid):
        self.pid = pid

    def __enter__(self):
        os.kill(self.pid, signal.SIGSTOP)
        eventually(lambda: (stat(self.pid) or ("T",))[0] == "T", 30, "the harness to stop")
        return self

    def __exit__(self, *exc):
        os.kill(self.pid, signal.SIGCONT)
        return False


def node_pg_missing():
    """The benchmark's own check (bench/harness/servers.py)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from harness.servers import node_pg_missing as missing
    return missing()


def run_checks(*checks, missing=None):
    """The main() of a bench test: each check takes the build directory and
    returns its failures (having printed its own ok/FAIL line); all run,
    then the failures are printed and the exit status is 1 if any.
    `missing`, if given, says what prerequisite is absent (or None)."""
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    build = os.path.realpath(p.parse_args().build)
    # A prerequisite that is not there fails at once, named, rather than
    # as checks that wait for what cannot start.
    if missing is not None and (why := missing()) is not None:
        print(f"FAIL    prerequisite missing: {why}")
        print(f"prerequisite missing: {why}", file=sys.stderr)
        return 1
    failures = []
    for check in checks:
        failures += check(build)
    if failures:
        print("\n".join(["", "FAILURES:"] + failures), file=sys.stderr)
        return 1
    return 0
