"""The command line: the options (argparse's own --help), the mode they pick
(modes/), and every process stopped on the way out.

Method (docs/BENCHMARKS.md): each run starts the server fresh, pinned to CPU 0
with one shard; the load generator (ringhttp's client, one thread) is pinned to
CPU 1; it warms up (not reported), then measures; the server's utime+stime from
/proc/PID/stat over the measured window divided by the responses is the server
CPU per request, the column to compare. Every response is checked (status and
body). Iterations are the outer loop; medians and [min-max] are reported. Any
failed request fails its row and the exit status is 1, naming the row. Cold
start is exec to the first right answer to GET /plaintext, for every server.
SIGTERM or Ctrl-C stops every process the harness started, writes what was
measured so far, and exits 130.
"""
import argparse
import os
import re
import sys

from .constants import COOL_DOWN_S, IDLE_CONNECTIONS, RATE_SWEEP_RATES, ROOT, START_WAIT_S
from .context import Context
from .interrupts import INTERRUPTED, Interrupted, sigterm_as_ctrl_c, stop_processes
from .memory import idle_counts
from .modes import listing, profile, rate_sweep, rows, soak
from .prepare import prepare
from .profile import PROFILE_MIN_DURATION_S
from .rate_sweep import parse_rates
from .rows import AXES, AXIS_CONTROLS, BY_NAME
from .servers import Custom
from .soak import SOAK_PHASES
from .units import non_negative, positive, seconds


