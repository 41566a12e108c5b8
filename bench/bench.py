#!/usr/bin/env python3
"""ringhttp's main benchmark: real servers on real sockets, the seeds' method.

The harness is the package bench/harness/ (one concern per module; its
__init__ lists them); this is its entry point. --help for the options.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# What tests/bench reaches for by name.
from harness.cli import main, parse_args, run  # noqa: E402,F401
from harness.constants import SERVER_FD_MARGIN  # noqa: E402,F401
from harness.context import Context  # noqa: E402,F401
from harness.processes import Running, StartError  # noqa: E402,F401
from harness.rows import all_rows  # noqa: E402,F401
from harness.workloads import WORKLOADS  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
