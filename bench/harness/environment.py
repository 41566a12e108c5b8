"""The environment block printed and saved beside every result."""
import datetime
import json
import os
import shutil
import subprocess

from .constants import CLIENT_CPU, ROOT, SERVER_CPUS
from .servers import first_line
from .rows import BY_NAME
from .processes import Running, StartError


# Environment block.

def environment(ctx, servers):
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    env["cpu"] = f"{model}, {os.cpu_count()} CPUs"
    env["kernel"] = os.uname().release
    with open("/proc/loadavg") as f:
        env["load_average"] = " ".join(f.read().split()[:3])
    env["memory"] = f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.1f} GiB"
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    env["commit"] = (commit.stdout.strip() or "no commit") + (" (uncommitted changes)" if dirty else "")
    env["build"] = build_description(ctx.build)
    env["compiler"] = first_line([os.environ.get("CXX", "c++"), "--version"])
    env["liburing"] = first_line(["pkg-config", "--modversion", "liburing"])
    env["io_uring"] = uring_description(ctx)
    for s in servers:
        version = s.version(ctx)  # the floors and custom servers have none to tell
        if version:
            env[f"{s.name} version"] = version
    env["wrk version"] = first_line(["wrk", "-v"]) if shutil.which("wrk") else "not installed"
    if any(s.http2 for s in servers):
        env["h2load version"] = first_line(["h2load", "--version"]) if shutil.which("h2load") else "not installed"
    if any(s.tls for s in servers):
        env["openssl"] = (first_line(["openssl", "version"]) + "; the TLS rows' CA and certificate: P-256, made by it "
                          "for this run and removed after it")
    for name, path in ctx.clients.items():  # --also-client
        env[f"client {name}"] = f"{path} ({first_line([path, '--version'])})"
    env["method"] = (f"server pinned to CPU {SERVER_CPUS} (one shard), generator one thread on CPU {CLIENT_CPU}, "
                     f"{ctx.connections} connections, {ctx.warmup} s warm-up (not reported), {ctx.duration} s "
                     f"measured, {ctx.iterations} iteration(s), fresh server per run, {ctx.cool_down:g} s cool-down, "
                     f"pipelined: {ctx.pipeline} per send")
    return env


def build_description(build):
    try:
        out = subprocess.run(["meson", "introspect", "--buildoptions", build], capture_output=True, text=True,
                             timeout=30)
        opts = {o["name"]: o["value"] for o in json.loads(out.stdout)}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return f"{build} (meson introspect failed)"
    args = " ".join(opts.get("cpp_args") or []) or "none"
    return (f"{os.path.relpath(build, ROOT)}: buildtype={opts.get('buildtype')} optimization=-O{opts.get('optimization')} "
            f"debug={opts.get('debug')} b_ndebug={opts.get('b_ndebug')} b_lto={opts.get('b_lto')} "
            f"cpp_args={args} allocator={opts.get('allocator')}")


def uring_description(ctx):
    """What this kernel offers, as ringhttp itself reports it: the default
    feature set (everything but the opt-ins), then whether SQPOLL and
    zero-copy send, which fall back when refused, are really available."""
    server = BY_NAME["ringhttp"]
    if server.missing(ctx):
        return "unknown (ringhttp not built)"
    fields = {}
    for name, extra in (("default", ()), ("opt-in", ("--uring", "all,sqpoll", "--send", "zc"))):
        try:
            running = Running(ctx, server, None, extra)
        except StartError:
            return "unknown (ringhttp did not start)"
        line = running.startup_line()
        running.stop()
        fields[name] = dict(f.split("=", 1) for f in line.split() if "=" in f)
    opt = fields["opt-in"]
    return (f"{fields['default'].get('uring', '?')}; sqpoll "
            f"{'available' if 'sqpoll' in opt.get('uring', '').split(',') else 'refused'}; send zc "
            f"{'available' if opt.get('send') == 'zc' else 'refused'} (ringhttp's own probe; "
            f"allocator={fields['default'].get('allocator', '?')})")
