"""Servers: how each one is started, what it can serve, why it cannot run."""
import json
import os
import shlex
import shutil
import signal
import subprocess

from .constants import BENCH_ORIGIN, BENCH_RATE_LIMIT, DB_POOL, JSON_BODY, PEERS, PLAINTEXT, SERVER_CPUS, SERVER_SHARDS
from .workloads import WORKLOADS
from .processes import StartError
from .tls import connection_log, openssl_missing


# Servers: how each one is started, what it can serve, why it cannot run.

class Server:
    name = ""
    kind = "peer"           # control | ours | peer | custom
    workloads = ()
    memory_row = True       # a real server; the floors' fixed 4096-slot tables are not
    http = True             # False: no HTTP server, the generator is the whole row (pgbench)
    tls = False             # True: HTTPS, with a certificate from the run's CA (Context.certificates)
    counts_syscalls = False  # True: its /metrics counts its system calls (ringhttp_syscalls_total)
    http2 = False           # True: HTTPS with h2 chosen by ALPN; its generators speak HTTP/2

    def missing(self, ctx):
        return None

    def takes(self, variant):
        """Whether an axis's variant can run on this server (Floor: not every one)."""
        return True

    def command(self, ctx, port, rundir, variant):
        """Returns (argv, extra environment)."""
        raise NotImplementedError

    def version(self, ctx):
        return ""

    def database_args(self, ctx, variant):
        """Flags a database workload's server is started with beside its
        command (ringhttp's --db); ctx.database() starts the run's cluster."""
        return []

    def clean_exit(self, code):
        return code in (0, -signal.SIGTERM)

    def url(self, port, path):
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}{path}"

    def connection_log(self, rundir):
        """The server's own count of its connections and resumed TLS
        sessions (tls.connection_log), where it keeps one; else None."""
        return None


def build_lacks(argv, marker, why):
    """`why` when what `argv` prints about its build does not name `marker`
    (a server built without TLS), or why it could not run; else None."""
    try:
        built = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{' '.join(argv)} failed: {e}"
    return None if marker in built.stdout + built.stderr else why


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "not found"
    text = (out.stdout + out.stderr).strip()
    return text.splitlines()[0] if text else "unknown"


# The --uring values floor-uring refuses with exit 2 (bench/floor/floor_uring.cpp):
# the profiles and switches that turn off multishot accept, multishot receive
# or buffer rings, which the floor is made of.
FLOOR_URING_REFUSES = frozenset({"5.10", "5.19", "no-multishot", "no-multishot-accept", "no-multishot-recv",
                                 "no-bufring"})


class Floor(Server):
    kind = "control"
    workloads = ("plaintext", "pipelined", "pipelined-open")
    memory_row = False

    def __init__(self, flavour):
        self.name = f"floor-{flavour}"
        self.flavour = flavour

    def binary(self, ctx):
        return os.path.join(ctx.build, "bench", "floor", self.name)

    def missing(self, ctx):
        return None if os.access(self.binary(ctx), os.X_OK) else f"{self.binary(ctx)} is not built"

    def takes(self, variant):
        """Whether this floor runs a variant: one that changes only the
        client, or (floor-uring) one whose server flags are --uring values
        the floor does not refuse."""
        if variant.args or variant.preload or variant.glibc_build or variant.db_pool:
            return False
        flags = list(variant.extra_args)
        if not flags:
            return True
        if self.flavour != "uring" or len(flags) != 2 or flags[0] != "--uring":
            return False
        return not set(flags[1].split(",")) & FLOOR_URING_REFUSES

    def command(self, ctx, port, rundir, variant):
        return [self.binary(ctx), "--port", str(port)] + list(variant.extra_args if variant else ()), {}

    def clean_exit(self, code):
        return code == 0


