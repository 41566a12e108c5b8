"""The soak (--soak ROW): phases of load back to back against one server
process, the server's RSS, open descriptors and pool gauges read after each;
growth from the second phase on fails the run (the seeds' four-phase check).

The first phase is allowed to grow: allocators, rings and caches reach
their working size there. From the second phase on, with the load gone and
its connections closed, RSS may grow by at most SOAK_RSS_TOLERANCE_BYTES
or SOAK_RSS_TOLERANCE_FRACTION of the second phase's, whichever is larger,
and the descriptors and every pool gauge /metrics shows must read what they
read after the second phase."""
import os
import re
import time

from .constants import MEMORY_SETTLE_S
from .processes import Running, StartError, established, get_once, rss_bytes
from .runs import run_client

SOAK_PHASES = 4                         # the seeds' four
SOAK_RSS_TOLERANCE_BYTES = 1024 * 1024  # page-granular noise: a few pages of stack, heap or page cache
SOAK_RSS_TOLERANCE_FRACTION = 0.02
SOAK_SETTLE_S = 10                      # the load's connections are closed by then, or the phase fails
# ringhttp's gauges of what connections hold (README, "Metrics"): each reads
# after every phase what it read after the second.
POOL_GAUGES = ("connections_active", "output_blocks_lent", "held_input_rings_lent", "input_buffers_held",
               "input_spill_blocks_used")
POOL_GAUGE = re.compile(r"^(ringhttp_(?:" + "|".join(POOL_GAUGES) + r")(?:\{[^}]*\})?) (\S+)$", re.M)


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def pool_gauges(port):
    """ringhttp's pool gauges from its /metrics ({} for a server without them).
    The scrape's own connection is counted in them, the same way each time."""
    answer = get_once(port, "/metrics", time.monotonic() + SOAK_SETTLE_S)
    if not answer or answer[0] != 200:
        return {}
    return {name: float(value) for name, value in POOL_GAUGE.findall(answer[1].decode(errors="replace"))}


def settle(port):
    """Waits, bounded, until no load connection is established; True if none is."""
    deadline = time.monotonic() + SOAK_SETTLE_S
    while established(port) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(MEMORY_SETTLE_S)
    return established(port) == 0


def soak(ctx, row, phases):
    """Runs `phases` phases of row's load against one server; returns the
    record: the series, the verdict and why."""
    record = {"row": row.id, "phases": [], "failures": []}
    try:
        running = Running(ctx, row.server, row.variant)
    except StartError as e:
        record["failures"].append(str(e))
        return record
    try:
        for i in range(1, phases + 1):
            run = run_client(ctx, row, running)
            closed = settle(running.port)
            sample = {"phase": i, "requests": run.get("requests", 0), "errors": run.get("errors"),
                      "rps": run.get("rps"), "server_cpu_us": run.get("server_cpu_us"),
                      "rss_bytes": rss_bytes(running.pid), "descriptors": descriptors(running.pid),
                      "pools": pool_gauges(running.port)}
            record["phases"].append(sample)
            print(f"soak phase {i}/{phases}: {sample['requests']:,} requests, {sample['errors']} errors, "
                  f"RSS {sample['rss_bytes'] / 2**20:.2f} MiB, {sample['descriptors']} descriptors, "
                  f"pools {sample['pools'] or 'n/a'}", flush=True)
            if "failure" in run:
                record["failures"].append(f"phase {i}: {run['failure']}")
            if not closed:
                record["failures"].append(f"phase {i}: connections still established {SOAK_SETTLE_S} s after the load")
            if running.proc.poll() is not None:
                record["failures"].append(f"phase {i}: the server exited with status {running.proc.returncode}")
                break
    finally:
        running.stop()
    record["failures"] += growth(record["phases"])
    return record


def growth(phases):
    """What grew from the second phase on, beyond the tolerance."""
    if len(phases) < 3:
        return [f"{len(phases)} phases: growth is judged from the second phase on, over at least three"]
    base, failures = phases[1], []
    allowed = max(SOAK_RSS_TOLERANCE_BYTES, base["rss_bytes"] * SOAK_RSS_TOLERANCE_FRACTION)
    for p in phases[2:]:
        grew = p["rss_bytes"] - base["rss_bytes"]
        if grew > allowed:
            failures.append(f"phase {p['phase']}: RSS grew {grew / 1024:.0f} KiB since phase 2, more than the "
                            f"{allowed / 1024:.0f} KiB allowed")
        if p["descriptors"] != base["descriptors"]:
            failures.append(f"phase {p['phase']}: {p['descriptors']} descriptors open, {base['descriptors']} "
                            "after phase 2")
        for name, value in p["pools"].items():
            if value != base["pools"].get(name):
                failures.append(f"phase {p['phase']}: {name} reads {value:g}, {base['pools'].get(name)} after "
                                "phase 2")
    return failures


def soak_table(record):
    """The series as (header, rows) for text_table and md_table."""
    header = ["phase", "requests", "errors", "server CPU µs/req", "RSS MiB", "Δ RSS since phase 2 KiB",
              "descriptors", "pool gauges"]
    rows, base = [], None
    for p in record["phases"]:
        if p["phase"] == 2:
            base = p["rss_bytes"]
        delta = "" if base is None else f"{(p['rss_bytes'] - base) / 1024:+.0f}"
        cpu = p["server_cpu_us"]
        pools = ", ".join(f"{k.removeprefix('ringhttp_')} {v:g}" for k, v in sorted(p["pools"].items())) or "n/a"
        rows.append([str(p["phase"]), f"{p['requests']:,}", str(p["errors"]), f"{cpu:.2f}" if cpu else "n/a",
                     f"{p['rss_bytes'] / 2**20:.2f}", delta, str(p["descriptors"]), pools])
    return header, rows
