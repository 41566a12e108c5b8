"""The soak (--soak ROWS): phases of load back to back against one server
process, the server's RSS, open descriptors and pool gauges read after each;
growth from the second phase on fails the run (the seeds' four-phase check).
Each phase runs every row's load in turn, and with --soak-hostile the
hostile-client driver (tests/socket/hostile_driver --port) beside them for
the whole phase, its every connection checked against its script's model.

The first phase is allowed to grow: allocators, rings and caches reach
their working size there. From the second phase on, with the load gone and
its connections closed, RSS may grow by at most SOAK_RSS_TOLERANCE_BYTES
or SOAK_RSS_TOLERANCE_FRACTION of the second phase's, whichever is larger,
and the descriptors and every pool gauge /metrics shows must read what they
read after the second phase."""
import math
import os
import re
import subprocess
import time

from .constants import CLIENT_CPU, GENERATOR_GRACE_S, MEMORY_SETTLE_S
from .interrupts import Interrupted
from .processes import Running, StartError, established, get_once, rss_bytes, run_bounded
from .stopping import stop_child
from .runs import database_ready, run_client

SOAK_PHASES = 4                         # the seeds' four
SOAK_RSS_TOLERANCE_BYTES = 1024 * 1024  # page-granular noise: a few pages of stack, heap or page cache
SOAK_RSS_TOLERANCE_FRACTION = 0.02
SOAK_SETTLE_S = 10                      # the load's connections are closed by then, or the phase fails
# ringhttp's gauges of what connections hold (docs/SERVER.md, "Metrics"): each reads
# after every phase what it read after the second.
POOL_GAUGES = ("connections_active", "output_blocks_lent", "held_input_rings_lent", "input_buffers_held",
               "input_spill_blocks_used")
# The hostile driver's round ends by its own bound (its round_ms_max);
# it is given this long past the phase's load to finish its last round.
HOSTILE_ROUND_MAX_S = 60
HOSTILE_DONE = re.compile(r"(\d+) rounds passed, (\d+) connections, (\d+) requests answered")
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


def hostile_flags(driver):
    """The server flags the hostile driver's scripts are made for (its
    --print-server-args), less the placement the soak sets itself."""
    code, out, err = run_bounded([driver, "--print-server-args"], SOAK_SETTLE_S)
    if code != 0:
        raise StartError(f"{driver} --print-server-args exited {code}: {err.strip()[-300:]}")
    args, flags = out.split(), []
    for name, value in zip(args[::2], args[1::2]):
        if name != "--shards":
            flags += [name, value]
    return flags


class Hostile:
    """The hostile-client driver beside a phase's load: rounds of random
    scripts against the soak's server (each connection checked against its
    script's model) for as long as the phase's load runs; bounded, and
    stopped whatever happens."""

    def __init__(self, driver, port, seconds, log_path):
        self.log_path = log_path
        self.seconds = seconds
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(["taskset", "-c", CLIENT_CPU, driver, "--port", str(port), "--seconds",
                                          str(math.ceil(seconds)), "--quiet"], stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)

    def finish(self):
        """Waits for the driver's last round (bounded); returns its record."""
        try:
            code = self.proc.wait(timeout=HOSTILE_ROUND_MAX_S + GENERATOR_GRACE_S)
        except subprocess.TimeoutExpired:
            self.stop()
            code = None
        with open(self.log_path, errors="replace") as f:
            lines = f.read().splitlines()
        last = next((ln for ln in reversed(lines) if ln.startswith("hostile_driver: ")), "")
        m = HOSTILE_DONE.search(last)
        record = {"exit": code, "rounds": int(m.group(1)) if m else None,
                  "connections": int(m.group(2)) if m else None, "requests": int(m.group(3)) if m else None}
        if code != 0 or not m:
            failed = [ln for ln in lines if ln.startswith("FAILURE") or "FAILED" in ln]
            record["failure"] = (f"the hostile driver exited {code}: "
                                 + " | ".join((failed or lines or ["no output"])[-4:])[-600:])
        return record

    def stop(self):
        stop_child(self.proc)