class Ringhttp(Server):
    name = "ringhttp"
    kind = "ours"
    counts_syscalls = True
    # Every workload but the one that only HTTPS tells apart; the database
    # ones with --db and --db-pool (database_args).
    workloads = tuple(w for w in WORKLOADS if w != "handshake-full")

    def binary(self, ctx, build=None):
        return os.path.join(build or ctx.build, "server", "server")

    def missing(self, ctx):
        return None if os.access(self.binary(ctx), os.X_OK) else f"{self.binary(ctx)} is not built"

    def command(self, ctx, port, rundir, variant):
        build = ctx.build_glibc if variant and variant.glibc_build else ctx.build
        argv = [self.binary(ctx, build), "--address", "127.0.0.1", "--port", str(port)]
        argv += variant.args if variant and variant.args else ["--shards", str(SERVER_SHARDS), "--cpus", SERVER_CPUS]
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

    @staticmethod
    def db_pool(variant):
        """Database connections per shard: the variant's (--compare db-pool), else DB_POOL."""
        return getattr(variant, "db_pool", 0) or DB_POOL

    def database_args(self, ctx, variant):
        # Only on the database rows: every other row's command is unchanged
        # and starts no Postgres.
        return ["--db", ctx.database().url, "--db-pool", str(self.db_pool(variant))]

    def clean_exit(self, code):
        return code == 0  # documented: SIGTERM drains and exits 0


class RinghttpTls(Ringhttp):
    """ringhttp over HTTPS: the ringhttp rows' command with a certificate
    from the run's own CA (--tls-cert, --tls-key), tickets on as nginx-tls
    has them."""
    name = "ringhttp-tls"
    tls = True
    workloads = ("plaintext", "json", "handshake", "handshake-full")

    def missing(self, ctx):
        return super().missing(ctx) or openssl_missing()

    def command(self, ctx, port, rundir, variant):
        argv, env = super().command(ctx, port, rundir, variant)
        certificates = ctx.certificates()
        return argv + ["--tls-cert", certificates.certificate, "--tls-key", certificates.key], env


class Nginx(Server):
    name = "nginx"
    workloads = ("plaintext", "json", "stream-64k", "pipelined", "handshake")

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
        listen, http, server = self.tls_lines(ctx, rundir)
        conf = conf.replace("@LISTEN_TLS@", listen).replace("@TLS_HTTP@", http).replace("@TLS_SERVER@", server)
        path = os.path.join(rundir, "nginx.conf")
        with open(path, "w") as f:
            f.write(conf)
        write_bodies(rundir, {"stream.bin": WORKLOADS["stream-64k"].body})
        return [shutil.which("nginx"), "-p", rundir, "-c", path, "-e", "stderr"], {}

    def tls_lines(self, ctx, rundir):
        """What nginx.conf's @LISTEN_TLS@, @TLS_HTTP@ and @TLS_SERVER@ become: nothing, over plain HTTP."""
        return "", "", ""

    def version(self, ctx):
        return first_line(["nginx", "-v"])


class NginxTls(Nginx):
    """nginx over HTTPS: the nginx rows' configuration with TLS on its
    listener (bench/peers/nginx-tls.conf), a certificate from the run's own
    CA, and a log line per connection saying whether its session was
    resumed. Its memory row is over HTTPS: what an idle connection costs
    with its TLS state, beside ringhttp-tls's."""
    name = "nginx-tls"
    tls = True
    workloads = ("plaintext", "json", "handshake", "handshake-full")
    LOG = "tls-connections.log"

    def missing(self, ctx):
        why = super().missing(ctx) or openssl_missing()
        if why:
            return why
        return build_lacks(["nginx", "-V"], "--with-http_ssl_module",
                           "this nginx has no http_ssl_module (Debian's nginx-light has it)")

    def tls_lines(self, ctx, rundir):
        certificates = ctx.certificates()
        with open(os.path.join(PEERS, "nginx-tls.conf")) as f:
            text = f.read()
        text = (text.replace("@CERTIFICATE@", certificates.certificate).replace("@KEY@", certificates.key)
                .replace("@RUNDIR@", rundir))
        http, marker, server = text.partition("#@SERVER@\n")
        if not marker:
            raise StartError("bench/peers/nginx-tls.conf has no #@SERVER@ line between its http and server parts")
        return " ssl", http, server

    def connection_log(self, rundir):
        return connection_log(os.path.join(rundir, self.LOG))


