"""Rows: a server (perhaps a variant of it), a workload, a generator; the default run and the axes."""
import dataclasses
import sys

from .constants import DB_POOL, DB_POOLS_COMPARED, SERVER_CPUS
from .workloads import WORKLOADS, Workload
from .servers import (Floor, H2o, H2oTls, Nginx, NginxTls, Node, NodePg, NodeTls, Pgbench, Ringhttp,
                      RinghttpTls, Server)


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
    expect_backend: str = ""    # ... its backend= must say this
    client_args: tuple = ()     # flags for the client instead: the server is the default one
    expect_client_backend: str = ""  # the client's report's options.backend must say this
    db_pool: int = 0            # --db-pool on the database workloads (0: DB_POOL)
    base: bool = False          # the axis's default, the others are divided by (else its first variant)


@dataclasses.dataclass(frozen=True)
class Row:
    server: Server
    workload: Workload
    generator: str = "client"   # client | wrk | pgbench (the server is Postgres itself)
    variant: Variant = None
    axis: str = ""
    default: bool = False       # in the run without --only
    client: str = ""            # another client binary's name (--also-client): the row's copy driven by it

    @property
    def id(self):
        name = self.server.name + (f":{self.variant.name}" if self.variant else "")
        return (f"{name}/{self.workload.name}" + ("/wrk" if self.generator == "wrk" else "")
                + (f"/{self.client}" if self.client else ""))

    @property
    def instance(self):
        """Which started process this row's cold start and memory belong to."""
        return self.server.name + (f":{self.variant.name}" if self.variant else "")


SERVERS = [Floor("epoll"), Floor("uring"), Ringhttp(), RinghttpTls(), Nginx(), NginxTls(), H2o(), H2oTls(),
           Node(), NodeTls(), NodePg(), Pgbench()]
BY_NAME = {s.name: s for s in SERVERS}

# The default run: about thirteen minutes (3 x 13 s per row, plus start-ups).
DEFAULT_ROWS = {
    "floor-epoll/plaintext", "floor-uring/plaintext", "ringhttp/plaintext", "ringhttp/json",
    "ringhttp/ping", "ringhttp/middleware", "ringhttp/validated", "ringhttp/path-param", "ringhttp/authenticated",
    "ringhttp/stream-64k", "floor-uring/pipelined", "floor-uring/pipelined-open", "ringhttp/pipelined",
    "nginx/plaintext",
    "h2o/plaintext", "node/json", "ringhttp/plaintext/wrk",
}
WRK_ROWS = [("ringhttp", "plaintext"), ("ringhttp", "pipelined"), ("ringhttp", "stream-64k"),
            ("floor-uring", "plaintext"), ("floor-uring", "pipelined"),
            ("nginx-tls", "plaintext"), ("nginx-tls", "handshake")]
# Named selections for --only, beside row ids and server, workload and
# generator names. tls: ringhttp, nginx, h2o and node over HTTPS, kept
# alive and (but node) with a handshake per request (nginx's driven by
# ringhttp's client and by wrk), and the same loads over plain HTTP where
# the plain server has them (what TLS adds to each is the difference).
GROUPS = {
    "tls": ("ringhttp-tls/plaintext", "ringhttp-tls/json", "ringhttp-tls/handshake", "ringhttp-tls/handshake-full",
            "ringhttp/plaintext", "ringhttp/json", "ringhttp/handshake",
            "nginx-tls/plaintext", "nginx-tls/json", "nginx-tls/plaintext/wrk", "nginx-tls/handshake",
            "nginx-tls/handshake-full", "nginx-tls/handshake/wrk", "nginx/plaintext", "nginx/json", "nginx/handshake",
            "h2o-tls/plaintext", "h2o-tls/json", "h2o-tls/handshake", "h2o-tls/handshake-full", "h2o/plaintext",
            "h2o/json",
            "node-tls/plaintext", "node-tls/json", "node/plaintext", "node/json"),
}

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"          # Debian libjemalloc2
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"  # Debian libtcmalloc-minimal4

