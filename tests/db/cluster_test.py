#!/usr/bin/env python3
"""db/cluster.sh: a throwaway Postgres cluster of our own, run by an
unprivileged user, reachable only on loopback and its own socket, with
the schema the database rows need, left as it found the machine.

- start: prints the libpq URL; the postmaster is not root (when we are);
  it listens on 127.0.0.1:PORT and nowhere else, and on a socket in DIR;
  users holds 10,000 rows, user i named user-i;
- an insert takes id 10,001; after stop and start the inserted row is gone
  and the next insert takes 10,001 again (writes emptied at every start),
  while the 10,000 users stay;
- stop: every process of the cluster gone; stop again, and stop of a
  directory with no cluster, are no-ops (exit 0); bad usage exits 2.

Usage: cluster_test.py    (meson test runs it)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from db_support import WAIT_S, cluster, free_port, verdict  # noqa: E402


def psql(url, sql):
    r = subprocess.run(["psql", "-X", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql], capture_output=True,
                       text=True, timeout=WAIT_S)
    if r.returncode != 0:
        raise AssertionError(f"psql {sql!r}: {r.stderr.strip()}")
    return r.stdout.strip()


def processes_of(d):
    """(pid, uid) of every process whose command line names d."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if d.encode() not in f.read():
                    continue
            out.append((int(name), os.stat(f"/proc/{name}").st_uid))
        except OSError:
            continue
    return out


def listeners(port):
    """The local addresses listening on port, from /proc/net/tcp and tcp6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.read().splitlines()[1:]:
                parts = line.split()
                addr, p = parts[1].rsplit(":", 1)
                if int(p, 16) == port and parts[3] == "0A":
                    found.add(addr)
    return found


def main():
    failures = []
    d = tempfile.mkdtemp(prefix="ringhttp-db.")
    port = free_port()
    try:
        r = cluster("start", d, str(port))
        url = r.stdout.strip()
        if r.returncode != 0 or url != f"postgresql://ringhttp@127.0.0.1:{port}/ringhttp":
            raise AssertionError(f"start: exit {r.returncode}, printed {url!r}: {r.stderr[-2000:]}")
        procs = processes_of(d)
        if not procs or (os.getuid() == 0 and any(uid == 0 for _, uid in procs)):
            failures.append(f"the cluster's processes (pid, uid) {procs}: none, or one running as root")
        if listeners(port) != {"0100007F"}:
            failures.append(f"listening on {listeners(port)}, not 127.0.0.1 alone")
        if not os.path.exists(os.path.join(d, f".s.PGSQL.{port}")):
            failures.append(f"no socket .s.PGSQL.{port} in {d}")
        if psql(url, "SELECT count(*), min(id), max(id) FROM users") != "10000|1|10000":
            failures.append("users does not hold ids 1 to 10,000")
        if psql(url, "SELECT name FROM users WHERE id = 4321") != "user-4321":
            failures.append("user 4321 is not named user-4321")
        first = psql(url, "INSERT INTO users (name) VALUES ('written') RETURNING id").splitlines()[0]
        if first != "10001":
            failures.append(f"the first insert took id {first}, not 10001")
        if cluster("stop", d).returncode != 0:
            failures.append("stop failed")
        if cluster("start", d, str(port)).returncode != 0:
            raise AssertionError("the second start failed")
        if psql(url, "SELECT count(*) FROM users") != "10000":
            failures.append("the written row survived a restart")
        again = psql(url, "INSERT INTO users (name) VALUES ('again') RETURNING id").splitlines()[0]
        if again != "10001":
            failures.append(f"after a restart the first insert took id {again}, not 10001")
    except AssertionError as e:
        failures.append(str(e))
    finally:
        r = cluster("stop", d)
        if r.returncode != 0:
            failures.append(f"the final stop exited {r.returncode}: {r.stderr[-500:]}")
    deadline = time.monotonic() + WAIT_S
    while processes_of(d) and time.monotonic() < deadline:
        time.sleep(0.05)
    if processes_of(d):
        failures.append(f"processes left after stop: {processes_of(d)}")
    if cluster("stop", d).returncode != 0:
        failures.append("a second stop is not a no-op")
    empty = tempfile.mkdtemp(prefix="ringhttp-db-empty.")
    if cluster("stop", empty).returncode != 0:
        failures.append("stop of a directory with no cluster is not a no-op")
    if cluster("start", empty).returncode != 2:
        failures.append("start without a port does not exit 2")
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(empty, ignore_errors=True)
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