def soak(ctx, rows, phases, driver=None):
    """Runs `phases` phases of the rows' loads (one after another in each
    phase; the hostile driver beside them when `driver` is given) against
    one server; returns the record: the series, the verdict and why."""
    row = rows[0]
    record = {"rows": [r.id for r in rows], "hostile": bool(driver), "phases": [], "failures": []}
    running = hostile = None
    stop = Interrupted()
    try:
        with stop:  # SIGTERM or Ctrl-C: the phases done so far are the record
            extra = list(hostile_flags(driver)) if driver else []
            database = [r for r in rows if r.workload.database]
            if database:  # the database rows' loads against the run's cluster, its connections up first
                extra += row.server.database_args(ctx, row.variant)
            running = Running(ctx, row.server, row.variant, extra_args=extra)
            if database:
                ready = {"startup": running.startup_line()}
                database_ready(ctx, database[0], running, ready)
                if "failure" in ready:
                    raise StartError(ready["failure"])
            for i in range(1, phases + 1):
                if driver:
                    hostile = Hostile(driver, running.port, len(rows) * (ctx.warmup + ctx.duration),
                                      os.path.join(running.rundir, f"hostile-{i}.log"))
                loads = []
                for r in rows:
                    run = run_client(ctx, r, running)
                    loads.append({"row": r.id, "requests": run.get("requests", 0), "errors": run.get("errors"),
                                  "rps": run.get("rps"), "server_cpu_us": run.get("server_cpu_us")})
                    if "failure" in run:
                        record["failures"].append(f"phase {i}, {r.id}: {run['failure']}")
                    if running.proc.poll() is not None:
                        break
                hostile_record = hostile.finish() if hostile else None
                closed = settle(running.port)
                requests = sum(x["requests"] for x in loads)
                cpu = [(x["requests"], x["server_cpu_us"]) for x in loads if x["server_cpu_us"]]
                sample = {"phase": i, "requests": requests,
                          "errors": sum(x["errors"] or 0 for x in loads) if all(x["errors"] is not None for x in loads)
                          else None,
                          "rps": loads[0]["rps"] if len(loads) == 1 else None,
                          "server_cpu_us": sum(n * c for n, c in cpu) / sum(n for n, _ in cpu) if cpu else None,
                          "loads": loads, "hostile": hostile_record,
                          "rss_bytes": rss_bytes(running.pid), "descriptors": descriptors(running.pid),
                          "pools": pool_gauges(running.port)}
                record["phases"].append(sample)
                print(f"soak phase {i}/{phases}: {sample['requests']:,} requests, {sample['errors']} errors"
                      + (f", hostile: {hostile_record['rounds']} rounds, {hostile_record['connections']} connections"
                         if hostile_record else "")
                      + f", RSS {sample['rss_bytes'] / 2**20:.2f} MiB, {sample['descriptors']} descriptors, "
                      f"pools {sample['pools'] or 'n/a'}", flush=True)
                if hostile_record and "failure" in hostile_record:
                    record["failures"].append(f"phase {i}: {hostile_record['failure']}")
                if not closed:
                    record["failures"].append(f"phase {i}: connections still established {SOAK_SETTLE_S} s after "
                                              "the load")
                if running.proc.poll() is not None:
                    record["failures"].append(f"phase {i}: the server exited with status {running.proc.returncode}")
                    break
    except StartError as e:
        record["failures"].append(str(e))
        return record
    finally:
        if hostile:
            hostile.stop()
        if running:
            running.stop()
    if stop.reason:
        record["interrupted"] = stop.reason
        return record
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
              "descriptors", "pool gauges"] + (["hostile rounds, connections"] if record.get("hostile") else [])
    rows, base = [], None
    for p in record["phases"]:
        if p["phase"] == 2:
            base = p["rss_bytes"]
        delta = "" if base is None else f"{(p['rss_bytes'] - base) / 1024:+.0f}"
        cpu = p["server_cpu_us"]
        pools = ", ".join(f"{k.removeprefix('ringhttp_')} {v:g}" for k, v in sorted(p["pools"].items())) or "n/a"
        rows.append([str(p["phase"]), f"{p['requests']:,}", str(p["errors"]), f"{cpu:.2f}" if cpu else "n/a",
                     f"{p['rss_bytes'] / 2**20:.2f}", delta, str(p["descriptors"]), pools])
        if record.get("hostile"):
            h = p.get("hostile") or {}
            rows[-1].append(f"{h.get('rounds')}, {h.get('connections'):,}" if h.get("rounds") is not None else "failed")
    return header, rows
