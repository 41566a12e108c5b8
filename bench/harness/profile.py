"""A CPU profile of one row (--profile ROW), as the seed found its cost.

The row runs as usual, iterations times, each iteration twice in turn: once
plain, once with Debian's perf recording the server process during the
measured window only. perf samples the server's threads on the software
clock at a fixed frequency (this VM has no hardware counters) with full
call chains: the kernel's from its own unwinder, user space's unwound from
a copy of the stack by DWARF call-frame information (.eh_frame, in every
x86-64 binary), since -O2 code keeps no frame pointers and `-g`'s chains
would stop at the first frame. Every sample is one tick of the server's
CPU: a function's self share is the samples it was running in, its
inclusive share the samples it was anywhere on the stack of, user space and
the kernel apart. The plain runs beside the recorded ones give the
profiler's overhead, in the same run.
"""
import collections
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from .constants import CLIENT_CPU, GENERATOR_GRACE_S
from .interrupts import Interrupted
from .processes import run_bounded, user_system_ticks, wait_while_running
from .runs import measure
from .stopping import close_pipes, stop_child
from .summary import fmt, summarize
from .render import gnuplot_missing, run_gnuplot

PROFILE_FREQUENCY_HZ = 999   # samples per second of CPU: not a multiple of the kernel's tick, so not in step with it
# A profile with fewer samples than this share of what its CPU time
# should have given is marked starved.
STARVED_SHARE = 0.25
PROFILE_EVENT = "cpu-clock"  # a software event: counts on any machine, virtual or not
PROFILE_CALL_GRAPH = "dwarf"  # 8 KiB of user stack per sample, unwound afterwards (see above)
# The recording starts this long after the generator's warm-up ends and
# stops this long before its measured window does: the generator's own
# start and perf's attach take some milliseconds, and the recording must
# fall inside the window, never on the warm-up.
PROFILE_EDGE_S = 0.25
PROFILE_MIN_DURATION_S = 1   # --duration shorter than this leaves no window worth recording
PROFILE_TOP = 25             # functions listed in each table
PROFILE_CHART_TOP = 15       # functions in each of the chart's two panels
PERF_SCRIPT_TIMEOUT_S = 300  # unwinding a recording is bounded too
PERF_PROBE_TIMEOUT_S = 60    # perf recording `true` once, on a busy two-core machine
KERNEL_MARK = "_[k]"         # a kernel frame in folded stacks, as flame-graph tools colour them


def perf_missing():
    """Why perf cannot record here, or None."""
    if not shutil.which("perf"):
        return "perf is not installed (Debian: linux-perf)"
    with tempfile.TemporaryDirectory(prefix="ringhttp-bench-perf.") as d:
        code, _, err = run_bounded(["perf", "record", "-q", "-e", PROFILE_EVENT, "-F", str(PROFILE_FREQUENCY_HZ),
                                    "--call-graph", PROFILE_CALL_GRAPH, "-o", os.path.join(d, "probe.data"),
                                    "--", "true"], PERF_PROBE_TIMEOUT_S)
    if code is None:
        return f"perf record did not finish within {PERF_PROBE_TIMEOUT_S} s here"
    if code != 0:
        return f"perf record fails here: {err.strip()[-300:]}"
    return None


