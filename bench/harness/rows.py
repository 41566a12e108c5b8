"""Rows: a server (perhaps a variant of it), a workload, a generator; the default run and the axes."""
import dataclasses
import sys

from .constants import (DB_POOL, DB_POOLS_COMPARED, ESTIMATE_INSTANCE_S, ESTIMATE_MEMORY_ROW_S,
                        ESTIMATE_RUN_OVERHEAD_S, SERVER_CPUS)
from .workloads import WORKLOADS, Workload
from .servers import (Floor, H2o, H2oH2, H2oTls, Nginx, NginxH2, NginxTls, Node, NodePg, NodeTls, Pgbench,
                      Ringhttp, RinghttpTls, Server)


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
    expect_client_uring: str = ""    # ... its environment.uring list must name this ("!name": must not)
    db_pool: int = 0            # --db-pool on the database workloads (0: DB_POOL)
    base: bool = False          # the axis's default, the others are divided by (else its first variant)
    servers: tuple = ("ringhttp",)  # who runs it: ringhttp, and floor-uring where the floor takes its flags
    workloads: tuple = ()       # of its axis's workloads, the ones it runs on (empty: each)
    default_workloads: tuple = None  # ... and of those, the ones in the run without --only (None: each)
    floor_default: bool = True  # its floor-uring rows are in the run without --only


@dataclasses.dataclass(frozen=True)
class Row:
    server: Server
    workload: Workload
    generator: str = "client"   # client | wrk | h2load | pgbench (the server is Postgres itself)
    variant: Variant = None
    axis: str = ""
    default: bool = False       # in the run without --only
    client: str = ""            # another client binary's name (--also-client): the row's copy driven by it

    @property
    def id(self):
        name = self.server.name + (f":{self.variant.name}" if self.variant else "")
        peer = f"/{self.generator}" if self.generator in PEER_GENERATORS else ""
        return f"{name}/{self.workload.name}{peer}" + (f"/{self.client}" if self.client else "")

    @property
    def instance(self):
        """Which started process this row's cold start and memory belong to."""
        return self.server.name + (f":{self.variant.name}" if self.variant else "")


# The load generators other than ringhttp's client that drive a server's
# rows, each a copy of a client-driven row (its id ends /NAME), so that the
# client's own CPU per request is compared with theirs in the same run.
PEER_GENERATORS = ("wrk", "h2load")

SERVERS = [Floor("epoll"), Floor("uring"), Ringhttp(), RinghttpTls(), Nginx(), NginxTls(), NginxH2(), H2o(), H2oTls(),
           H2oH2(), Node(), NodeTls(), NodePg(), Pgbench()]
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
# h2load (nghttp2's, HTTP/2 only here) beside the client on the HTTP/2 rows.
H2LOAD_ROWS = [("nginx-h2", "plaintext"), ("h2o-h2", "plaintext")]
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
    # h2: nginx and h2o over HTTP/2 on TLS, each driven by ringhttp's client
    # (--http2) and by h2load with the same connections and streams.
    "h2": ("nginx-h2/plaintext", "nginx-h2/plaintext/h2load", "h2o-h2/plaintext", "h2o-h2/plaintext/h2load"),
}

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"          # Debian libjemalloc2
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"  # Debian libtcmalloc-minimal4

# The uring axis: each --uring profile and switch (core/uring/features.cpp's
# grammar) on ringhttp's server, and on the io_uring floor where the floor
# takes the value (Floor.takes), so each switch's effect shows on both; then
# the client's own switches, against the floor. Every row can be named with
# --only; the run without it (about 24 minutes with the defaults: see
# estimate_s) has every server switch but 6.12 (`all` on this kernel), 6.0
# and the no-FEATURE ones on plaintext and pipelined, json and stream-64k on
# `all` only, the floor's twins of 6.1, min-wait and
# no-fixed-files, and the open model with and without the client's min-wait.
URING_SERVER_WORKLOADS = ("plaintext", "json", "pipelined", "stream-64k")
URING_WORKLOADS = URING_SERVER_WORKLOADS + ("pipelined-open",)
URING_DEFAULT_WORKLOADS = ("plaintext", "pipelined")


def uring_variant(name, value, **kw):
    """A server variant of the uring axis: `--uring value` on ringhttp and on the floor."""
    kw.setdefault("default_workloads", URING_DEFAULT_WORKLOADS)
    return Variant(name, extra_args=("--uring", value), servers=("ringhttp", "floor-uring"),
                   workloads=URING_SERVER_WORKLOADS, **kw)


def uring_client_variant(name, value, **kw):
    """The client with `--uring value` against the floor (the server that
    costs least, so the client's own figure moves most), pipelined, where
    the client's batching shows: its CPU per request against the base's."""
    return Variant(f"client-{name}", client_args=("--uring", value), servers=("floor-uring",),
                   workloads=("pipelined",), **kw)


