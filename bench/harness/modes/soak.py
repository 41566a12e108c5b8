"""--soak: one server process under phases of load (and the hostile driver
beside them with --soak-hostile); the series printed and written, 1 if
anything grew or failed."""
import os

from ..constants import CLIENT_CPU, ROOT, SERVER_CPUS
from ..render import md_table, text_table
from ..report import failed, finish, write_report
from ..rows import all_rows, select, usage_error
from ..soak import SOAK_RSS_TOLERANCE_BYTES, SOAK_RSS_TOLERANCE_FRACTION, soak, soak_table

PREFIX = "bench"  # its files: results/bench-STAMP.{md,json}, as the rows run's


def choose(a):
    """The rows --soak names: one server's, driven by ringhttp's client."""
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
    return rows


def hostile_driver(a):
    """The hostile-client driver --soak-hostile names, or the one a build with tests has."""
    if a.soak_hostile:
        candidates = [a.soak_hostile]
    else:
        candidates = [os.path.join(d, "tests", "socket", "hostile_driver")
                      for d in (a.build, os.path.join(ROOT, "build"))]
    for path in candidates:
        if os.access(path, os.X_OK):
            return os.path.realpath(path)
    usage_error(f"--soak-hostile: no driver at {' or '.join(candidates)} (a build with tests has it: "
                "meson setup build && ninja -C build tests/socket/hostile_driver)")


def method(a, ctx, rows, _text):
    return (f"soak: one server process pinned to CPU {SERVER_CPUS} (one shard) for "
            f"{a.soak_phases} phases, each {len(rows)} load(s) in turn of {ctx.warmup} s warm-up + "
            f"{ctx.duration} s of the generator (one thread on CPU {CLIENT_CPU}, {ctx.connections} "
            "connections, a fresh one per load)"
            + (f", the hostile-client driver beside them on CPU {CLIENT_CPU} ({a.soak_hostile} --port; "
               "the server with the flags its scripts are made for)" if a.soak_hostile else "")
            + "; after each phase, with its connections closed, RSS, descriptors and pool gauges")


def run(p, a):
    """The series printed and written; 1 if anything grew or failed."""
    ctx, rows = p.ctx, p.runnable
    base = os.path.join(a.out, f"{PREFIX}-{p.stamp}")
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
    write_report(a, base, f"soak {os.path.basename(base)}", p.env, p.env_lines,
                 "## Soak\n\n" + md_table(header, body) + "\n\n" + verdict + "\n", {"soak": record})
    return finish(ctx, record.get("interrupted"), record["failures"])