class Recorder:
    """perf beside one run's generator: called as the generator starts, it
    waits out the warm-up, records the server for the measured window less
    its edges, and returns. Its figures: `path`, `seconds`, `error`."""

    def __init__(self, ctx, path):
        self.duration = ctx.duration
        self.path = path
        self.seconds = None
        self.ticks = (0, 0)  # the kernel's own user, system accounting of the server over the recording
        self.error = None

    def __call__(self, generator, pid, warmup_s):
        if not wait_while_running(generator, time.monotonic() + warmup_s + PROFILE_EDGE_S):
            self.error = "the generator ended before its measured window"
            return
        length = self.duration - 2 * PROFILE_EDGE_S
        # perf on the generator's CPU: its own work (writing the samples) is
        # not the server's; what the server pays is the sampling itself. It
        # records until SIGINT (no workload of its own that could outlive it).
        argv = ["taskset", "-c", CLIENT_CPU, "perf", "record", "-q", "-e", PROFILE_EVENT,
                "-F", str(PROFILE_FREQUENCY_HZ), "--call-graph", PROFILE_CALL_GRAPH, "-p", str(pid),
                "-o", self.path]
        # Its own process group: stopping it stops whatever it may have forked.
        perf = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                process_group=0)
        try:
            before = user_system_ticks(pid)
            wait_while_running(perf, time.monotonic() + length)
            after = user_system_ticks(pid)
            perf.send_signal(signal.SIGINT)
            _, err = perf.communicate(timeout=GENERATOR_GRACE_S)
        except subprocess.TimeoutExpired:
            stop_child(perf, group=True)
            close_pipes(perf)
            self.error = f"perf record did not stop within {GENERATOR_GRACE_S} s of SIGINT"
            return
        except OSError as e:  # the server is gone: its run says so
            stop_child(perf, group=True)
            close_pipes(perf)
            self.error = f"the server could not be read: {e}"
            return
        except BaseException:
            stop_child(perf, group=True)  # interrupted: perf does not outlive the harness
            close_pipes(perf)
            raise
        if perf.returncode not in (0, -signal.SIGINT):  # perf re-raises the SIGINT it stopped on
            self.error = f"perf record exited {perf.returncode}: {err.decode(errors='replace').strip()[-300:]}"
        else:
            self.seconds = length
            self.ticks = (after[0] - before[0], after[1] - before[1])

