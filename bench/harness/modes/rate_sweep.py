"""--rate-sweep: one row in the open model at each of --rates; every
point's iterations, the table and the chart; 1 if a run failed."""
import os

from ..interrupts import Interrupted, stop_processes
from .iterations import iterate
from ..rate_sweep import SWEEP_HEADER, sweep_chart, sweep_rows, sweep_table
from ..render import md_table, text_table
from ..report import finish, verdict, write_report
from ..rows import all_rows, select, usage_error
from ..runs import measure, open_rate
from ..summary import fmt, summarize

PREFIX = "rate-sweep"  # its files: results/rate-sweep-STAMP.{md,json,png}


def choose(a):
    """The row --rate-sweep names (a.sweep_row), as one row per rate."""
    rows = [r for r in select(all_rows(a.custom), a.rate_sweep) if r.generator == "client"]
    if len(rows) != 1:
        usage_error(f"--rate-sweep: '{a.rate_sweep}' names {len(rows)} rows driven by ringhttp's client, not "
                    "one" + (f": {', '.join(r.id for r in rows)}" if rows else ""))
    if not rows[0].server.http:
        usage_error(f"--rate-sweep: {rows[0].id} has no HTTP server")
    a.sweep_row = rows[0]
    a.idle_connections = []
    return sweep_rows(rows[0], a.rates)


def method(a, _ctx, _rows, text):
    return text + (f"; --rate-sweep: {a.sweep_row.id} in the open model (-R) at each requested rate, "
                   "latency from each request's intended time (corrected) and from its send (uncorrected)")


def run(p, a):
    """Every point's iterations, the table and the chart; 1 if a run
    failed, 130 if interrupted."""
    ctx, rows = p.ctx, p.runnable
    base = os.path.join(a.out, f"{PREFIX}-{p.stamp}")
    print(f"rate sweep: {a.sweep_row.id} at {', '.join(f'{r:,}' for r in a.rates)} requests/s, {a.iterations} "
          f"iteration(s) of {a.warmup} s warm-up + {a.duration} s each", flush=True)
    runs = {r.id: [] for r in rows}
    with Interrupted() as stop:
        measure_points(ctx, a, rows, runs)
    if stop.reason:
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
    said = verdict(failures, stop.reason)
    print(f"\n## Rate sweep: {title}\n\n" + text_table(SWEEP_HEADER, body) + "\n\n" + note
          + ("\n\n" + said if said else ""))
    md = (f"## Rate sweep: {title}\n\n" + md_table(SWEEP_HEADER, body) + "\n\n" + note + "\n"
          + (f"\n{said}\n" if said else ""))
    write_report(a, base, f"rate sweep {os.path.basename(base)}", p.env, p.env_lines, md,
                 {"row": a.sweep_row.id, "interrupted": stop.reason, "failures": failures,
                  "points": [{"requested_rps": open_rate(r.workload, ctx.pipeline), "summary": summaries[r.id],
                              "runs": runs[r.id]} for r in rows]},
                 also=[("chart", base + ".png", chart_error)])
    return finish(ctx, stop.reason, failures)


def measure_points(ctx, a, rows, runs):
    """Every point's iterations, each run printed as it ends; fills `runs`."""
    iterate(ctx, rows, a.iterations, runs, lambda r: measure(ctx, r), point_line)


def point_line(r, it, rec):
    if "failure" in rec:
        return f"{r.id} iteration {it}: FAILED: {rec['failure']}"
    return (f"{r.id} iteration {it}: {rec['rps']:,.0f} req/s of {rec['requested_rps']:,} asked, "
            f"p99 {rec['p99_ms']:.2f} ms (uncorrected {fmt(rec['p99_uncorrected_ms'], '.2f')})")
