"""The database rows' Postgres: a throwaway cluster of the run's own
(db/cluster.sh: initdb into a private directory, run as an unprivileged
user, loopback only, db/schema.sql applied at start), started when the
first row needs it and stopped at the end of the run whatever happens;
and the CPU time of every Postgres process over a measured window."""
import glob
import os
import re
import shutil
import tempfile
import time

from .constants import ROOT
from .processes import StartError, at_edges, free_port, get_once, run_bounded, user_system_ticks

DB_CLUSTER = os.path.join(ROOT, "db", "cluster.sh")
CLUSTER_WAIT_S = 120  # initdb, start and the schema (10,000 rows) on a busy two-core machine


def database_missing():
    """Why the run cannot have a Postgres cluster, or None."""
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb") and not shutil.which("pg_config"):
        return "no Postgres server (Debian: postgresql-15)"
    if not shutil.which("psql"):
        return "no psql (Debian: postgresql-client-15)"
    return None


class Database:
    """One started cluster: its directory, port and libpq URL."""

    live = set()  # stopped on the way out, whatever happens

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ringhttp-bench-db.")
        self.port = free_port()
        Database.live.add(self)
        code, out, err = run_bounded([DB_CLUSTER, "start", self.dir, str(self.port)], CLUSTER_WAIT_S)
        if code != 0:
            self.stop()
            raise StartError(f"the Postgres cluster did not start (exit {code}): {(err or out).strip()[-300:]}")
        self.url = out.strip()

    def postmaster(self):
        try:
            with open(os.path.join(self.dir, "data", "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def cpu_ticks(self):
        """utime+stime of the postmaster and every process it started (the
        backends serving the pool's connections among them), in ticks."""
        root = self.postmaster()
        total = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if int(name) == root or ppid == root:
                    total += sum(user_system_ticks(int(name)))
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile
        return total

    def stop(self):
        run_bounded([DB_CLUSTER, "stop", self.dir], CLUSTER_WAIT_S)
        Database.live.discard(self)
        shutil.rmtree(self.dir, ignore_errors=True)


CONNECTIONS_UP = re.compile(rb"^ringhttp_db_connections_up (\S+)$", re.M)


def connections_up(port, expected, wait_s):
    """ringhttp's database connections up (ringhttp_db_connections_up on its
    /metrics), polled until it reads `expected` or wait_s has passed; the
    last reading (None when /metrics never answered with it)."""
    deadline = time.monotonic() + wait_s
    got = None
    while True:
        answer = get_once(port, "/metrics", deadline)
        m = answer and answer[0] == 200 and CONNECTIONS_UP.search(answer[1])
        if m:
            got = int(float(m.group(1)))
        if got == expected or time.monotonic() >= deadline:
            return got
        time.sleep(0.01)


class DatabaseCpu:
    """Beside one run's generator (runs.run_client's window): the
    cluster's CPU ticks at the start and at the end of the measured window
    (begin and end, when processes.at_edges calls them)."""

    def __init__(self, database, duration_s):
        self.database = database
        self.duration_s = duration_s
        self.before = None
        self.ticks = None

    def begin(self):
        self.before = self.database.cpu_ticks()

    def end(self):
        self.ticks = self.database.cpu_ticks() - self.before

    def __call__(self, generator, pid, warmup_s):
        at_edges(generator, warmup_s, self.duration_s, [self])
