"""What the benchmark's row tests build from the harness itself: a
summary as summarize() makes it, and a Context as the command line
makes one. Imported after the test has put bench/ on sys.path."""
from harness.cli import parse_args
from harness.context import Context


def summary(row, **figures):
    """A summary as summarize() makes it: each figure a (median, min, max)."""
    s = {"row": row, "rps": None, "client_cpu_us": None, "server_cpu_us": None}
    s.update({k: (v, v, v) if v is not None else None for k, v in figures.items()})
    return s


def make_context(build, connections, *args):
    """The harness's Context for a short run of `connections` and no idle ones."""
    return Context(parse_args(["--build", build, "--idle-connections", "0", "--connections", str(connections),
                               *args]))
