"""What the tests of db/ share: a free loopback port, db/cluster.sh, the verdict."""
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLUSTER = os.path.join(ROOT, "db", "cluster.sh")
WAIT_S = 60  # generous bounds for a busy two-core machine


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster(*args):
    """db/cluster.sh with these arguments: the CompletedProcess."""
    return subprocess.run([CLUSTER, *args], capture_output=True, text=True, timeout=WAIT_S)


def verdict(failures):
    """Prints the failures and ok/FAILED; the exit status."""
    for f in failures:
        print("FAIL: " + f, file=sys.stderr)
    print("ok" if not failures else "FAILED")
    return 1 if failures else 0