URING_VARIANTS = [
    Variant("all", workloads=URING_SERVER_WORKLOADS, default_workloads=URING_SERVER_WORKLOADS),
    # 6.12 is `all` on a 6.12 or later kernel: by name only.
    uring_variant("6.12", "6.12", floor_default=False, default_workloads=()),
    uring_variant("6.10", "6.10", floor_default=False),
    uring_variant("6.6", "6.6", floor_default=False),
    uring_variant("6.1", "6.1"),
    # 6.0 against 6.1 (defer taskrun) was measured before this axis grew: by name only.
    uring_variant("6.0", "6.0", floor_default=False, default_workloads=()),
    uring_variant("5.19", "5.19"),
    uring_variant("5.10", "5.10"),
    # The floor's SQ poller is pinned where the floor is, and spins there.
    uring_variant("sqpoll", "all,sqpoll", expect_uring="sqpoll", floor_default=False),
    uring_variant("min-wait", "all,min-wait", expect_uring="min-wait"),
    uring_variant("no-fixed-files", "all,no-fixed-files", expect_uring="!fixed-files"),
    uring_variant("no-recv-bundle", "all,no-recv-bundle", expect_uring="!recv-bundle", default_workloads=()),
    uring_variant("no-incremental-buffers", "all,no-incremental-buffers", expect_uring="!incremental-buffers",
                  default_workloads=()),
    uring_client_variant("6.1", "6.1", default_workloads=()),
    uring_client_variant("no-fixed-files", "all,no-fixed-files", expect_client_uring="!fixed-files",
                         default_workloads=()),
    # The open model's client at OPEN_RATE with min-wait, beside the plain
    # one (floor-uring/pipelined-open, a control of this axis), and the
    # same client closed: the open/closed ratio with and without it.
    dataclasses.replace(uring_client_variant("min-wait", "all,min-wait", expect_client_uring="min-wait"),
                        workloads=("pipelined", "pipelined-open")),
]
AXES = {
    # axis: (workloads, variants; the default the others are divided by is the
    # one marked base, else the first)
    "uring": (URING_WORKLOADS, URING_VARIANTS),
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
    "uring": ("floor-uring",),  # the floor as it starts, every feature on: the floor's `all`
    "backend": ("floor-uring", "floor-epoll"),
}
# The axes whose server variants also get the memory row (idle connections):
# they change how the server holds memory. A client-only variant does not.
MEMORY_AXES = ("alloc", "backend", "uring")


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
    for generator, pairs in (("wrk", WRK_ROWS), ("h2load", H2LOAD_ROWS)):
        for s, w in pairs:
            r = Row(BY_NAME[s], WORKLOADS[w], generator=generator)
            rows.append(dataclasses.replace(r, default=r.id in DEFAULT_ROWS))
    return rows


def axis_rows(axes):
    """Each axis's variants on its workloads, each workload's control rows
    (AXIS_CONTROLS) first; a control row is the plain row, divided by its
    usual base, and is run once however many axes name it. A variant runs
    on the servers it names (Variant.servers), on the workloads it names of
    its axis's, on a floor only where the floor takes its flags."""
    rows = []
    for axis in axes:
        workloads, variants = AXES[axis]
        for w in workloads:
            for name in AXIS_CONTROLS.get(axis, ()):
                control = Row(BY_NAME[name], WORKLOADS[w], default=True)
                if w in control.server.workloads and control not in rows:
                    rows.append(control)
            for v in variants:
                if v.workloads and w not in v.workloads:
                    continue
                for name in v.servers:
                    server = BY_NAME[name]
                    if w not in server.workloads or not server.takes(v):
                        continue
                    default = ((v.default_workloads is None or w in v.default_workloads)
                               and (server.kind != "control" or v.floor_default))
                    rows.append(Row(server, WORKLOADS[w], variant=v, axis=axis, default=default))
    return rows


def gets_memory_row(row):
    """The memory row (idle connections) for a server instance of the default
    rows and of the axes that change the server's memory (MEMORY_AXES), not
    for a variant that only changes the client."""
    return (row.server.memory_row and (not row.axis or row.axis in MEMORY_AXES)
            and not (row.variant and row.variant.client_args))


def estimate_s(rows, iterations, warmup, duration, cool_down, memory_row=True):
    """About how long a run of these rows takes: each run's warm-up, window
    and cool-down with its start and stop, each server instance's cold start,
    and the memory row where it is measured (ESTIMATE_*: constants.py)."""
    instances = {r.instance: r for r in rows}
    memory = sum(1 for r in instances.values() if memory_row and gets_memory_row(r))
    return (len(rows) * iterations * (warmup + duration + cool_down + ESTIMATE_RUN_OVERHEAD_S)
            + len(instances) * ESTIMATE_INSTANCE_S + memory * ESTIMATE_MEMORY_ROW_S)


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
                or (token in PEER_GENERATORS and r.generator == token) or r.id in GROUPS.get(token, ())]
        if not hits:
            usage_error(f"--only: nothing is named '{token}' (bench/bench.py --list shows the rows)")
        chosen += [r for r in hits if r not in chosen]
    return [r for r in rows if r in chosen]  # in the table's order