class NginxH2(NginxTls):
    """nginx over HTTP/2: the nginx-tls rows' configuration with `http2` on
    its listener, so a client offering h2 by ALPN gets it (one without ALPN,
    as the harness's own start-up check, gets HTTP/1.1). keepalive_requests
    (nginx.conf) bounds the streams of a connection too: far past a run.
    Its idle connections cost what nginx-tls's do: no memory row."""
    name = "nginx-h2"
    http2 = True
    memory_row = False
    workloads = ("plaintext",)

    def missing(self, ctx):
        return super().missing(ctx) or build_lacks(["nginx", "-V"], "--with-http_v2_module",
                                                   "this nginx has no http_v2_module (Debian's nginx-light has it)")

    def tls_lines(self, ctx, rundir):
        _, http, server = super().tls_lines(ctx, rundir)
        return " ssl http2", http, server


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
        top, listen = self.tls_lines(ctx)
        conf = conf.replace("@TLS_GLOBAL@\n", top).replace("@TLS_LISTEN@\n", listen)
        path = os.path.join(rundir, "h2o.conf")
        with open(path, "w") as f:
            f.write(conf)
        return [shutil.which("h2o"), "-c", path], {}

    def tls_lines(self, ctx):
        """What h2o.conf's @TLS_GLOBAL@ and @TLS_LISTEN@ lines become: nothing, over plain HTTP."""
        return "", ""

    def version(self, ctx):
        return first_line(["h2o", "--version"])


