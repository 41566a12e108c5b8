"""The command line: options (argparse's own --help), --list, and the run itself.

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
import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time

from .constants import (
    CLIENT_CPU, COLD_START_SPAWNS, COOL_DOWN_S, DB_CONNECTIONS, DB_POOL, IDLE_CONNECTIONS, RATE_SWEEP_RATES, READY_PATH,
    ROOT, SERVER_CPUS, SERVER_SHARDS, START_WAIT_S,
)
from .workloads import WORKLOADS
from .servers import Custom, Ringhttp
from .rows import (
    AXES, AXIS_CONTROLS, BY_NAME, GROUPS, all_rows, also_client_rows, axis_rows, estimate_s, every_row, gets_memory_row,
    select, usage_error,
)
from .processes import StartError, WrongAnswer
from .interrupts import INTERRUPTED, Interrupted, sigterm_as_ctrl_c, stop_processes
from .report import failed, finish, verdict, write_report
from .runs import measure, open_rate
from .cold_start import cold_start
from .profile import PROFILE_MIN_DURATION_S, perf_missing, profile, profile_chart, profile_tables
from .soak import SOAK_PHASES, SOAK_RSS_TOLERANCE_BYTES, SOAK_RSS_TOLERANCE_FRACTION, soak, soak_table
from .memory import idle_counts, memory_per_connection, memory_summary
from .environment import environment
from .summary import (
    LADDER_HEADER, fmt, generator_comparison, judge_targets, ladder_table, summarize, target_controls, targets_for,
    uring_comparison, with_range,
)
from .render import (
    CONNECTIONS_TITLE,
    DATABASE_COLUMN,
    HEADER,
    chart,
    connection_notes,
    connection_table,
    md_table,
    memory_notes,
    memory_side_by_side,
    memory_table,
    table_rows,
    text_table,
)
from .rate_sweep import SWEEP_HEADER, parse_rates, sweep_chart, sweep_rows, sweep_table
from .context import Context
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
                        "names (nginx), workload names (json), generator (wrk), a group (tls: the HTTPS rows, the "
                        "handshake rows and their controls), or 'all' (default: the default rows)")
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


def list_rows(rows, as_json):
    if as_json:
        print(json.dumps({
            "workloads": [{"name": w.name, "path": w.path, "description": w.description, "pipelined": w.pipelined,
                           "body_bytes": len(w.body)} for w in WORKLOADS.values()],
            "rows": [{"id": r.id, "server": r.server.name, "workload": r.workload.name, "generator": r.generator,
                      "variant": r.variant.name if r.variant else None, "axis": r.axis, "default": r.default}
                     for r in rows],
            "groups": {k: list(v) for k, v in GROUPS.items()},
        }, indent=2))
        return
    print("workloads:")
    for w in WORKLOADS.values():
        print(f"  {w.name:<12} {w.description}")
    print("rows (* = in the default run):")
    for r in rows:
        print(f"  {'*' if r.default else ' '} {r.id}")
    print("--only groups: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in GROUPS.items()))
    print("--compare axes: " + "; ".join(f"{k}: {', '.join(v.name for v in vs)} on {', '.join(ws)}"
                                         + (f", beside {', '.join(AXIS_CONTROLS[k])}" if k in AXIS_CONTROLS else "")
                                         for k, (ws, vs) in AXES.items()))


def syscalls_text(record, side):
    """What follows a side's CPU in the progress line: its system calls per
    request where it counts them, else nothing."""
    n = record.get(f"{side}_syscalls_per_request")
    return "" if n is None else f" {n:.3f} syscalls/req"


def measure_all(ctx, a, runnable, instances, runs):
    """Cold start and the memory row once per server instance, then every
    row's iterations (iterations the outer loop); fills `instances` and
    `runs` as it goes and returns the runs done."""
    total = len(runnable) * a.iterations
    done = 0
    for r in runnable:
        if r.instance in instances:
            continue
        inst = instances[r.instance] = {}
        if not r.server.http:
            continue  # pgbench: no server of its own to start
        try:
            inst["cold_start_ms"] = cold_start(ctx, r.server, r.variant)
        except WrongAnswer as e:
            inst["cold_start_failure"] = str(e)  # its rows still run: their client names what is wrong
        except StartError as e:
            inst["failure"] = str(e)
            continue
        if ctx.idle_counts and gets_memory_row(r):
            inst["memory"] = memory_per_connection(ctx, r.server, r.variant)
        print(f"{r.instance}: cold start "
              + (f"{fmt(inst.get('cold_start_ms'), '.1f')} ms" if "cold_start_failure" not in inst else
                 f"failed: {inst['cold_start_failure']}")
              + memory_summary(inst.get("memory", {})), flush=True)

    for it in range(1, a.iterations + 1):
        for r in runnable:
            done += 1
            inst = instances[r.instance]
            rec = measure(ctx, r, "cold_start_failure" not in inst) if "failure" not in inst else {
                "failure": inst["failure"]}
            rec["iteration"] = it
            runs[r.id].append(rec)
            if "failure" in rec:
                print(f"[{done}/{total}] {r.id} iteration {it}: FAILED: {rec['failure']}", flush=True)
            else:
                print(f"[{done}/{total}] {r.id} iteration {it}: {rec['rps'] / 1000:.1f}k req/s, server "
                      f"{fmt(rec.get('server_cpu_us'), '.2f')} µs/req{syscalls_text(rec, 'server')}, client "
                      f"{fmt(rec.get('client_cpu_us'), '.2f')} µs/req{syscalls_text(rec, 'client')}, "
                      f"{rec['errors']} errors", flush=True)
            time.sleep(ctx.cool_down)
    return done


def main(argv):
    a = parse_args(argv)
    rows = axis_rows(a.axes) + (all_rows(a.custom) if not a.axes else [])
    if a.list:
        list_rows(rows if a.axes else every_row(a.custom), a.json)
        return 0
    if a.soak is not None:
        rows = [r for r in select(all_rows(a.custom), a.soak) if r.generator == "client"]
        if not rows:
            usage_error(f"--soak: '{a.soak}' names no row driven by ringhttp's client, which the soak runs")
        if len({r.instance for r in rows}) != 1:
            usage_error(f"--soak: '{a.soak}' names rows of {len({r.instance for r in rows})} servers, not one: "
                        f"{', '.join(r.id for r in rows)}")
        if a.soak_hostile is not None:
            if rows[0].server.name != "ringhttp":
                usage_error("--soak-hostile: the driver's scripts are made for ringhttp's flags and answers")
            a.soak_hostile = hostile_driver(a)
        a.idle_connections = []
    elif a.rate_sweep is not None:
        rows = [r for r in select(all_rows(a.custom), a.rate_sweep) if r.generator == "client"]
        if len(rows) != 1:
            usage_error(f"--rate-sweep: '{a.rate_sweep}' names {len(rows)} rows driven by ringhttp's client, not "
                        "one" + (f": {', '.join(r.id for r in rows)}" if rows else ""))
        if not rows[0].server.http:
            usage_error(f"--rate-sweep: {rows[0].id} has no HTTP server")
        a.sweep_row = rows[0]
        rows = sweep_rows(rows[0], a.rates)
        a.idle_connections = []
    elif a.profile is not None:
        rows = select(every_row(a.custom), a.profile)
        if len(rows) != 1:
            usage_error(f"--profile: '{a.profile}' names {len(rows)} rows, not one: "
                        f"{', '.join(r.id for r in rows)}")
        why = perf_missing()
        if why:
            usage_error(f"--profile: {why}")
        a.idle_connections = []
    else:
        rows = select(rows, a.only)
        controls = [] if a.axes else list(dict.fromkeys(target_controls({r.id for r in rows})))
        if controls:  # in the table's order, with the rows selected
            rows = [r for r in all_rows(a.custom) if r in rows or r.id in controls]
            print(f"bench: adding {', '.join(controls)}: the control row(s) of the targets (ringhttp/database-read's "
                  "server CPU is held to json's + 3 µs of the same run, the open model's client CPU to the closed "
                  "model's, the client's CPU over TLS to wrk's, ringhttp-tls's server CPU to nginx-tls's)", flush=True)
        rows = also_client_rows(rows, [name for name, _ in a.also_client])
    ctx = Context(a)
    if ctx.idle_error:
        ctx.remove()
        usage_error(f"--idle-connections: {ctx.idle_error}")
    if not os.access(ctx.client, os.X_OK):
        raise SystemExit(f"bench: {ctx.client} is not built (tools/bench.sh builds it)")
    for tool in ("taskset",) + (("wrk",) if any(r.generator == "wrk" for r in rows) else ()):
        if not shutil.which(tool):
            print(f"bench: {tool} is not installed: its rows are skipped", file=sys.stderr)

    skipped = {}
    runnable = []
    for r in rows:
        reason = r.server.missing(ctx)
        if not reason and r.workload.database:
            reason = ctx.database_missing()
        if not reason and r.generator == "wrk" and not shutil.which("wrk"):
            reason = "wrk is not installed (Debian: wrk)"
        if not reason and r.variant and r.variant.glibc_build and not os.access(
                Ringhttp().binary(ctx, ctx.build_glibc), os.X_OK):
            reason = f"{ctx.build_glibc} has no server (tools/bench.sh --compare alloc builds it)"
        if not reason and r.variant and r.variant.preload and not os.path.exists(r.variant.preload):
            reason = f"{r.variant.preload} is not installed"
        if reason:
            skipped[r.id] = reason
        else:
            runnable.append(r)
    if not runnable:
        raise SystemExit("bench: no row can run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))

    os.makedirs(a.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = os.path.join(a.out, f"bench-{stamp}")
    servers = list({r.server.name: r.server for r in runnable}.values())
    env = environment(ctx, servers)
    if a.soak is not None:
        env["method"] = (f"soak: one server process pinned to CPU {SERVER_CPUS} (one shard) for "
                         f"{a.soak_phases} phases, each {len(runnable)} load(s) in turn of {ctx.warmup} s warm-up + "
                         f"{ctx.duration} s of the generator (one thread on CPU {CLIENT_CPU}, {ctx.connections} "
                         "connections, a fresh one per load)"
                         + (f", the hostile-client driver beside them on CPU {CLIENT_CPU} ({a.soak_hostile} --port; "
                            "the server with the flags its scripts are made for)" if a.soak_hostile else "")
                         + "; after each phase, with its connections closed, RSS, descriptors and pool gauges")
    if a.rate_sweep is not None:
        env["method"] += (f"; --rate-sweep: {a.sweep_row.id} in the open model (-R) at each requested rate, "
                          "latency from each request's intended time (corrected) and from its send (uncorrected)")
    if a.profile is not None:
        env["method"] += (f" --profile: each iteration run twice in turn, plain and then with perf recording the "
                          f"server (perf on CPU {CLIENT_CPU}) inside the measured window only")
    env_lines = [f"- {k}: {v}" for k, v in env.items()]
    print("## Environment\n\n" + "\n".join(env_lines) + "\n", flush=True)
    for rid, why in skipped.items():
        print(f"skipping {rid}: {why}")

    if a.soak is not None:
        return soak_main(ctx, a, runnable, env, env_lines, base)
    if a.profile is not None:
        return profile_main(ctx, a, runnable[0], env, env_lines, os.path.join(a.out, f"profile-{stamp}"))
    if a.rate_sweep is not None:
        return rate_sweep_main(ctx, a, runnable, env, env_lines, os.path.join(a.out, f"rate-sweep-{stamp}"))

    minutes = estimate_s(runnable, a.iterations, a.warmup, a.duration, a.cool_down, bool(ctx.idle_counts)) / 60
    print(f"bench: {len(runnable)} rows x {a.iterations} iteration(s), about {minutes:.0f} minutes", flush=True)
    # Cold start and memory: once per server instance, before the load runs.
    # SIGTERM or Ctrl-C anywhere in here stops the run where it is; what was
    # measured until then is still summarized and written.
    instances = {}
    runs = {r.id: [] for r in runnable}
    total = len(runnable) * a.iterations
    done = 0
    with Interrupted() as stop:
        done = measure_all(ctx, a, runnable, instances, runs)
    interrupted = stop.reason
    if interrupted:
        stop_processes()
        done = sum(len(v) for v in runs.values())
        print(f"bench: interrupted ({interrupted}) after {done} of {total} runs: writing what was measured",
              file=sys.stderr, flush=True)
        runnable = [r for r in runnable if runs[r.id]]  # the rows that ran at least once

    summaries = {r.id: summarize(r, runs[r.id]) for r in runnable}
    for r in runnable:
        if "cold_start_failure" in instances[r.instance]:
            summaries[r.id]["failures"].append("cold start: " + instances[r.instance]["cold_start_failure"])
    database = any(r.workload.database for r in runnable)
    header = HEADER + ([DATABASE_COLUMN] if database else [])
    body = table_rows(runnable, summaries, instances, database)
    mem_header, mem_body = memory_table(instances)
    side_header, side_body = memory_side_by_side(instances, ctx.idle_counts)
    mem_notes = memory_notes(ctx, instances) if mem_body else []
    chart_error = chart(base + ".png", runnable, summaries)
    failed = [r.id for r in runnable if summaries[r.id]["failures"]]
    failed += [f"{name} (memory row)" for name, inst in instances.items() if "failure" in inst.get("memory", {})]

    notes = [
        "Medians over iterations, [min–max] where they differ. Server CPU µs/req: the server process's utime+stime "
        "over the measured window ÷ responses (the column to compare). ÷ base: that figure divided by the row named "
        "in the JSON's ratio_base (the io_uring floor's row of the same kind, ringhttp/json for the ladder's rungs, "
        "or the axis's default variant).",
        "Client CPU µs/req: the generator's own CPU (ringhttp's client, or wrk in /wrk rows). wrk checks statuses "
        "only, and prints no p99.9; ringhttp's client checks every status and body.",
        "Syscalls/req: each side's own count of its system calls over the measured window ÷ responses: "
        "ringhttp's server from its /metrics (ringhttp_syscalls_total summed over calls, read as the window starts "
        "and as it ends, ÷ the responses it counted between the two readings), ringhttp's client from its report. "
        "— where a process does not count them (the floors, the peers, wrk).",
        f"Cold start: exec to the first right answer to GET {READY_PATH} (status 200 and its body, on a new "
        f"connection polled every 1 ms), median of {COLD_START_SPAWNS} spawns. RSS: the server's VmRSS right after "
        "the measured run.",
    ]
    if database:
        notes.append(f"Database CPU µs/req: the utime+stime of every Postgres process (the postmaster and its "
                     f"backends) over the measured window ÷ responses. The server runs on CPU {SERVER_CPUS} and the "
                     f"generator on CPU {CLIENT_CPU}; Postgres runs wherever the kernel puts it: all three share "
                     "two cores. The cluster is the run's own (db/cluster.sh, fsync and synchronous_commit at their "
                     "defaults), started once; its written rows are emptied when it starts, not between rows. "
                     f"ringhttp's database rows run with --db-pool {DB_POOL} ({SERVER_SHARDS} shard: "
                     f"{DB_CONNECTIONS} database connections; under --compare db-pool, the variant's pool), every "
                     f"connection up before the load starts; pgbench runs over {DB_CONNECTIONS}.")
    for r in runnable:
        ceiling = summaries.get(f"pgbench/{r.workload.name}")
        if r.workload.database and r.server.http and ceiling and ceiling["rps"] and summaries[r.id]["rps"]:
            notes.append(f"{r.id}: {summaries[r.id]['rps'][0] / ceiling['rps'][0]:.2f}× pgbench's rate "
                         f"({ceiling['rps'][0]:,.0f}/s over {DB_CONNECTIONS} database connections, the same query "
                         "prepared, no HTTP).")
    notes += generator_comparison(runnable, summaries)
    notes += uring_comparison(runnable, summaries)
    conn_header, conn_body = connection_table(runnable, summaries)
    conn_notes = connection_notes(runnable, summaries) if conn_body else []
    ladder_body, ladder_verdicts = ladder_table(summaries)
    targets = judge_targets(summaries, targets_for(a.axes))
    text = "## Results\n\n" + text_table(header, body)
    targets_title = ("## Targets (issue 16: ringhttp's database rows, issue 17: the open model, issue 26: the client "
                     "over TLS; ringhttp-tls's server CPU against nginx-tls's; against this run's own "
                     "rows, reported, not failed)") if not a.axes else (
        "## Targets (issue 29, --compare uring: ringhttp with every feature against the floor's best profile, the "
        "open model's client with and without min-wait; against this run's own rows, reported, not failed)")
    if targets:
        text += "\n\n" + targets_title + "\n\n" + "\n".join(t["line"] for t in targets)
    ladder_note = ("The seeds' figures are another machine (Apple M1 Pro), another runtime (Node 24) and their "
                   "framework: compare the differences between rungs, not the absolute numbers.")
    if ladder_body:
        text += ("\n\n## The seeds' ladder (ringhttp, differences from json in this run)\n\n"
                 + text_table(LADDER_HEADER, ladder_body) + "\n" + "\n".join(ladder_verdicts) + "\n" + ladder_note)
    if conn_body:
        text += "\n\n" + CONNECTIONS_TITLE + "\n\n" + text_table(conn_header, conn_body) + "\n\n" + "\n".join(conn_notes)
    if mem_body:
        text += ("\n\n## Memory per idle keep-alive connection\n\n" + text_table(side_header, side_body) + "\n\n"
                 + text_table(mem_header, mem_body) + "\n\n" + "\n".join(mem_notes))
    print("\n" + text + "\n\n" + "\n".join(notes))
    md = ("## Results\n\n" + md_table(header, body) + "\n\n" + "\n\n".join(notes) + "\n")
    if targets:
        md += "\n" + targets_title + "\n\n" + "\n".join(f"- {t['line']}" for t in targets) + "\n"
    if ladder_body:
        md += ("\n## The seeds' ladder (ringhttp, differences from json in this run)\n\n"
               + md_table(LADDER_HEADER, ladder_body) + "\n\n" + "\n".join(f"- {v}" for v in ladder_verdicts)
               + "\n\n" + ladder_note + "\n")
    if conn_body:
        md += ("\n" + CONNECTIONS_TITLE + "\n\n" + md_table(conn_header, conn_body) + "\n\n" + "\n\n".join(conn_notes)
               + "\n")
    if mem_body:
        md += ("\n## Memory per idle keep-alive connection\n\n" + md_table(side_header, side_body) + "\n\n"
               + md_table(mem_header, mem_body) + "\n\n" + "\n\n".join(mem_notes) + "\n")
    if interrupted:
        md += f"\nInterrupted ({interrupted}) after {done} of {total} runs: the rows above are what was measured.\n"
    if skipped:
        md += "\nSkipped: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()) + "\n"
    write_report(a, base, "benchmark " + stamp, env, env_lines, md, {
        "summaries": list(summaries.values()), "runs": runs, "instances": instances,
        "skipped": skipped, "workloads": {w.name: w.description for w in WORKLOADS.values()},
        "memory_row": {"counts": ctx.idle_counts, "descriptor_limits": ctx.fd_limits,
                       "holder_sources": ctx.holder_sources,
                       "holder_connections_max": ctx.holder_connections_max, "notes": mem_notes},
        "ladder": {"rows": ladder_body, "verdicts": ladder_verdicts}, "targets": targets,
        "connections": {"header": conn_header, "rows": conn_body, "notes": conn_notes},
        "interrupted": interrupted, "runs_done": done, "runs_planned": total},
        also=[("chart", base + ".png", chart_error)])
    code = finish(ctx, interrupted, failed)
    if code == 1:
        print("bench: FAILED rows: " + ", ".join(failed), file=sys.stderr)
        for rid in failed:
            for why in summaries.get(rid, {}).get("failures", []):
                print(f"  {rid}: {why}", file=sys.stderr)
    return code


def hostile_driver(a):
    """The hostile-client driver --soak-hostile names, or the one a build with tests has."""
    if a.soak_hostile:
        candidates = [a.soak_hostile]
    else:
        candidates = [os.path.join(d, "tests", "socket", "hostile_driver") for d in (a.build, os.path.join(ROOT, "build"))]
    for path in candidates:
        if os.access(path, os.X_OK):
            return os.path.realpath(path)
    usage_error(f"--soak-hostile: no driver at {' or '.join(candidates)} (a build with tests has it: "
                "meson setup build && ninja -C build tests/socket/hostile_driver)")


def soak_main(ctx, a, rows, env, env_lines, base):
    """--soak: the series printed and written; 1 if anything grew or failed."""
    print(f"soak: {', '.join(r.id for r in rows)}, {a.soak_phases} phases of {len(rows)} load(s) of {a.warmup} s "
          f"warm-up + {a.duration} s against one server process"
          + (", the hostile driver beside them" if a.soak_hostile else ""), flush=True)
    record = soak(ctx, rows, a.soak_phases, a.soak_hostile)
    header, body = soak_table(record)
    verdict = (failed(record["failures"]) if record["failures"] else
               f"ok: nothing grew from phase 2 on (RSS within {SOAK_RSS_TOLERANCE_BYTES // 1024} KiB or "
               f"{SOAK_RSS_TOLERANCE_FRACTION:.0%}, descriptors and pool gauges exactly)")
    if record.get("interrupted"):
        verdict = (f"interrupted ({record['interrupted']}) after {len(record['phases'])} of {a.soak_phases} phases: "
                   "no verdict" + ("; failures so far:\n" + "\n".join(f"  {f}" for f in record["failures"])
                                   if record["failures"] else ""))
    print("\n## Soak\n\n" + text_table(header, body) + "\n\n" + verdict)
    write_report(a, base, f"soak {os.path.basename(base)}", env, env_lines,
                 "## Soak\n\n" + md_table(header, body) + "\n\n" + verdict + "\n", {"soak": record})
    return finish(ctx, record.get("interrupted"), record["failures"])


def profile_main(ctx, a, row, env, env_lines, base):
    """--profile: the row's figures plain and recorded, the profile's tables,
    folded stacks and chart; 1 if a run failed."""
    print(f"profile: {row.id}, {a.iterations} iteration(s) of {a.warmup} s warm-up + {a.duration} s, each plain "
          "and then recorded", flush=True)
    recordings = tempfile.mkdtemp(prefix="ringhttp-bench-perf.", dir=a.out)
    try:
        record, prof = profile(ctx, row, a.iterations, recordings)
    finally:
        shutil.rmtree(recordings, ignore_errors=True)
    summary = record["profile"]
    header = ["run", "iterations", "req/s", "server CPU µs/req", "p99 ms", "errors"]
    body = [[label, str(s["iterations"]), with_range(s["rps"], ",.0f"), with_range(s["server_cpu_us"], ".2f"),
             with_range(s["p99_ms"], ".2f"), str(s["errors"])]
            for label, s in (("plain", record["summaries"]["plain"]), ("recorded", record["summaries"]["recorded"]))]
    overhead = record["overhead"]
    notes = [f"Profiler overhead (recorded ÷ plain, medians, the same run): server CPU µs/req "
             f"{fmt(overhead['server_cpu_us'], '.3f')}x, req/s {fmt(overhead['rps'], '.3f')}x."]
    if summary["samples"]:
        notes.append(f"{summary['samples']:,} samples of the server ({summary['event']} at {summary['frequency_hz']} "
                     f"Hz, call chains by {summary['call_graph']}) over {summary['seconds_recorded']:.1f} s recorded "
                     f"inside the measured windows: user space {summary['user_share']:.1%}, kernel "
                     f"{summary['kernel_share']:.1%} (the function running when sampled); the kernel's own "
                     f"accounting of the same windows (utime, stime: {summary['accounted_ticks']['user']} and "
                     f"{summary['accounted_ticks']['system']} ticks) gives user space "
                     f"{fmt(summary['accounted_user_share'], '.1%')}.")
    tables = profile_tables(summary)
    folded = base + ".folded"
    prof.write_folded(folded)
    chart_error = profile_chart(base + ".png", summary, f"{row.id}: where the server's CPU goes")
    said = verdict(record["failures"], record.get("interrupted"))
    text = (f"## Profile of {row.id}\n\n" + text_table(header, body) + "\n\n" + "\n".join(notes) + "\n\n"
            + "\n\n".join(f"{t}\n" + text_table(h, r) for t, h, r in tables))
    print("\n" + text + ("\n\n" + said if said else ""))
    md = (f"## Profile of {row.id}\n\n" + md_table(header, body) + "\n\n" + "\n\n".join(notes)
          + "\n\n" + "\n\n".join(f"### {t}\n\n" + md_table(h, r) for t, h, r in tables) + "\n"
          + (f"\n{said}\n" if said else ""))
    write_report(a, base, f"profile {os.path.basename(base)}", env, env_lines, md, {"profile": record},
                 also=[("folded stacks", folded, None), ("chart", base + ".png", chart_error)])
    return finish(ctx, record.get("interrupted"), record["failures"])


def rate_sweep_main(ctx, a, rows, env, env_lines, base):
    """--rate-sweep: every point's iterations, the table and the chart; 1 if
    a run failed, 130 if interrupted."""
    print(f"rate sweep: {a.sweep_row.id} at {', '.join(f'{r:,}' for r in a.rates)} requests/s, {a.iterations} "
          f"iteration(s) of {a.warmup} s warm-up + {a.duration} s each", flush=True)
    runs = {r.id: [] for r in rows}
    with Interrupted() as stop:
        for it in range(1, a.iterations + 1):
            for r in rows:
                rec = measure(ctx, r)
                rec["iteration"] = it
                runs[r.id].append(rec)
                if "failure" in rec:
                    print(f"{r.id} iteration {it}: FAILED: {rec['failure']}", flush=True)
                else:
                    print(f"{r.id} iteration {it}: {rec['rps']:,.0f} req/s of {rec['requested_rps']:,} asked, "
                          f"p99 {rec['p99_ms']:.2f} ms (uncorrected {fmt(rec['p99_uncorrected_ms'], '.2f')})",
                          flush=True)
                time.sleep(ctx.cool_down)
    interrupted = stop.reason
    if interrupted:
        stop_processes()
        rows = [r for r in rows if runs[r.id]]
    summaries = {r.id: summarize(r, runs[r.id]) for r in rows}
    failures = [f"{r.id}: {f}" for r in rows for f in summaries[r.id]["failures"]]
    body = sweep_table(rows, summaries, ctx.pipeline)
    title = (f"{a.sweep_row.id} in the open model ({ctx.connections} connections"
             + (f", {ctx.pipeline} requests per batch" if a.sweep_row.workload.pipelined else "") + ")")
    chart_error = sweep_chart(base + ".png", rows, summaries, ctx.pipeline, title) if rows else "nothing ran"
    note = ("Medians of the iterations [min–max]. p99 is from each request's intended time (coordinated omission "
            "corrected); the uncorrected p99, from the moment it was sent, is what a closed-loop tool would "
            "report.")
    said = verdict(failures, interrupted)
    print(f"\n## Rate sweep: {title}\n\n" + text_table(SWEEP_HEADER, body) + "\n\n" + note
          + ("\n\n" + said if said else ""))
    md = (f"## Rate sweep: {title}\n\n" + md_table(SWEEP_HEADER, body) + "\n\n" + note + "\n"
          + (f"\n{said}\n" if said else ""))
    write_report(a, base, f"rate sweep {os.path.basename(base)}", env, env_lines, md,
                 {"row": a.sweep_row.id, "interrupted": interrupted, "failures": failures,
                  "points": [{"requested_rps": open_rate(r.workload, ctx.pipeline), "summary": summaries[r.id],
                              "runs": runs[r.id]} for r in rows]},
                 also=[("chart", base + ".png", chart_error)])
    return finish(ctx, interrupted, failures)


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
