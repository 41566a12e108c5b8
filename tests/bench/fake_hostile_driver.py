#!/usr/bin/env python3
"""A hostile-client driver that reports a finding in its first round, for
showing that the soak fails on what the driver beside it finds.

Usage: fake_hostile_driver.py --print-server-args | --port P --seconds S [--quiet]
"""
import sys

if "--print-server-args" in sys.argv:
    print("--shards 1 --header-timeout-ms 2000")
    sys.exit(0)
port = sys.argv[sys.argv.index("--port") + 1] if "--port" in sys.argv else "?"
print("hostile_driver: seed 7: 1 connections, 1 requests answered")
print("FAILURE: connection 3: the answer to request 2 arrived before the answer to request 1 (a fake finding)")
print(f"hostile_driver: seed 7 FAILED (1 failures) against port {port}", flush=True)
sys.exit(1)