FRAME = re.compile(r"^\s*([0-9a-f]+) (.*) \((.*)\)$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def frame_name(symbol, dso):
    """A frame as the tables and folded stacks name it: the function without
    its offset, or [its binary] when perf has no symbol for it."""
    symbol = OFFSET.sub("", symbol)
    if symbol and symbol != "[unknown]":
        return symbol
    return f"[{os.path.basename(dso)}]" if dso and dso != "[unknown]" else "[unknown]"


def is_kernel(address, dso):
    return dso.startswith("[kernel") or dso.endswith(".ko") or int(address, 16) >= 0xffff800000000000


def samples(path):
    """The recording's samples, each its stack from the leaf outwards as
    (name, in the kernel, binary) frames, unwound by perf script."""
    code, out, err = run_bounded(["perf", "script", "-i", path, "--no-inline", "-F", "comm,tid,ip,sym,dso"],
                                 PERF_SCRIPT_TIMEOUT_S)
    if code is None:
        raise RuntimeError(f"perf script did not finish within {PERF_SCRIPT_TIMEOUT_S} s")
    if code != 0:
        raise RuntimeError(f"perf script exited {code}: {err.strip()[-300:]}")
    for block in out.split("\n\n"):
        stack = []
        for line in block.splitlines()[1:]:
            m = FRAME.match(line)
            if m:
                stack.append((frame_name(m.group(2), m.group(3)), is_kernel(m.group(1), m.group(3)),
                              os.path.basename(m.group(3))))
        if stack:
            yield stack


class Profile:
    """Samples summed over recordings: self and inclusive counts per
    function, user space and the kernel apart, and the folded stacks."""

    def __init__(self):
        self.total = 0
        self.kernel = 0  # samples whose running frame was in the kernel
        self.self_counts = collections.Counter()       # (name, kernel) -> samples
        self.inclusive_counts = collections.Counter()  # (name, kernel) -> samples with it on the stack
        self.folded = collections.Counter()            # "outermost;...;leaf" -> samples
        self.user_binaries = collections.Counter()     # binary -> user-space samples running in it
        self.seconds = 0.0
        self.ticks = [0, 0]  # the kernel's accounting of the same windows: user, system

    def add(self, path, seconds, ticks):
        for stack in samples(path):
            self.total += 1
            name, kernel, binary = stack[0]
            self.kernel += kernel
            self.self_counts[name, kernel] += 1
            if not kernel:
                self.user_binaries[binary] += 1
            for frame in {(n, k) for n, k, _ in stack}:
                self.inclusive_counts[frame] += 1
            self.folded[";".join(n + (KERNEL_MARK if k else "") for n, k, _ in reversed(stack))] += 1
        self.seconds += seconds
        self.ticks[0] += ticks[0]
        self.ticks[1] += ticks[1]

    def top(self, counts, kernel, n=PROFILE_TOP):
        """[(name, samples, share of all samples)] of one side, largest first."""
        side = [(name, c) for (name, k), c in counts.items() if k == kernel]
        side.sort(key=lambda x: (-x[1], x[0]))
        return [(name, c, c / self.total) for name, c in side[:n]]

    def expected(self):
        return round(sum(self.ticks) / os.sysconf("SC_CLK_TCK") * PROFILE_FREQUENCY_HZ)

    def summary(self):
        return {
            "samples": self.total, "seconds_recorded": self.seconds,
            "frequency_hz": PROFILE_FREQUENCY_HZ, "event": PROFILE_EVENT, "call_graph": PROFILE_CALL_GRAPH,
            "kernel_share": self.kernel / self.total if self.total else None,
            "user_share": (self.total - self.kernel) / self.total if self.total else None,
            # The same split by the kernel's tick accounting (utime, stime) over
            # the same windows: a second, independent reading of it.
            "accounted_ticks": {"user": self.ticks[0], "system": self.ticks[1]},
            "accounted_user_share": self.ticks[0] / sum(self.ticks) if sum(self.ticks) else None,
            # What perf should have taken over the CPU time the kernel charged
            # the server; far fewer ("starved": perf on some virtual machines,
            # a server that runs in bursts much shorter than the sampling
            # period) and the tables say little.
            "expected_samples": self.expected(),
            "starved": self.total < self.expected() * STARVED_SHARE,
            "user_binaries": [{"binary": b, "samples": c, "share": c / self.total}
                              for b, c in self.user_binaries.most_common()],
            "self": {side: [{"function": n, "samples": c, "share": s}
                            for n, c, s in self.top(self.self_counts, side == "kernel")]
                     for side in ("user", "kernel")},
            "inclusive": {side: [{"function": n, "samples": c, "share": s}
                                 for n, c, s in self.top(self.inclusive_counts, side == "kernel")]
                          for side in ("user", "kernel")},
        }

    def write_folded(self, path):
        with open(path, "w") as f:
            for stack, count in sorted(self.folded.items()):
                f.write(f"{stack} {count}\n")


def profile_tables(summary):
    """(title, header, rows) for each table: self and inclusive, user space and the kernel apart."""
    tables = [("User space by binary (self; share of all the server's samples)", ["binary", "share", "samples"],
               [[e["binary"], f"{e['share']:.1%}", f"{e['samples']:,}"] for e in summary["user_binaries"]])]
    for kind, what in (("self", "running in it"), ("inclusive", "it anywhere on the stack")):
        for side in ("user", "kernel"):
            entries = summary[kind][side]
            rows = [[str(i), e["function"], f"{e['share']:.1%}", f"{e['samples']:,}"]
                    for i, e in enumerate(entries, 1)]
            tables.append((f"{'User space' if side == 'user' else 'Kernel'}, {kind} ({what}; share of all "
                           "the server's samples)", ["#", "function", "share", "samples"], rows))
    return tables


def profile_chart(path, summary, title):
    """A PNG of two bar charts side by side: the top functions by self share
    in user space, and in the kernel, each side's total in its title."""
    if gnuplot_missing():
        return gnuplot_missing()
    if not summary["samples"]:
        return "no samples to plot"
    panels = []
    for side, total, colour in (("user", summary["user_share"], "0x3b6ea8"),
                                ("kernel", summary["kernel_share"], "0xd9822b")):
        top = summary["self"][side][:PROFILE_CHART_TOP]
        data = f"{path}.{side}.dat"
        with open(data, "w") as f:
            for i, e in enumerate(reversed(top)):  # the largest at the top
                label = e["function"] if len(e["function"]) <= 48 else e["function"][:45] + "..."
                label = label.replace("\\", "\\\\").replace('"', '\\"')
                f.write(f'{i} {e["share"] * 100:.3f} "{label}"\n')
        name = "user space" if side == "user" else "the kernel"
        panels.append(f"""
set title "{name}: {total:.1%} of the samples; its top functions" noenhanced
set yrange [-0.7:{max(len(top), 1) - 0.3}]
plot "{data}" using ($2/2):1:($2/2):(0.38):ytic(3) with boxxyerror linecolor rgb "{colour}", \\
     "{data}" using 2:1:(sprintf(" %.1f%%", $2)) with labels left font ",8"
""")
    script = f"""
set terminal pngcairo size 1800,{160 + 24 * PROFILE_CHART_TOP} font ",10"
set output "{path}"
set multiplot layout 1,2 title "{title.replace('"', "'")}: share of the server's CPU samples, the function running when sampled" noenhanced
set xlabel "% of all samples"
set style fill solid 0.8 border -1
set ytics noenhanced font ",9"
set xrange [0:*]
set offsets 0, graph 0.12, 0, 0
set grid xtics
set lmargin 50
unset key
""" + "".join(panels) + "unset multiplot\n"
    return run_gnuplot(script, *(f"{path}.{side}.dat" for side in ("user", "kernel")))


def profile(ctx, row, iterations, recordings_dir):
    """The row's iterations, each plain and then recorded; returns (the
    record: both sets of runs, their summaries, the overhead, the profile's
    summary and failures; the Profile)."""
    plain, recorded, failures = [], [], []
    prof = Profile()
    with Interrupted() as stop:  # SIGTERM or Ctrl-C: what was measured so far is the record
        record_iterations(ctx, row, iterations, recordings_dir, plain, recorded, failures, prof)
    interrupted = stop.reason
    summaries = {"plain": summarize(row, plain), "recorded": summarize(row, recorded)}
    overhead = {}
    for key in ("server_cpu_us", "rps"):
        a, b = summaries["plain"][key], summaries["recorded"][key]
        overhead[key] = b[0] / a[0] if a and b and a[0] else None
    if not prof.total and not failures and not interrupted:
        failures.append("perf recorded no sample of the server")
    record = {"row": row.id, "plain": plain, "recorded": recorded, "summaries": summaries, "overhead": overhead,
              "profile": prof.summary(), "failures": failures, "interrupted": interrupted}
    return record, prof


def record_iterations(ctx, row, iterations, recordings_dir, plain, recorded, failures, prof):
    """Each iteration plain and then recorded; fills the lists and prof as it goes."""
    for it in range(1, iterations + 1):
        for recording in (False, True):
            recorder = Recorder(ctx, os.path.join(recordings_dir, f"perf-{it}.data")) if recording else None
            rec = measure(ctx, row, window=recorder)
            rec["iteration"] = it
            if recorder:
                rec["profile_seconds"] = recorder.seconds
                if recorder.error and "failure" not in rec:
                    rec["failure"] = recorder.error
                if "failure" not in rec:
                    try:
                        prof.add(recorder.path, recorder.seconds, recorder.ticks)
                    except RuntimeError as e:
                        rec["failure"] = str(e)
                if os.path.exists(recorder.path):
                    os.unlink(recorder.path)
            (recorded if recording else plain).append(rec)
            label = "recorded" if recording else "plain"
            if "failure" in rec:
                failures.append(f"iteration {it} ({label}): {rec['failure']}")
                print(f"{row.id} iteration {it}, {label}: FAILED: {rec['failure']}", flush=True)
            else:
                print(f"{row.id} iteration {it}, {label}: {rec['rps'] / 1000:.1f}k req/s, server "
                      f"{fmt(rec.get('server_cpu_us'), '.2f')} µs/req, {rec['errors']} errors", flush=True)
            time.sleep(ctx.cool_down)