class H2oTls(H2o):
    """h2o over HTTPS: the h2o rows' configuration (the same static files)
    with TLS on its listener (bench/peers/h2o-tls.conf: TLS 1.2 and 1.3,
    session tickets and h2o's internal session cache) and a certificate
    from the run's own CA. No connection log: h2o's access log has no
    per-connection condition, and a line per request would be its own
    cost; the client's report counts handshakes and resumed sessions.
    Its memory row is over HTTPS, beside ringhttp-tls's and nginx-tls's."""
    name = "h2o-tls"
    tls = True
    workloads = ("plaintext", "json", "handshake", "handshake-full")

    def missing(self, ctx):
        why = super().missing(ctx) or openssl_missing()
        if why:
            return why
        # `h2o --version` names the OpenSSL it is built with; a build
        # without one has no `ssl` listener option at all.
        return build_lacks(["h2o", "--version"], "OpenSSL",
                           "this h2o names no OpenSSL in `h2o --version`: it is built without TLS")

    def tls_lines(self, ctx):
        certificates = ctx.certificates()
        with open(os.path.join(PEERS, "h2o-tls.conf")) as f:
            text = f.read()
        text = text.replace("@CERTIFICATE@", certificates.certificate).replace("@KEY@", certificates.key)
        top, marker, listen = text.partition("#@LISTEN@\n")
        if not marker:
            raise StartError("bench/peers/h2o-tls.conf has no #@LISTEN@ line between its top-level and listener "
                             "parts")
        return top, listen

    def version(self, ctx):
        # Its second line names the TLS library it was built with.
        try:
            out = subprocess.run(["h2o", "--version"], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            return "not found"
        return "; ".join(line.strip() for line in (out.stdout + out.stderr).splitlines()[:2]) or "unknown"


class H2oH2(H2oTls):
    """h2o over HTTP/2: the h2o-tls rows' configuration as it is, since h2o
    offers h2 by ALPN on every TLS listener. Its idle connections cost what
    h2o-tls's do: no memory row."""
    name = "h2o-h2"
    http2 = True
    memory_row = False
    workloads = ("plaintext",)


class Node(Server):
    name = "node"
    workloads = ("plaintext", "json", "stream-64k", "pipelined")

    def missing(self, ctx):
        return None if shutil.which("node") else "node is not installed (Debian: nodejs)"

    def command(self, ctx, port, rundir, variant):
        return [shutil.which("node"), os.path.join(PEERS, "node_http.js"), str(port)], {}

    def version(self, ctx):
        return "node " + first_line(["node", "--version"])


class NodeTls(Node):
    """node:https, the seeds' baseline over HTTPS: the node rows' script
    (bench/peers/node_http.js, the same routes) given the run's certificate
    and key, signed by its own CA, on its command line; node's TLS defaults
    (TLS 1.2 and 1.3, session tickets on). Its rows are the node rows' that
    the TLS group compares: plaintext and json. Its memory row is over
    HTTPS, beside the other TLS servers'."""
    name = "node-tls"
    tls = True
    workloads = ("plaintext", "json")

    def missing(self, ctx):
        why = super().missing(ctx) or openssl_missing()
        if why:
            return why
        # A node built without OpenSSL (./configure --without-ssl) has no node:https.
        try:
            built = subprocess.run(["node", "-p", "process.versions.openssl || ''"], capture_output=True, text=True,
                                   timeout=10)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"node -p process.versions.openssl failed: {e}"
        if built.returncode != 0 or not built.stdout.strip():
            return "this node has no OpenSSL (process.versions.openssl is empty): it is built without node:https"
        return None

    def command(self, ctx, port, rundir, variant):
        argv, env = super().command(ctx, port, rundir, variant)
        certificates = ctx.certificates()
        return argv + [certificates.certificate, certificates.key], env

    def version(self, ctx):
        return (super().version(ctx) + ", OpenSSL "
                + first_line(["node", "-p", "process.versions.openssl"]))


def node_pg_missing():
    """What the node-pg peer lacks to run here, with the command that
    installs it, or None (the benchmark's reason to skip its rows, and the
    tests' to fail at once)."""
    if not shutil.which("node"):
        return "node is not installed: apt-get install nodejs (tools/install-deps.sh does it)"
    if not os.path.isdir(os.path.join(PEERS, "node_modules", "pg")):
        return "npm's pg is not installed in bench/peers: run tools/install-deps.sh, or (cd bench/peers && npm ci)"
    return None


class NodePg(Server):
    """node:http + pg (bench/peers/node_pg.js): the database rows' peer,
    the seeds' stack without the ORM, against the run's Postgres cluster."""
    name = "node-pg"
    workloads = ("database-read", "database-write")
    memory_row = False  # node:http's idle connections are the node row's

    def missing(self, ctx):
        return node_pg_missing() or ctx.database_missing()

    def command(self, ctx, port, rundir, variant):
        return [shutil.which("node"), os.path.join(PEERS, "node_pg.js"), str(port), ctx.database().url], {}

    def version(self, ctx):
        try:
            with open(os.path.join(PEERS, "node_modules", "pg", "package.json")) as f:
                pg = json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            pg = "?"
        return f"node {first_line(['node', '--version'])}, pg {pg}, pool of 10"


class Pgbench(Server):
    """The database rows' ceiling: pgbench on the run's cluster, the same
    queries as prepared statements (-M prepared) over DB_CONNECTIONS
    connections: what the database alone does here, with no HTTP at all."""
    name = "pgbench"
    kind = "control"
    http = False
    memory_row = False
    workloads = ("database-read", "database-write")
    scripts = {
        "database-read": "\\set id random(1, 10000)\nSELECT id, name FROM users WHERE id = :id;\n",
        "database-write": "INSERT INTO users (name) VALUES ('pgbench') RETURNING id, name;\n",
    }

    def missing(self, ctx):
        if not shutil.which("pgbench"):
            return "pgbench is not installed (Debian: postgresql-15)"
        return ctx.database_missing()

    def version(self, ctx):
        return first_line(["pgbench", "--version"])


class Custom(Server):
    kind = "custom"
    workloads = tuple(w.name for w in WORKLOADS.values()
                      if not w.ladder and not w.database and not w.rate and not w.requests_per_connection)

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
