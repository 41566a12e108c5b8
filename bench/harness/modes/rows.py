"""The rows run (the default rows, --only's, --compare's axes): cold start
and the memory row once per server instance, then every row's iterations;
the results table and its sections (targets, the seeds' ladder, connections,
memory); 1 if a row failed, naming it.

--compare is this run over other rows (each axis's variants and their
control rows) with other targets, so it is no module of its own."""
import os
import sys

from ..cold_start import cold_start
from ..constants import (CLIENT_CPU, COLD_START_SPAWNS, DB_CONNECTIONS, DB_POOL, H2_TLS13_CIPHER, READY_PATH,
                         SERVER_CPUS, SERVER_SHARDS)
from ..interrupts import Interrupted, stop_processes
from ..memory import memory_per_connection, memory_summary
from ..processes import StartError, WrongAnswer
from ..render import (
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
from ..report import finish, write_report
from ..rows import all_rows, also_client_rows, axis_rows, estimate_s, gets_memory_row, select
from ..runs import measure
from ..summary import (
    LADDER_HEADER, fmt, generator_comparison, judge_targets, ladder_table, summarize, target_controls, targets_for,
    uring_comparison,
)
from ..workloads import WORKLOADS
from .iterations import iterate

PREFIX = "bench"  # its files: results/bench-STAMP.{md,json,png}


def choose(a):
    """--only's rows of the default ones (of --compare's axes with it), the
    targets' control rows added, and each --also-client's rows."""
    rows = select(axis_rows(a.axes) + (all_rows(a.custom) if not a.axes else []), a.only)
    controls = [] if a.axes else list(dict.fromkeys(target_controls({r.id for r in rows})))
    if controls:  # in the table's order, with the rows selected
        rows = [r for r in all_rows(a.custom) if r in rows or r.id in controls]
        print(f"bench: adding {', '.join(controls)}: the control row(s) of the targets (ringhttp/database-read's "
              "server CPU is held to json's + 3 µs of the same run, the open model's client CPU to the closed "
              "model's, the client's CPU over TLS to wrk's and over HTTP/2 to h2load's, ringhttp-tls's server CPU "
              "to nginx-tls's)", flush=True)
    return also_client_rows(rows, [name for name, _ in a.also_client])


def method(_a, _ctx, _rows, text):
    return text


def run(p, a):
    """Every row measured, then the report; 1 if a row failed, 130 if
    interrupted."""
    ctx, runnable = p.ctx, p.runnable
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
    if stop.reason:
        stop_processes()
        done = sum(len(v) for v in runs.values())
        print(f"bench: interrupted ({stop.reason}) after {done} of {total} runs: writing what was measured",
              file=sys.stderr, flush=True)
        runnable = [r for r in runnable if runs[r.id]]  # the rows that ran at least once
    return report(p, a, runnable, instances, runs,
                  {"interrupted": stop.reason, "runs_done": done, "runs_planned": total})


def syscalls_text(record, side):
    """What follows a side's CPU in the progress line: its system calls per
    request where it counts them, else nothing."""
    n = record.get(f"{side}_syscalls_per_request")
    return "" if n is None else f" {n:.3f} syscalls/req"


def measure_all(ctx, a, runnable, instances, runs):
    """Cold start and the memory row once per server instance, then every
    row's iterations (iterations the outer loop); fills `instances` and
    `runs` as it goes and returns the runs done."""
    start_instances(ctx, runnable, instances)
    total = len(runnable) * a.iterations
    iterate(ctx, runnable, a.iterations, runs, lambda r: measure_row(ctx, r, instances[r.instance]),
            lambda r, it, rec: run_line(r, it, rec, sum(len(v) for v in runs.values()), total))
    return sum(len(v) for v in runs.values())


def start_instances(ctx, runnable, instances):
    """Cold start and the memory row once per server instance, printed."""
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


def measure_row(ctx, r, inst):
    """One run of row r; its instance's start failure instead, where it never started."""
    return measure(ctx, r, "cold_start_failure" not in inst) if "failure" not in inst else {
        "failure": inst["failure"]}


def run_line(r, it, rec, done, total):
    """The progress line of a run, the done-th of total."""
    if "failure" in rec:
        return f"[{done}/{total}] {r.id} iteration {it}: FAILED: {rec['failure']}"
    return (f"[{done}/{total}] {r.id} iteration {it}: {rec['rps'] / 1000:.1f}k req/s, server "
            f"{fmt(rec.get('server_cpu_us'), '.2f')} µs/req{syscalls_text(rec, 'server')}, client "
            f"{fmt(rec.get('client_cpu_us'), '.2f')} µs/req{syscalls_text(rec, 'client')}, "
            f"{rec['errors']} errors")


def report(p, a, runnable, instances, runs, progress):
    """The results printed and written; the exit status."""
    ctx, skipped, interrupted = p.ctx, p.skipped, progress["interrupted"]
    base = os.path.join(a.out, f"{PREFIX}-{p.stamp}")
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
    notes = method_notes(runnable, summaries, database)
    conn_header, conn_body = connection_table(runnable, summaries)
    conn_notes = connection_notes(runnable, summaries) if conn_body else []
    ladder_body, ladder_verdicts = ladder_table(summaries)
    targets = judge_targets(summaries, targets_for(a.axes))
    text = "## Results\n\n" + text_table(header, body)
    targets_title = ("## Targets (issue 16: ringhttp's database rows, issue 17: the open model, issue 26: the client "
                     "over TLS; ringhttp-tls's server CPU against nginx-tls's; issue 31: the client over HTTP/2 "
                     "against h2load; against this run's own rows, reported, not failed)") if not a.axes else (
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
        text += ("\n\n" + CONNECTIONS_TITLE + "\n\n" + text_table(conn_header, conn_body) + "\n\n"
                 + "\n".join(conn_notes))
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
        md += (f"\nInterrupted ({interrupted}) after {progress['runs_done']} of {progress['runs_planned']} runs: "
               "the rows above are what was measured.\n")
    if skipped:
        md += "\nSkipped: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()) + "\n"
    write_report(a, base, "benchmark " + p.stamp, p.env, p.env_lines, md, {
        "summaries": list(summaries.values()), "runs": runs, "instances": instances,
        "skipped": skipped, "workloads": {w.name: w.description for w in WORKLOADS.values()},
        "memory_row": {"counts": ctx.idle_counts, "descriptor_limits": ctx.fd_limits,
                       "holder_sources": ctx.holder_sources,
                       "holder_connections_max": ctx.holder_connections_max, "notes": mem_notes},
        "ladder": {"rows": ladder_body, "verdicts": ladder_verdicts}, "targets": targets,
        "connections": {"header": conn_header, "rows": conn_body, "notes": conn_notes}, **progress},
        also=[("chart", base + ".png", chart_error)])
    code = finish(ctx, interrupted, failed)
    if code == 1:
        print("bench: FAILED rows: " + ", ".join(failed), file=sys.stderr)
        for rid in failed:
            for why in summaries.get(rid, {}).get("failures", []):
                print(f"  {rid}: {why}", file=sys.stderr)
    return code


def method_notes(runnable, summaries, database):
    """What each column means and how it was measured; the database rows'
    setting and their rate against pgbench's; the comparisons of generators
    and of the io_uring floors."""
    notes = [
        "Medians over iterations, [min–max] where they differ. Server CPU µs/req: the server process's utime+stime "
        "over the measured window ÷ responses (the column to compare). ÷ base: that figure divided by the row named "
        "in the JSON's ratio_base (the io_uring floor's row of the same kind, ringhttp/json for the ladder's rungs, "
        "or the axis's default variant).",
        "Client CPU µs/req: the generator's own CPU (ringhttp's client, or wrk and h2load in /wrk and /h2load "
        "rows). wrk checks statuses only, and prints no p99.9; ringhttp's client checks every status and body.",
        "Syscalls/req: each side's own count of its system calls over the measured window ÷ responses: "
        "ringhttp's server from its /metrics (ringhttp_syscalls_total summed over calls, read as the window starts "
        "and as it ends, ÷ the responses it counted between the two readings), ringhttp's client from its report. "
        "— where a process does not count them (the floors, the peers, wrk, h2load).",
        f"Cold start: exec to the first right answer to GET {READY_PATH} (status 200 and its body, on a new "
        f"connection polled every 1 ms), median of {COLD_START_SPAWNS} spawns. RSS: the server's VmRSS right after "
        "the measured run.",
    ]
    if any(r.generator == "h2load" for r in runnable):
        notes.append("h2load (rows ending /h2load) warms up and measures in one process: its client CPU is its whole "
                     "CPU less what it had spent when its warm-up ended, the server's is from then to h2load's exit. "
                     "It checks statuses only (an answer that is not 2xx, or a request it counts failed, errored or "
                     "timed out, fails the row), prints no percentiles and does not verify the server's "
                     "certificate; ringhttp's client on the same row checks every status and body over h2, "
                     f"the certificate against the run's CA. Both offer the TLS 1.3 suite {H2_TLS13_CIPHER} alone "
                     "(--tls13-ciphers), so both encrypt alike. The client waits for completions in batches "
                     "(--batch-wait auto: at most 1% of its shortest round trip; its JSON gives the longest window "
                     "used).")
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
    return notes
