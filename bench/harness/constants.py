"""Placement, bounds and the fixed bytes every workload is checked against."""
import os
import socket
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/harness/ -> the repository
PEERS = os.path.join(ROOT, "bench", "peers")
CLK_TCK = os.sysconf("SC_CLK_TCK")

SERVER_CPUS = "0"            # the server under test, one shard
SERVER_SHARDS = 1            # ... ringhttp's --shards there
CLIENT_CPU = "1"             # the load generator, one thread
START_WAIT_S = 10            # a server not answering its first request by then has failed to start
STOP_WAIT_S = 5              # SIGTERM, then SIGKILL after this long
COOL_DOWN_S = 1              # between runs, so one run's TIME_WAIT and softirq backlog do not land on the next
GENERATOR_GRACE_S = 30       # a generator still running this long after its window has hung
COLD_START_SPAWNS = 3        # cold start is the median of this many spawns
# Every server answers this as the plaintext workload does; cold start ends at
# its first right answer, the same request for every server.
READY_PATH = "/plaintext"
# What rows.estimate_s adds to each run's warm-up, window and cool-down: the
# default run of 17 rows (3 x 14 s each) took 12.6 minutes (BENCHMARKS.md,
# 2026-12-04), about 0.5 s a run and 1 s a server instance more; four
# servers' memory rows took about 30 s (BENCHMARKS.md, issue 14's section).
ESTIMATE_RUN_OVERHEAD_S = 0.5    # the server's start and stop, the client's start
ESTIMATE_INSTANCE_S = 1.0        # cold start: COLD_START_SPAWNS spawns, and the variant's reference start
ESTIMATE_MEMORY_ROW_S = 8.0      # the memory row at the default counts, per server instance
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
# The database rows (db/schema.sql): users 1..DB_USERS named user-i, read in
# a shuffled order; writes insert names cycling through as many.
DB_USERS = 10_000
DB_READ_BODY = b'{"id":{rand:1..10000},"name":"user-{rand:1..10000}"}'  # the client expands it per request
DB_WRITE_REQUEST = b'{"name":"bench-{seq:1..10000}"}'
# ringhttp's database connections per shard on the database rows (its
# --db-pool, passed explicitly; the server's own default is the same 2), and
# the pgbench ceiling's connections: as many as ringhttp holds in total,
# shards × pool (issue 16).
DB_POOL = 2
DB_CONNECTIONS = SERVER_SHARDS * DB_POOL
DB_POOLS_COMPARED = (1, 2, 4)  # --compare db-pool: pool size as a throughput dial
# The open model's row (issue 17): the pipelined workload at this many
# requests a second (-R), against the io_uring floor, beside the same load
# in the closed model. Its targets: within OPEN_RATE_TOLERANCE of the rate,
# at most OPEN_CLIENT_CPU_RATIO times the closed model's client CPU.
OPEN_RATE = 1_000_000
OPEN_RATE_TOLERANCE = 0.01
OPEN_CLIENT_CPU_RATIO = 1.2
# --compare uring's goals (issue 29): ringhttp with every feature on (the
# axis's `all`) at most URING_FLOOR_RATIO times the server CPU per request
# of the floor's best profile in the same run on plaintext and on json (the
# floor answers plaintext only), URING_FLOOR_PIPELINED_RATIO times on
# pipelined.
URING_FLOOR_RATIO = 1.0
URING_FLOOR_PIPELINED_RATIO = 1.1
# The TLS rows (issue 26): nginx over HTTPS with a certificate from a CA the
# run makes with the openssl command (P-256 keys: milliseconds to make, where
# RSA ones take a good part of a second), valid this many days, for these
# names. The target: ringhttp's client at most TLS_CLIENT_CPU_RATIO times
# wrk's CPU per request on the same load, in the same run.
TLS_CERTIFICATE_DAYS = 2
TLS_CERTIFICATE_NAMES = "DNS:localhost, IP:127.0.0.1"
TLS_CLIENT_CPU_RATIO = 0.6
# ringhttp over HTTPS: its server CPU per request at most
# TLS_SERVER_CPU_RATIO times nginx-tls's on kept-alive connections, and per
# request on a new connection each (a handshake each) at most
# TLS_HANDSHAKE_SERVER_CPU_RATIO times nginx-tls's, in the same run.
TLS_SERVER_CPU_RATIO = 0.8
TLS_HANDSHAKE_SERVER_CPU_RATIO = 1.0
TLS_OPENSSL_WAIT_S = 30      # each openssl command, on a busy two-core machine
# The HTTP/2 rows (issue 31): nginx and h2o over TLS with h2 chosen by ALPN,
# loaded by the client and by h2load (nghttp2's) with this many streams in
# flight per connection (the client's --max-streams, h2load's -m; the
# issue's figure, under the concurrent streams each server allows by
# default: nginx 128, h2o 100). The target: the client's
# CPU per request at most H2_CLIENT_CPU_RATIO times h2load's on the same
# load, in the same run.
H2_MAX_STREAMS = 16
H2_CLIENT_CPU_RATIO = 0.7
# The TLS 1.3 suite both generators offer alone on the HTTP/2 rows (the
# client's and h2load's --tls13-ciphers): h2load prefers it by default and
# OpenSSL's own order prefers AES-256, so left alone the two would encrypt
# with different ciphers and their CPU would not compare.
H2_TLS13_CIPHER = "TLS_AES_128_GCM_SHA256"
# --rate-sweep's requested rates, rising past what one shard serves pipelined here.
RATE_SWEEP_RATES = "250k,500k,1M,1.5M,2M,3M"


def stream_body(n):
    return bytes(i % STREAM_PERIOD for i in range(n))