def rate_list(text):
    """--rates, for argparse."""
    try:
        return parse_rates(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_args(argv):
    """The options, with argparse's own --help (the module's docstring after it)."""
    p = argparse.ArgumentParser(
        prog="bench/bench.py", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="ringhttp's main benchmark: real servers on real sockets, the seeds' method "
                    "(tools/bench.sh installs, builds, then runs this).",
        epilog=__doc__.split("\n\n", 1)[1].strip())
    p.add_argument("--build", default=os.path.join(ROOT, "build-release"), metavar="DIR",
                   help="meson build directory with server, client and floors (default: %(default)s)")
    p.add_argument("--build-glibc", metavar="DIR",
                   help="a -Dallocator=system build, for --compare alloc (default: <build>-glibc)")
    p.add_argument("--only", default="", metavar="LIST",
                   help="rows to run, comma-separated: row ids (ringhttp/json, ringhttp/plaintext/wrk), server "
                        "names (nginx), workload names (json), generator (wrk, h2load), a group (tls: the HTTPS rows, "
                        "the handshake rows and their controls; h2: nginx and h2o over HTTP/2, by the client and by "
                        "h2load), or 'all' (default: the default rows)")
    p.add_argument("--duration", type=positive, metavar="S", help="measured seconds per run (default: 10)")
    p.add_argument("--warmup", type=non_negative, metavar="S",
                   help="warm-up seconds per run, not reported (default: 3)")
    p.add_argument("--connections", type=positive, default=128, metavar="N", help="connections (default: %(default)s)")
    p.add_argument("--iterations", type=positive, metavar="N",
                   help="runs per row, each with a freshly started server (default: 3)")
    p.add_argument("--pipeline", type=positive, default=16, metavar="N",
                   help="requests per send in the pipelined workload (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="one short iteration (1 s warm-up, 2 s measured): a smoke test")
    p.add_argument("--compare", default="", metavar="AXIS",
                   help="ringhttp variations instead of the default rows, each with its ratio to the default "
                        f"variant: {', '.join(AXES)} (comma-separated for several); "
                        + "; ".join(f"{k} also runs the rows of {', '.join(v)} on its workloads"
                                    for k, v in AXIS_CONTROLS.items()))
    p.add_argument("--idle-connections", type=idle_counts, default=idle_counts(IDLE_CONNECTIONS), metavar="LIST",
                   help="the memory row's counts of idle connections, comma-separated, 'max' the most a server's "
                        f"descriptor limit allows (default: {IDLE_CONNECTIONS}; 0 skips the row)")
    p.add_argument("--start-wait", type=seconds, default=START_WAIT_S, metavar="S",
                   help="seconds a started server has to answer its first request (default: %(default)s)")
    p.add_argument("--cool-down", type=seconds, default=COOL_DOWN_S, metavar="S",
                   help="seconds between runs (default: %(default)s)")
    p.add_argument("--server", action="append", default=[], metavar="NAME=CMD",
                   help="also benchmark your own server: CMD is run with {port} replaced (repeatable)")
    p.add_argument("--also-client", action="append", default=[], metavar="NAME=PATH",
                   help="also drive every selected row that ringhttp's client drives with this client binary "
                        "(another build's, e.g. before a change), as a row of its own, ROW/NAME, in the same "
                        "run; its figures beside the build's client's (repeatable)")
    p.add_argument("--soak", nargs="?", const="ringhttp/ping", metavar="ROWS",
                   help="instead of the rows: --soak-phases phases of load back to back against one server "
                        "process, each phase every row's load in turn (ROWS as --only takes them, one server's "
                        "rows driven by its client; default ringhttp/ping), its RSS, descriptors and pool gauges "
                        "after each; exit 1 if any grows from the second phase on (each load: --warmup and "
                        "--duration)")
    p.add_argument("--soak-hostile", nargs="?", const="", metavar="DRIVER",
                   help="with --soak (ringhttp): the hostile-client driver beside each phase's load, against the "
                        "same server (DRIVER: its binary, default tests/socket/hostile_driver in --build or in "
                        "build/); any connection it finds served wrongly fails the soak")
    p.add_argument("--soak-phases", type=positive, default=SOAK_PHASES, metavar="N",
                   help="phases of the soak, at least 3 (default: %(default)s)")
    p.add_argument("--profile", metavar="ROW",
                   help="instead of the rows: ROW's iterations each run plain and then with perf recording the "
                        "server during the measured window; writes the top functions (user space and kernel "
                        "apart), folded stacks and a chart, and the profiler's overhead")
    p.add_argument("--rate-sweep", nargs="?", const="ringhttp/pipelined", metavar="ROW",
                   help="instead of the rows: ROW (default %(const)s) in the open model at each of --rates, "
                        "the achieved rate and the corrected p99 against the requested rate, as a table and a "
                        "chart (results/rate-sweep-*)")
    p.add_argument("--rates", type=rate_list, default=rate_list(RATE_SWEEP_RATES), metavar="LIST",
                   help=f"with --rate-sweep: requested rates, rising, k and M allowed (default: {RATE_SWEEP_RATES})")
    p.add_argument("--list", action="store_true",
                   help="print the workloads and rows (--json for machine-readable) and exit")
    p.add_argument("--json", action="store_true", help="with --list: JSON")
    p.add_argument("--out", default=os.path.join(ROOT, "results"), metavar="DIR",
                   help="where results go (default: %(default)s)")
    a = p.parse_args(argv)
    quick = (2, 1, 1) if a.quick else (10, 3, 3)
    a.duration = a.duration or quick[0]
    a.warmup = quick[1] if a.warmup is None else a.warmup
    a.iterations = a.iterations or quick[2]
    a.axes = [x for x in a.compare.split(",") if x]
    for x in a.axes:
        if x not in AXES:
            p.error(f"--compare: unknown axis '{x}' (axes: {', '.join(AXES)})")
    a.custom = []
    for spec in a.server:
        name, sep, cmd = spec.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name) or "{port}" not in cmd:
            p.error(f"--server '{spec}': expected NAME=COMMAND with {{port}} in COMMAND, NAME in [a-z0-9_.-]")
        if name in BY_NAME:
            p.error(f"--server: '{name}' is already a server here")
        a.custom.append(Custom(name, cmd))
    clients = []
    for spec in a.also_client:
        name, sep, path = spec.partition("=")
        if not sep or not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name) or name == "wrk":
            p.error(f"--also-client '{spec}': expected NAME=PATH, NAME in [a-z0-9_.-] and not 'wrk'")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            p.error(f"--also-client '{spec}': {path} is not an executable file")
        if name in (c[0] for c in clients):
            p.error(f"--also-client: '{name}' is named twice")
        clients.append((name, path))
    a.also_client = clients
    if clients and (a.soak is not None or a.profile is not None or a.rate_sweep is not None):
        p.error("--also-client: only with the rows (not --soak, --profile or --rate-sweep)")
    if a.soak_hostile is not None and a.soak is None:
        p.error("--soak-hostile: only with --soak")
    if a.soak is not None and a.soak_phases < 3:
        p.error("--soak-phases: at least 3 (growth is judged from the second phase on)")
    if sum(bool(x) for x in (a.soak is not None, a.profile is not None, a.axes, a.rate_sweep is not None)) > 1:
        p.error("--soak, --profile, --compare and --rate-sweep: one at a time")
    if a.profile is not None and a.duration < PROFILE_MIN_DURATION_S:
        p.error(f"--profile: --duration of at least {PROFILE_MIN_DURATION_S} s (the recording is the measured "
                "window less its edges)")
    if a.start_wait <= 0:
        p.error("--start-wait: more than 0 seconds")
    return a


def mode_of(a):
    """The measuring mode the options ask for (parse_args allows one)."""
    if a.soak is not None:
        return soak
    if a.rate_sweep is not None:
        return rate_sweep
    if a.profile is not None:
        return profile
    return rows


def main(argv):
    a = parse_args(argv)
    if a.list:
        return listing.run(a)
    mode = mode_of(a)
    chosen = mode.choose(a)
    return mode.run(prepare(a, chosen, mode.method), a)


def run(argv):
    """main(), and every process the harness started stopped, whatever happens."""
    sigterm_as_ctrl_c()
    code = INTERRUPTED
    try:
        with Interrupted() as stop:
            code = main(argv)
        if stop.reason:
            print("bench: interrupted", file=sys.stderr)
    finally:
        stop_processes()  # the servers, then the databases they used
        for ctx in list(Context.live):  # the run's private directory: bodies, secret, the TLS rows' CA
            ctx.remove()
    return code
