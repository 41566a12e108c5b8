"""Workloads: what is asked and what every response must be."""
import base64
import dataclasses
import hashlib
import hmac
import json
import time

from .constants import (
    BENCH_ORIGIN,
    DB_READ_BODY,
    DB_USERS,
    DB_WRITE_REQUEST,
    ECHO_BODY,
    ECHO_REQUEST,
    JSON_BODY,
    OPEN_RATE,
    PING_BODY,
    PLAINTEXT,
    PROFILE_BODY,
    STREAM_BYTES,
    STREAM_PERIOD,
    USER_BODY,
    USER_ID,
    stream_body,
)


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
    status: int = 200      # every response's status
    check_body: bool = True  # False: the body is the database's (a new row's id): the status is checked
    database: bool = False   # needs the run's Postgres cluster (db/cluster.sh)
    rate: int = 0            # the open model: requests a second asked for (-R); 0: the closed model
    # Each connection closes after this many responses, its last request
    # saying Connection: close, and a new one opens (0: kept for the run).
    requests_per_connection: int = 0
    # Over HTTPS: offer the session the server gave (resumed handshakes);
    # False: never (--no-sessionid), every handshake a full one.
    tls_resume: bool = True


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
    Workload("pipelined-open", "/plaintext", f"pipelined, in the open model: {OPEN_RATE:,} requests/s asked for "
             "(-R, batches of --pipeline at their intended times), latency from each request's intended time",
             PLAINTEXT, pipelined=True, rate=OPEN_RATE),
    # A new connection for every request: what setting one up costs (over
    # HTTPS, a TLS handshake each, resumed where the generator offers a session).
    Workload("handshake", "/plaintext", "GET /plaintext, one request per connection (it says Connection: close): "
             "each request pays for a new TCP connection and, over HTTPS, a TLS handshake", PLAINTEXT,
             requests_per_connection=1),
    Workload("handshake-full", "/plaintext", "handshake, over HTTPS without resuming a session (--no-sessionid): "
             "every connection pays for a full TLS handshake, a private-key signature included", PLAINTEXT,
             requests_per_connection=1, tls_resume=False),
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
    # The seeds' database rows (issue 16): a real Postgres of the run's own.
    Workload("database-read", f"/db/users/{{rand:1..{DB_USERS}}}",
             f"GET /db/users/:id, a primary-key read of one of {DB_USERS:,} rows, a different one each request "
             "(a fixed shuffled order), each answer checked against its own row", DB_READ_BODY, database=True),
    Workload("database-write", "/db/users", 'POST /db/users {"name":"bench-N"}: INSERT … RETURNING, one commit '
             "each, answered 201 with the new row (its id is the database's: the status is checked)", b"",
             method="POST", headers=("Content-Type: application/json",), request_body=DB_WRITE_REQUEST,
             status=201, check_body=False, database=True),
]}
# The rungs in the seeds' order, with the goal each has against json (issue 5):
# a ratio for ping, an added µs figure for the others.
LADDER = [("plaintext", None), ("json", None), ("ping", ("ratio", 1.05)), ("middleware", ("plus", 0.5)),
          ("validated", ("plus", 1.0)), ("path-param", None), ("authenticated", ("plus", 1.5))]
# The seeds' own figures (Apple M1 Pro, Node 24, their framework): µs more than
# bare node:http's 17.6 µs, or than the rung before, from ../shared/seeds.
SEEDS_LADDER = {"ping": "34.9 (+17 over node:http)", "middleware": "46.9 (+12)", "validated": "48.4 (+13)",
                "authenticated": "68.4 (+33)"}