AXES = {
    # axis: (workloads, variants; the default the others are divided by is the
    # one marked base, else the first)
    "uring": (("plaintext", "pipelined"), [
        Variant("all"),
        Variant("6.12", extra_args=("--uring", "6.12")),
        Variant("6.10", extra_args=("--uring", "6.10")),
        Variant("6.6", extra_args=("--uring", "6.6")),
        Variant("6.1", extra_args=("--uring", "6.1")),
        Variant("6.0", extra_args=("--uring", "6.0")),
        Variant("5.19", extra_args=("--uring", "5.19")),
        Variant("5.10", extra_args=("--uring", "5.10")),
        Variant("sqpoll", extra_args=("--uring", "all,sqpoll"), expect_uring="sqpoll"),
        Variant("min-wait", extra_args=("--uring", "all,min-wait"), expect_uring="min-wait"),
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
    # Pool size is a throughput dial (issue 16): database connections per
    # shard, against the run's cluster; the default pool is the base.
    "db-pool": (("database-read", "database-write"), [
        Variant(f"pool-{n}", db_pool=n, base=n == DB_POOL) for n in DB_POOLS_COMPARED
    ]),
    # The same server and client over io_uring and over an edge-triggered
    # epoll loop: the server on each backend (the client on io_uring), then
    # the client on epoll against the server on io_uring.
    "backend": (("plaintext", "json", "pipelined", "stream-64k"), [
        Variant("uring", expect_backend="uring", base=True),
        Variant("epoll", extra_args=("--backend", "epoll"), expect_backend="epoll"),
        Variant("client-epoll", client_args=("--backend", "epoll"), expect_backend="uring",
                expect_client_backend="epoll"),
    ]),
}
# Other servers' rows an axis runs beside its variants, on the workloads
# they serve: the floors show what each backend costs with no HTTP at all.
AXIS_CONTROLS = {
    "backend": ("floor-uring", "floor-epoll"),
}


def axis_base(axis):
    """The variant an axis's others are divided by."""
    variants = AXES[axis][1]
    return next((v for v in variants if v.base), variants[0])


def all_rows(custom):
    rows = []
    for s in SERVERS + custom:
        for w in s.workloads:
            r = Row(s, WORKLOADS[w], generator="client" if s.http else s.name)
            rows.append(dataclasses.replace(r, default=r.id in DEFAULT_ROWS or s.kind == "custom"))
    for s, w in WRK_ROWS:
        r = Row(BY_NAME[s], WORKLOADS[w], generator="wrk")
        rows.append(dataclasses.replace(r, default=r.id in DEFAULT_ROWS))
    return rows


def axis_rows(axes):
    """Each axis's variants on its workloads, each workload's control rows
    (AXIS_CONTROLS) first; a control row is the plain row, divided by its
    usual base, and is run once however many axes name it."""
    rows = []
    for axis in axes:
        workloads, variants = AXES[axis]
        for w in workloads:
            for name in AXIS_CONTROLS.get(axis, ()):
                control = Row(BY_NAME[name], WORKLOADS[w], default=True)
                if w in control.server.workloads and control not in rows:
                    rows.append(control)
            for v in variants:
                rows.append(Row(BY_NAME["ringhttp"], WORKLOADS[w], variant=v, axis=axis, default=True))
    return rows


def every_row(custom):
    """Every row: the plain ones, then the axes' variants (their control
    rows are among the plain ones)."""
    return all_rows(custom) + [r for r in axis_rows(list(AXES)) if r.variant]


def usage_error(message):
    print(f"bench: {message}", file=sys.stderr)
    raise SystemExit(2)


def also_client_rows(rows, names):
    """Each row the build's client drives, followed by its copies driven by
    the other clients named (--also-client), in the table's order."""
    out = []
    for r in rows:
        out.append(r)
        if r.generator == "client" and r.server.http and not r.client:
            out += [dataclasses.replace(r, client=name) for name in names]
    return out


def select(rows, only):
    if not only:
        return [r for r in rows if r.default]
    wanted = [t for t in only.split(",") if t]
    chosen = []
    for token in wanted:
        hits = [r for r in rows if token in ("all", r.id, r.server.name, r.workload.name, r.instance)
                or (token == "wrk" and r.generator == "wrk") or r.id in GROUPS.get(token, ())]
        if not hits:
            usage_error(f"--only: nothing is named '{token}' (bench/bench.py --list shows the rows)")
        chosen += [r for r in hits if r not in chosen]
    return [r for r in rows if r in chosen]  # in the table's order
