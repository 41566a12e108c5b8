#!/usr/bin/env python3
"""The database rows' node:http + pg peer (bench/peers/node_pg.js) against
a throwaway cluster of our own (db/cluster.sh), driven by ringhttp's
client with requests that vary, as the benchmark will drive it.

- 2,000 reads of {rand:1..10000}: every response is its own row (the
  client checks each body against its own request's id), none failed;
- a row that is not there is 404, a bad id 400;
- a write is 201 with the new row (id 10,001) and reads back; a body
  without the JSON media type is 415, malformed 400, a bad name 422
  naming the field, past 4096 bytes 413;
- 200 writes by the client, each 201: the table holds 10,201 rows after;
- both stopped, nothing left running.

Usage: node_pg_test.py --build DIR    (meson test runs it)
"""
import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from db_support import ROOT, WAIT_S, cluster, free_port, verdict  # noqa: E402

PEER = os.path.join(ROOT, "bench", "peers", "node_pg.js")


def request(port, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def wait_listening(port, proc):
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def client(build, *args):
    r = subprocess.run([os.path.join(build, "client", "client"), "--json", *args], capture_output=True, text=True,
                       timeout=WAIT_S * 2)
    return r.returncode, (json.loads(r.stdout) if r.stdout.strip() else {}), r.stderr


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", required=True)
    build = os.path.realpath(p.parse_args().build)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from harness.servers import node_pg_missing  # the benchmark's own check
    if (why := node_pg_missing()) is not None:
        print(f"FAIL    prerequisite missing: {why}")
        print(f"prerequisite missing: {why}", file=sys.stderr)
        return 1
    failures = []
    d = tempfile.mkdtemp(prefix="ringhttp-db.")
    db_port, port = free_port(), free_port()
    peer = None
    try:
        r = cluster("start", d, str(db_port))
        if r.returncode != 0:
            raise AssertionError(f"the cluster did not start: {r.stderr[-1000:]}")
        url = r.stdout.strip()
        peer = subprocess.Popen(["node", PEER, str(port), url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        if not wait_listening(port, peer):
            raise AssertionError(f"node_pg.js did not listen: {peer.stdout.read() if peer.poll() is not None else ''}")
        base = f"http://127.0.0.1:{port}"
        code, report, err = client(build, "-n", "2000", "-c", "8", "--expect-body",
                                   '{"id":{rand:1..10000},"name":"user-{rand:1..10000}"}',
                                   base + "/db/users/{rand:1..10000}")
        if code != 0 or report.get("requests") != 2000 or report.get("errors_total") != 0:
            failures.append(f"reads: exit {code}, {report.get('requests')} requests, errors {report.get('errors')}: "
                            f"{err[-500:]}")
        for path, status in (("/db/users/10001", 404), ("/db/users/0", 400), ("/db/users/abc", 400),
                             ("/db/users/007", 400)):
            got = request(port, "GET", path)[0]
            if got != status:
                failures.append(f"GET {path}: {got}, not {status}")
        status, body = request(port, "POST", "/db/users", '{"name":"written"}', {"Content-Type": "application/json"})
        if (status, body) != (201, '{"id":10001,"name":"written"}'):
            failures.append(f"POST: {status} {body!r}, not 201 with id 10001")
        if request(port, "GET", "/db/users/10001") != (200, '{"id":10001,"name":"written"}'):
            failures.append("the written row does not read back")
        for body, headers, status, words in (
                ('{"name":"x"}', {"Content-Type": "text/plain"}, 415, "Content-Type"),
                ('{"name":', {"Content-Type": "application/json"}, 400, "malformed"),
                ('{"name":""}', {"Content-Type": "application/json"}, 422, '"field":"name"'),
                ('{"nom":"x"}', {"Content-Type": "application/json"}, 422, '"field":"name"'),
                ('{"name":"' + "x" * 101 + '"}', {"Content-Type": "application/json"}, 422, '"field":"name"'),
                ('{"name":"' + "x" * 5000 + '"}', {"Content-Type": "application/json"}, 413, "too large")):
            got = request(port, "POST", "/db/users", body, headers)
            if got[0] != status or words not in got[1]:
                failures.append(f"POST {body[:30]!r}: {got[0]} {got[1][:80]!r}, not {status} with {words!r}")
        code, report, err = client(build, "-n", "200", "-c", "4", "-m", "POST", "-H", "Content-Type: application/json",
                                   "-b", '{"name":"load-{seq:1..200}"}', "--expect-status", "201",
                                   base + "/db/users")
        if code != 0 or report.get("requests") != 200:
            failures.append(f"writes: exit {code}, {report.get('requests')} requests, errors {report.get('errors')}")
        count = subprocess.run(["psql", "-X", "-tA", url, "-c", "SELECT count(*) FROM users"], capture_output=True,
                               text=True, timeout=WAIT_S).stdout.strip()
        if count != "10201":
            failures.append(f"the table holds {count} rows after one write and 200 more, not 10201")
    except AssertionError as e:
        failures.append(str(e))
    finally:
        if peer and peer.poll() is None:
            peer.terminate()
            try:
                peer.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                peer.kill()
                failures.append("node_pg.js did not exit on SIGTERM")
        cluster("stop", d)
        shutil.rmtree(d, ignore_errors=True)
    return verdict(failures)


if __name__ == "__main__":
    sys.exit(main())
