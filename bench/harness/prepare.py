"""What every measuring mode does before it measures: the run's context,
the rows that can run here (and why the others cannot), the environment
printed."""
import collections
import datetime
import os
import shutil
import sys

from .context import Context
from .environment import environment
from .rows import PEER_GENERATORS, usage_error
from .servers import Ringhttp

# ctx: the run's Context; runnable: the rows that can run, in order; skipped:
# row id -> why it cannot; env, env_lines: the environment as a dict and as
# markdown list items; stamp: the run's UTC time, in its files' names.
Prepared = collections.namedtuple("Prepared", "ctx runnable skipped env env_lines stamp")


def prepare(a, rows, method):
    """The run set up for `rows`; method(a, ctx, runnable, text) gives the
    environment's method line for the mode. Exits where nothing can run."""
    ctx = Context(a)
    if ctx.idle_error:
        ctx.remove()
        usage_error(f"--idle-connections: {ctx.idle_error}")
    if not os.access(ctx.client, os.X_OK):
        raise SystemExit(f"bench: {ctx.client} is not built (tools/bench.sh builds it)")
    for tool in ("taskset",) + tuple(g for g in PEER_GENERATORS if any(r.generator == g for r in rows)):
        if not shutil.which(tool):
            print(f"bench: {tool} is not installed: its rows are skipped", file=sys.stderr)
    skipped = {}
    runnable = []
    for r in rows:
        reason = why_not(ctx, r)
        if reason:
            skipped[r.id] = reason
        else:
            runnable.append(r)
    if not runnable:
        raise SystemExit("bench: no row can run: " + "; ".join(f"{k}: {v}" for k, v in skipped.items()))

    os.makedirs(a.out, exist_ok=True)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    servers = list({r.server.name: r.server for r in runnable}.values())
    env = environment(ctx, servers)
    env["method"] = method(a, ctx, runnable, env["method"])
    env_lines = [f"- {k}: {v}" for k, v in env.items()]
    print("## Environment\n\n" + "\n".join(env_lines) + "\n", flush=True)
    for rid, why in skipped.items():
        print(f"skipping {rid}: {why}")
    return Prepared(ctx, runnable, skipped, env, env_lines, stamp)


GENERATOR_PACKAGES = {"wrk": "wrk", "h2load": "nghttp2-client"}  # the Debian package each comes in


def why_not(ctx, r):
    """Why row r cannot run here, or None."""
    reason = r.server.missing(ctx)
    if not reason and r.workload.database:
        reason = ctx.database_missing()
    if not reason and r.generator in PEER_GENERATORS and not shutil.which(r.generator):
        reason = f"{r.generator} is not installed (Debian: {GENERATOR_PACKAGES[r.generator]})"
    if not reason and r.variant and r.variant.glibc_build and not os.access(
            Ringhttp().binary(ctx, ctx.build_glibc), os.X_OK):
        reason = f"{ctx.build_glibc} has no server (tools/bench.sh --compare alloc builds it)"
    if not reason and r.variant and r.variant.preload and not os.path.exists(r.variant.preload):
        reason = f"{r.variant.preload} is not installed"
    return reason
