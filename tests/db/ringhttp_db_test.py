#!/usr/bin/env python3
"""ringhttp's database routes (GET /db/users/:id, POST /db/users) against a
throwaway cluster of our own (db/cluster.sh), over real sockets.

- without --db: the routes validate as ever and then answer 503 JSON;
- the database down when the server starts: 503 "database unavailable",
  counted as connect errors, then served once the cluster is up, without
  restarting the server;
- 2,000 reads of {rand:1..10000} by the client: each response is its own
  row; a missing row is 404, a bad id 400; HEAD has the length, no body;
- 100 reads pipelined in one send, with immediate answers (a bad id, 400)
  and deferred ones (rows, and 404s) mixed: every answer in its request's
  order, each body its own id's;
- a write is 201 with the new row, adds exactly one row and reads back;
  every bad body is refused with its status (415, 400, 413, 422 naming the
  field); 200 client writes add 200 rows;
- a client that disconnects while its query is in flight (its Postgres
  backend stopped with SIGSTOP): its slot is held until the result comes,
  then freed, and the server goes on;
- the shard's queue full (--db-queue 4, backends stopped): the fifth and
  sixth requests get 503 at once, the four in flight are answered 200 once
  the backends resume;
- a query past --db-timeout-ms: 503, its connection replaced, service goes on;
- a row too large to answer is 500; one past a connection's input buffer
  costs that connection (503), which is re-made;
- the database restarted under load: 503s while it is down, 200s after,
  the same server process, the client sees no transport error;
- the same reads, plain and pipelined, over TLS (sslmode=require);
- /metrics counts all of it; the server exits 0 on SIGTERM.

Usage: ringhttp_db_test.py --build DIR    (meson test runs it, plain and ASan)
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from db_support import WAIT_S, cluster, free_port, verdict  # noqa: E402

JSON = {"Content-Type": "application/json"}


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.request(method, path, body=body.encode() if isinstance(body, str) else body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode(), dict(r.getheaders())
    finally:
        conn.close()


def metrics(port):
    """{"name{labels}": value} of the server's /metrics."""
    text = request(port, "GET", "/metrics")[1]
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def wait_for(what, predicate, timeout_s=WAIT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


# The server's --backend for every server this test starts.
BACKEND = "uring"


class Server:
    def __init__(self, build, *args):
        self.port = free_port()
        self.proc = subprocess.Popen([os.path.join(build, "server", "server"), "--address", "127.0.0.1",
                                      "--port", str(self.port), "--shards", "1", "--backend", BACKEND, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if "listening" not in line:
            raise AssertionError(f"the server did not start: {line} {self.proc.stderr.read()[-1000:]}")

    def stop(self, failures):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(timeout=WAIT_S)
                if code != 0:
                    failures.append(f"the server exited {code} on SIGTERM: {self.proc.stderr.read()[-2000:]}")
            except subprocess.TimeoutExpired:
                self.proc.kill()
                failures.append("the server did not exit on SIGTERM")
        else:
            failures.append(f"the server died ({self.proc.returncode}): {self.proc.stderr.read()[-2000:]}")


def client(build, *args):
    r = subprocess.run([os.path.join(build, "client", "client"), "--json", *args], capture_output=True, text=True,
                       timeout=WAIT_S * 2)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else {}), r.stderr


def psql(url, sql):
    return subprocess.run(["psql", "-X", "-tA", url, "-c", sql], capture_output=True, text=True,
                          timeout=WAIT_S).stdout.strip()


def backends(url):
    """PIDs of the server's database connections (their application_name)."""
    out = psql(url, "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'ringhttp shard%'")
    return [int(p) for p in out.split()]


def signal_all(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def read_responses(sock, count):
    """`count` HTTP/1.1 responses (Content-Length framed) from `sock`: [(status, body)]."""
    data = b""
    out = []
    sock.settimeout(WAIT_S)
    while len(out) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].decode()
            length = int(re.search(r"(?im)^content-length: *(\d+)", head).group(1))
            if len(data) >= end + 4 + length:
                out.append((int(head.split(" ", 2)[1]), data[end + 4:end + 4 + length].decode()))
                data = data[end + 4 + length:]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed after {len(out)} of {count} responses")
        data += chunk
    return out


def check_no_db(build, failures):
    s = Server(build)
    try:
        status, body, _ = request(s.port, "GET", "/db/users/1")
        if status != 503 or "no database configured" not in body:
            failures.append(f"no --db: GET {status} {body!r}, not 503 naming the missing --db")
        if request(s.port, "GET", "/db/users/0")[0] != 400:
            failures.append("no --db: a bad id is not 400 first")
        if request(s.port, "POST", "/db/users", '{"name":"x"}', {"Content-Type": "text/plain"})[0] != 415:
            failures.append("no --db: a text body is not 415 first")
        status, body, _ = request(s.port, "POST", "/db/users", '{"name":"x"}', JSON)
        if status != 503 or "no database configured" not in body:
            failures.append(f"no --db: POST {status} {body!r}, not 503")
    finally:
        s.stop(failures)


def check_reads_and_writes(build, s, url, failures):
    base = f"http://127.0.0.1:{s.port}"
    code, report, err = client(build, "-n", "2000", "-c", "8", "--expect-status", "200", "--expect-body",
                               '{"id":{rand:1..10000},"name":"user-{rand:1..10000}"}',
                               base + "/db/users/{rand:1..10000}")
    if code != 0 or report.get("requests") != 2000 or report.get("errors_total") != 0:
        failures.append(f"reads: exit {code}, {report.get('requests')} requests, errors {report.get('errors')}: "
                        f"{err[-500:]}")
    for path, status in (("/db/users/10001", 404), ("/db/users/0", 400), ("/db/users/abc", 400),
                         ("/db/users/007", 400), ("/db/users/9007199254740992", 400),
                         ("/db/users/9007199254740991", 404)):
        got = request(s.port, "GET", path)
        if got[0] != status:
            failures.append(f"GET {path}: {got[0]} {got[1]!r}, not {status}")
    status, body, headers = request(s.port, "HEAD", "/db/users/42")
    if status != 200 or body != "" or headers.get("Content-Length") != str(len('{"id":42,"name":"user-42"}')):
        failures.append(f"HEAD /db/users/42: {status} {body!r} {headers}")
    status, body, _ = request(s.port, "POST", "/db/users", '{"name":"wr\\"itten é"}', JSON)
    if (status, body) != (201, '{"id":10001,"name":"wr\\"itten é"}'):
        failures.append(f"POST: {status} {body!r}, not 201 with id 10001")
    if request(s.port, "GET", "/db/users/10001")[:2] != (200, '{"id":10001,"name":"wr\\"itten é"}'):
        failures.append("the written row does not read back")
    if psql(url, "SELECT count(*) FROM users") != "10001":
        failures.append("one write did not add exactly one row")
    for body, headers, status, words in (
            ('{"name":"x"}', {"Content-Type": "text/plain"}, 415, "Content-Type"),
            ('{"name":', JSON, 400, "malformed"),
            ('[1]', JSON, 400, "malformed"),
            ('{"name":""}', JSON, 422, '"field":"name"'),
            ('{"nom":"x"}', JSON, 422, '"field":"nom"'),
            ('{}', JSON, 422, '"field":"name"'),
            ('{"name":5}', JSON, 422, '"field":"name"'),
            ('{"name":"x","n":1}', JSON, 422, '"field":"n"'),
            ('{"name":"a\\u0000b"}', JSON, 422, '"field":"name"'),
            ('{"name":"' + "x" * 101 + '"}', JSON, 422, '"field":"name"'),
            ('{"name":"' + "x" * 5000 + '"}', JSON, 413, "too large")):
        got = request(s.port, "POST", "/db/users", body, headers)
        if got[0] != status or words not in got[1]:
            failures.append(f"POST {body[:30]!r}: {got[0]} {got[1][:80]!r}, not {status} with {words!r}")
    if psql(url, "SELECT count(*) FROM users") != "10001":
        failures.append("a refused body wrote a row")
    code, report, err = client(build, "-n", "200", "-c", "4", "-m", "POST", "-H", "Content-Type: application/json",
                               "-b", '{"name":"load-{seq:1..200}"}', "--expect-status", "201", base + "/db/users")
    if code != 0 or report.get("requests") != 200:
        failures.append(f"writes: exit {code}, {report.get('requests')} requests, errors {report.get('errors')}")
    if psql(url, "SELECT count(*) FROM users WHERE name LIKE 'load-%'") != "200":
        failures.append("200 client writes did not add 200 rows")


def check_pipelined(s, failures, own_protocol=True):
    # Immediate answers (400 for id 0) between deferred ones (rows, and 404s
    # for ids past the table) must still come in request order.
    before = metrics(s.port)
    ids = []
    for i in range(100):
        ids.append("0" if i % 10 == 3 else str(20000 + i) if i % 15 == 7 else str((i * 37) % 10000 + 1))
    batch = "".join(f"GET /db/users/{x} HTTP/1.1\r\nHost: t\r\n\r\n" for x in ids).encode()
    with socket.create_connection(("127.0.0.1", s.port), timeout=WAIT_S) as sock:
        sock.sendall(batch)
        got = read_responses(sock, len(ids))
    for i, (x, (status, body)) in enumerate(zip(ids, got)):
        want = ((400, "invalid path parameter") if x == "0" else (404, '{"error":"no such user"}')
                if int(x) > 10000 else (200, f'{{"id":{x},"name":"user-{x}"}}'))
        if status != want[0] or want[1] not in body:
            failures.append(f"pipelined response {i} (id {x}): {status} {body!r}, not {want}")
            break
    # A batch's queries share a send on each database connection: the first
    # batch parses about 30 requests (as many as the connection's queue of
    # 32 has room for), at least 27 of them valid, in at most 2 sends, so
    # the 90 take at most 2 + 63 however the rest are batched; through
    # libpq (TLS) each query is its own write.
    after = metrics(s.port)
    queries = after["ringhttp_db_queries_total"] - before["ringhttp_db_queries_total"]
    sends = after["ringhttp_db_sends_total"] - before["ringhttp_db_sends_total"]
    if queries != 90:
        failures.append(f"{queries} queries for 90 valid pipelined reads")
    elif own_protocol and sends > 65:
        failures.append(f"90 pipelined queries took {sends} sends: not one per batch")
    elif not own_protocol and sends != queries:
        failures.append(f"over TLS (libpq) {sends} sends for {queries} queries, not one each")


def raw_exchange(port, request_bytes):
    """Sends the bytes and reads until the server closes (bounded): all it sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request_bytes)
        data = b""
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    return data, True
                data += chunk
        except socket.timeout:
            return data, False


def check_framing(s, failures):
    # A deferred answer is framed when its result comes, as it would have
    # been at once: Connection: close honoured (then the server closes), and
    # HTTP/1.0 keep-alive said back.
    data, closed = raw_exchange(s.port, b"GET /db/users/9 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    text = data.decode()
    if not (text.startswith("HTTP/1.1 200") and "\r\nConnection: close\r\n" in text and
            text.endswith('{"id":9,"name":"user-9"}') and closed):
        failures.append(f"Connection: close on a database route: {text!r}, closed {closed}")
    with socket.create_connection(("127.0.0.1", s.port), timeout=WAIT_S) as sock:
        sock.sendall(b"GET /db/users/10 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        sock.settimeout(WAIT_S)
        data = b""
        while not data.endswith(b'{"id":10,"name":"user-10"}'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        if b"\r\nConnection: keep-alive\r\n" not in data:
            failures.append(f"HTTP/1.0 keep-alive on a database route: {data!r}")


def check_disconnect_mid_query(s, url, failures):
    pids = backends(url)
    if len(pids) != 2:
        failures.append(f"{len(pids)} database connections, not --db-pool's 2")
    signal_all(pids, signal.SIGSTOP)
    try:
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=WAIT_S)
        sock.sendall(b"GET /db/users/5 HTTP/1.1\r\nHost: t\r\n\r\n")
        wait_for("the query in flight", lambda: metrics(s.port)["ringhttp_db_queries_in_flight"] == 1, 10)
        # Gone with a reset: the server sees the peer leave at once.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        time.sleep(0.5)
        # Its slot waits for the result: active is it and the metrics
        # request asking (a slot freed early would make it 1).
        wait_for("the slot held while its query is in flight",
                 lambda: metrics(s.port)["ringhttp_connections_active"] == 2, 5)
    finally:
        signal_all(pids, signal.SIGCONT)
    wait_for("the result, then the slot freed",
             lambda: metrics(s.port)["ringhttp_db_queries_in_flight"] == 0 and
             metrics(s.port)["ringhttp_connections_active"] == 1, 10)
    if request(s.port, "GET", "/db/users/6")[:2] != (200, '{"id":6,"name":"user-6"}'):
        failures.append("the server does not serve after a client left mid-query")


def check_oversized_rows(s, url, failures):
    """Rows db/schema.sql's CHECK would refuse, in a table without it: one
    too large to answer is a 500; one too large for a connection's input
    buffer (64 KiB) costs that connection (503), which is re-made."""
    psql(url, "ALTER TABLE users DROP CONSTRAINT IF EXISTS users_name_check")
    psql(url, "INSERT INTO users (id, name) VALUES (20001, repeat('x', 600)), (20002, repeat('y', 70000))")
    lost = metrics(s.port)['ringhttp_db_errors_total{class="lost"}']
    got = request(s.port, "GET", "/db/users/20001")[:2]
    if got != (500, '{"error":"database error"}'):
        failures.append(f"a 600-byte name: {got}, not 500 database error")
    if metrics(s.port)['ringhttp_db_errors_total{class="lost"}'] != lost:
        failures.append("a row too large to answer cost its connection")
    got = request(s.port, "GET", "/db/users/20002")[:2]
    if got != (503, '{"error":"database unavailable"}'):
        failures.append(f"a 70,000-byte name: {got}, not 503 database unavailable")
    if metrics(s.port)['ringhttp_db_errors_total{class="lost"}'] != lost + 1:
        failures.append("a message past the input buffer did not close its connection")
    psql(url, "DELETE FROM users WHERE id > 20000")
    wait_for("the connection re-made", lambda: metrics(s.port)["ringhttp_db_connections_up"] == 2, 20)
    if request(s.port, "GET", "/db/users/11")[:2] != (200, '{"id":11,"name":"user-11"}'):
        failures.append("no service after an oversized row")


def check_timeout(s, url, failures):
    pids = backends(url)
    errors = metrics(s.port)['ringhttp_db_errors_total{class="timeout"}']
    signal_all(pids, signal.SIGSTOP)
    try:
        # Both connections stalled, a query on each (the pool sends to the
        # one with fewest in flight): each is answered at its deadline (2 s).
        t0 = time.monotonic()
        socks = []
        for i in range(2):
            sock = socket.create_connection(("127.0.0.1", s.port), timeout=WAIT_S)
            sock.sendall(b"GET /db/users/7 HTTP/1.1\r\nHost: t\r\n\r\n")
            socks.append(sock)
            wait_for("a query in flight", lambda: metrics(s.port)["ringhttp_db_queries_in_flight"] == i + 1, 10)
        results = [read_responses(sock, 1)[0] for sock in socks]
        for sock in socks:
            sock.close()
        if any(r != (503, '{"error":"database unavailable"}') for r in results):
            failures.append(f"queries past their deadline: {results}, not 503 database unavailable")
        if time.monotonic() - t0 < 1.5:
            failures.append("a stalled query was answered before its deadline")
        if metrics(s.port)['ringhttp_db_errors_total{class="timeout"}'] != errors + 2:
            failures.append("queries past their deadline are not counted as timeouts (one per connection)")
        # Replaced by fresh connections while the stalled backends still hang.
        wait_for("fresh connections", lambda: metrics(s.port)["ringhttp_db_connections_up"] == 2, 20)
        if request(s.port, "GET", "/db/users/8")[:2] != (200, '{"id":8,"name":"user-8"}'):
            failures.append("no service on fresh connections after a timeout")
    finally:
        signal_all(pids, signal.SIGCONT)


def check_tls(build, url, d, failures):
    """The same reads over TLS (sslmode=require): OpenSSL may hold decrypted
    input that no poll reports, which the pool reads on its own."""
    data = os.path.join(d, "data")
    key, crt = os.path.join(data, "server.key"), os.path.join(data, "server.crt")
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                           "-days", "1", "-keyout", key, "-out", crt], capture_output=True, text=True, timeout=WAIT_S)
    if made.returncode != 0:
        raise AssertionError(f"openssl could not make a certificate: {made.stderr[-500:]}")
    owner = os.stat(data)
    for f in (key, crt):
        os.chown(f, owner.st_uid, owner.st_gid)
        os.chmod(f, 0o600)
    psql(url, "ALTER SYSTEM SET ssl = on")
    psql(url, "SELECT pg_reload_conf()")
    wait_for("TLS on", lambda: psql(url + "?sslmode=require", "SHOW ssl") == "on", 10)
    s = Server(build, "--db", url + "?sslmode=require")
    try:
        wait_for("the pool over TLS", lambda: metrics(s.port)["ringhttp_db_connections_up"] == 2, 30)
        if psql(url, "SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid) "
                     "WHERE ssl AND application_name LIKE 'ringhttp shard%'") != "2":
            failures.append("the pool's connections are not over TLS")
        code, report, err = client(build, "-n", "3000", "-c", "32", "-p", "4", "--expect-status", "200",
                                   "--expect-body", '{"id":{rand:1..10000},"name":"user-{rand:1..10000}"}',
                                   f"http://127.0.0.1:{s.port}/db/users/{{rand:1..10000}}")
        if code != 0 or report.get("requests") != 3000 or report.get("errors_total") != 0:
            failures.append(f"reads over TLS: exit {code}, {report.get('requests')} requests, errors "
                            f"{report.get('errors')}: {err[-500:]}")
        check_pipelined(s, failures, own_protocol=False)
    finally:
        s.stop(failures)


def check_queue_full(build, url, failures):
    s = Server(build, "--db", url, "--db-queue", "4")
    try:
        wait_for("the pool", lambda: metrics(s.port)["ringhttp_db_connections_up"] == 2)
        pids = backends(url)  # the other server's too: stopping them does no harm
        signal_all(pids, signal.SIGSTOP)
        socks = []
        try:
            for i in range(6):
                sock = socket.create_connection(("127.0.0.1", s.port), timeout=WAIT_S)
                sock.sendall(f"GET /db/users/{i + 1} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
                socks.append(sock)
                if i == 3:
                    wait_for("four queries in flight",
                             lambda: metrics(s.port)["ringhttp_db_queries_in_flight"] == 4, 10)
            for sock in socks[4:]:
                got = read_responses(sock, 1)[0]
                if got != (503, '{"error":"database queue full"}'):
                    failures.append(f"past the queue: {got}, not 503 database queue full")
            if metrics(s.port)['ringhttp_db_refusals_total{reason="queue_full"}'] != 2:
                failures.append("queue-full refusals are not counted")
        finally:
            signal_all(pids, signal.SIGCONT)
        for i, sock in enumerate(socks[:4]):
            got = read_responses(sock, 1)[0]
            if got != (200, f'{{"id":{i + 1},"name":"user-{i + 1}"}}'):
                failures.append(f"queued request {i}: {got}")
        for sock in socks:
            sock.close()
    finally:
        s.stop(failures)


def check_restart(build, s, d, db_port, failures):
    """The cluster stopped and started again under load."""
    load = {}

    def run_load():
        load["result"] = client(build, "-d", "8s", "-w", "0", "-c", "4", "--expect-status", "200,503",
                                f"http://127.0.0.1:{s.port}/db/users/{{rand:1..10000}}")
    t = threading.Thread(target=run_load)
    before = metrics(s.port)
    t.start()
    time.sleep(1.5)
    cluster("stop", d)
    wait_for("503 while the database is down",
             lambda: request(s.port, "GET", "/db/users/3")[:2] == (503, '{"error":"database unavailable"}'), 10)
    if metrics(s.port)["ringhttp_db_connections_up"] != 0:
        failures.append("connections are counted up while the database is down")
    time.sleep(1)
    r = cluster("start", d, str(db_port))
    if r.returncode != 0:
        raise AssertionError(f"the cluster did not start again: {r.stderr[-1000:]}")
    wait_for("service after the restart",
             lambda: request(s.port, "GET", "/db/users/3")[:2] == (200, '{"id":3,"name":"user-3"}'), 30)
    t.join()
    code, report, err = load["result"]
    if code != 0 or report.get("errors_total") != 0:
        failures.append(f"the load across the restart: exit {code}, errors {report.get('errors')}: {err[-300:]}")
    m = metrics(s.port)
    if m['ringhttp_db_errors_total{class="lost"}'] <= before['ringhttp_db_errors_total{class="lost"}']:
        failures.append("connections lost in the restart are not counted")
    if m['ringhttp_responses_total{status="503"}'] <= before['ringhttp_responses_total{status="503"}']:
        failures.append("no 503 was answered while the database was down")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    p.add_argument("--backend", default="uring", choices=("uring", "epoll"))
    args = p.parse_args()
    global BACKEND
    BACKEND = args.backend
    build = os.path.realpath(args.build)
    failures = []
    d = tempfile.mkdtemp(prefix="ringhttp-db.")
    db_port = free_port()
    url = f"postgresql://ringhttp@127.0.0.1:{db_port}/ringhttp"
    s = None
    try:
        check_no_db(build, failures)
        # Started before the database: it must come up on its own.
        s = Server(build, "--db", url, "--db-timeout-ms", "2000")
        status, body, _ = request(s.port, "GET", "/db/users/1")
        if (status, body) != (503, '{"error":"database unavailable"}'):
            failures.append(f"the database down at start: {status} {body!r}, not 503 database unavailable")
        wait_for("failed connection attempts",
                 lambda: metrics(s.port)['ringhttp_db_errors_total{class="connect"}'] >= 2, 10)
        r = cluster("start", d, str(db_port))
        if r.returncode != 0:
            raise AssertionError(f"the cluster did not start: {r.stderr[-1000:]}")
        if r.stdout.strip() != url:
            raise AssertionError(f"the cluster's URL is {r.stdout.strip()}, not {url}")
        wait_for("the pool to connect", lambda: metrics(s.port)["ringhttp_db_connections_up"] == 2, 30)
        check_reads_and_writes(build, s, url, failures)
        check_pipelined(s, failures)
        check_framing(s, failures)
        check_disconnect_mid_query(s, url, failures)
        check_timeout(s, url, failures)
        check_oversized_rows(s, url, failures)
        check_restart(build, s, d, db_port, failures)
        if metrics(s.port)["ringhttp_stale_completions_total"] != 0:
            failures.append("stale completions")
        check_queue_full(build, url, failures)
        check_tls(build, url, d, failures)
    except (AssertionError, OSError, ValueError, KeyError, subprocess.SubprocessError) as e:
        failures.append(f"{type(e).__name__}: {e}")
    finally:
        if s is not None:
            s.stop(failures)
        cluster("stop", d)
        shutil.rmtree(d, ignore_errors=True)
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
