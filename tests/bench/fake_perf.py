#!/usr/bin/env python3
"""A perf that will not stop: found first on PATH by the harness, it passes
the harness's probe (perf record of `true`), and as the recorder of a
server (perf record ... -p PID) it ignores SIGTERM and SIGINT and leaves a
grandchild, ignoring them too, that holds its stderr pipe open. Only
SIGKILL ends either, and the grandchild only if it reaches it.

Usage: fake_perf.py record ... (-- COMMAND | -p PID ...)
"""
import signal
import subprocess
import sys
import time

LIFE_S = 60  # far longer than the harness may take to stop it: one left over is seen

if "--" in sys.argv:  # the probe: recording a command of its own
    sys.exit(subprocess.call(sys.argv[sys.argv.index("--") + 1:]))
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)  # inherited by the grandchild across its exec
subprocess.Popen(["sleep", str(LIFE_S)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)  # stderr: ours
time.sleep(LIFE_S)
