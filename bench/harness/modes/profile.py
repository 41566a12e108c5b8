"""--profile: one row's iterations, each plain and then with perf recording
the server; the figures, the profile's tables, folded stacks and chart; 1
if a run failed."""
import os
import shutil
import tempfile

from ..constants import CLIENT_CPU
from ..profile import perf_missing, profile, profile_chart, profile_tables
from ..render import md_table, text_table
from ..report import finish, verdict, write_report
from ..rows import every_row, select, usage_error
from ..summary import fmt, with_range

PREFIX = "profile"  # its files: results/profile-STAMP.{md,json,folded,png}


def choose(a):
    """The one row --profile names, any row, a variant's too, where perf can record."""
    rows = select(every_row(a.custom), a.profile)
    if len(rows) != 1:
        usage_error(f"--profile: '{a.profile}' names {len(rows)} rows, not one: "
                    f"{', '.join(r.id for r in rows)}")
    why = perf_missing()
    if why:
        usage_error(f"--profile: {why}")
    a.idle_connections = []
    return rows


def method(_a, _ctx, _rows, text):
    return text + (f" --profile: each iteration run twice in turn, plain and then with perf recording the "
                   f"server (perf on CPU {CLIENT_CPU}) inside the measured window only")


def run(p, a):
    """The row's figures plain and recorded, the profile's tables, folded
    stacks and chart; 1 if a run failed."""
    ctx, row = p.ctx, p.runnable[0]
    base = os.path.join(a.out, f"{PREFIX}-{p.stamp}")
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
    notes = figures_notes(record)
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
    write_report(a, base, f"profile {os.path.basename(base)}", p.env, p.env_lines, md, {"profile": record},
                 also=[("folded stacks", folded, None), ("chart", base + ".png", chart_error)])
    return finish(ctx, record.get("interrupted"), record["failures"])


def figures_notes(record):
    """The profiler's overhead, and what the samples cover against the
    kernel's own accounting."""
    summary, overhead = record["profile"], record["overhead"]
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
    if summary.get("starved"):
        notes.append(f"Starved: perf took {summary['samples']:,} samples where the CPU time the kernel charged the "
                     f"server should have given about {summary['expected_samples']:,}; the tables below say little "
                     "(perf on some virtual machines; a server that runs in bursts much shorter than the sampling "
                     "period).")
    return notes
