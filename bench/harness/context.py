"""One run's context: the options resolved, the build, the bodies and the token the rows need."""
import os
import shutil
import tempfile

from .constants import SERVER_FD_MARGIN, TOKEN_LIFETIME_S, TOKEN_SUBJECT
from .workloads import mint_token
from .memory import descriptor_limits, holder_plan, resolve_counts
from .database import Database, database_missing
from .processes import StartError
from .tls import client_context, make_certificates


class Context:
    live = set()  # their private directories are removed on the way out, whatever happens

    def __init__(self, a):
        self.build = os.path.realpath(a.build)
        self.build_glibc = os.path.realpath(a.build_glibc or (self.build.rstrip("/") + "-glibc"))
        self.client = os.path.join(self.build, "client", "client")
        # --also-client: other client binaries by name, each driving its own
        # copy of the rows the build's client drives (Row.client).
        self.clients = {name: os.path.realpath(path) for name, path in getattr(a, "also_client", [])}
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
        Context.live.add(self)
        self._bodies = {}
        # A secret made for this run (never a default), and a token signed with it.
        secret = os.urandom(32).hex().encode()
        self.jwt_secret_file = os.path.join(self.bodies_dir, "jwt-secret")
        with open(self.jwt_secret_file, "wb") as f:
            f.write(secret)
        os.chmod(self.jwt_secret_file, 0o600)
        self.token = mint_token(secret, TOKEN_SUBJECT, TOKEN_LIFETIME_S)
        self._database = None  # the cluster, or the StartError its start raised
        self._certificates = None  # the TLS rows' CA and certificate, or the StartError making them raised

    def database(self):
        """The run's Postgres cluster, started on first use (Database.live
        stops it); a start that failed fails every row that needs it, once."""
        if self._database is None:
            try:
                self._database = Database()
            except StartError as e:
                self._database = e
        if isinstance(self._database, StartError):
            raise self._database
        return self._database

    def certificates(self):
        """The TLS rows' CA and server certificate (tls.make_certificates),
        made by openssl in the run's private directory on first use and
        removed with it; a failure fails every TLS row, once."""
        if self._certificates is None:
            try:
                self._certificates = make_certificates(os.path.join(self.bodies_dir, "tls"))
            except StartError as e:
                self._certificates = e
        if isinstance(self._certificates, StartError):
            raise self._certificates
        return self._certificates

    def client_tls(self):
        """An ssl context trusting the run's CA, for the harness's own requests to a TLS server."""
        return client_context(self.certificates())

    def client_binary(self, row):
        """The client a row's generator runs: the build's, or the --also-client one the row names."""
        return self.clients[row.client] if row.client else self.client

    def close(self):
        """Stops the cluster, if one was started."""
        if isinstance(self._database, Database):
            self._database.stop()

    def remove(self):
        """Removes the run's private directory: bodies, the JWT secret, the CA and its key."""
        shutil.rmtree(self.bodies_dir, ignore_errors=True)
        Context.live.discard(self)

    def database_missing(self):
        return database_missing()

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
