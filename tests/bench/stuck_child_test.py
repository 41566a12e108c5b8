#!/usr/bin/env python3
"""A child that will not stop holds neither the harness nor the server.

- SIGTERM while a perf that ignores SIGTERM and SIGINT records a --profile
  run, its grandchild holding perf's stderr pipe open (fake_perf.py, first
  on PATH): the harness exits 130 within EXIT_WAIT_S, and perf, its
  grandchild, the client and the server are all gone;
- an interrupt raised inside a generator's Popen.poll() just after it took
  its lock (the lock is left held, and a plain wait() then blocks for
  good): run_bounded passes the interrupt on within BOUND_S and the
  generator is gone;
- a generator past its timeout whose grandchild holds its stdout pipe:
  run_bounded returns within BOUND_S and the grandchild is gone.

Usage: stuck_child_test.py --build DIR    (meson test runs it)
"""
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observe  # noqa: E402

sys.path.insert(0, os.path.join(observe.ROOT, "bench"))
from harness.processes import run_bounded  # noqa: E402

BENCH_WAIT_S = 120  # the harness reaching the recorded run, on a busy two-core machine
# The harness's exit after SIGTERM: perf's SIGTERM grace and SIGKILL wait
# (5 s each at most), then the client's and the server's stops, with room.
EXIT_WAIT_S = 40
GONE_WAIT_S = 10  # a stopped process is gone by then
BOUND_S = 15      # run_bounded's stop of a stuck child: its SIGTERM grace and SIGKILL wait, with room
LIFE_S = 60       # the stuck children's own life: one left over is still there after every bound
TIMEOUT_S = 0.5   # the generator's own timeout, long past its start
DURATION_S = 4    # the profile's recording is this less half a second: time to send SIGTERM inside it
INTERRUPTED = 130


def left_over(pids):
    """The pids still running after GONE_WAIT_S, each with its command line;
    they are killed, so a failure leaves nothing behind."""
    deadline = time.monotonic() + GONE_WAIT_S
    while time.monotonic() < deadline and any(observe.alive(p) for p in pids):
        time.sleep(observe.POLL_S)
    left = [p for p in pids if observe.alive(p)]
    named = [f"{p} ({' '.join(observe.cmdline(p))[:80]})" for p in left]
    for p in left:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return named


def stuck_perf(build):
    name = "SIGTERM mid-profile, perf stuck"
    with tempfile.TemporaryDirectory(prefix="ringhttp-bench-stuck.") as out_dir, \
            tempfile.TemporaryDirectory(prefix="ringhttp-bench-fake-perf.") as path_dir:
        os.symlink(os.path.join(observe.HERE, "fake_perf.py"), os.path.join(path_dir, "perf"))
        failures = profile_stopped(build, out_dir, path_dir)
    print(("ok" if not failures else "FAIL") + f"    {name}: exit {INTERRUPTED} within {EXIT_WAIT_S} s of SIGTERM, "
          "perf, its grandchild, the client and the server gone")
    return [f"{name}: {f}" for f in failures]


def profile_stopped(build, out_dir, path_dir):
    """A --profile run with path_dir first on PATH, SIGTERM once its perf's
    grandchild has started; its failures."""
    env = dict(os.environ, PATH=path_dir + os.pathsep + os.environ.get("PATH", ""))
    proc = observe.start_bench(build, out_dir, "--profile", "ringhttp/plaintext", "--iterations", "1",
                               "--warmup", "1", "--duration", str(DURATION_S), "--connections", "4",
                               "--cool-down", "0", env=env)

    def recording():
        d = observe.descendants(proc.pid)
        perf = [p for p in d if "record" in observe.cmdline(p) and "-p" in observe.cmdline(p)]
        grandchild = observe.children(perf[0]) if perf else []  # started, maybe since d was read
        return d | set(grandchild) if grandchild else None
    try:
        started = observe.eventually(recording, BENCH_WAIT_S, "the fake perf and its grandchild")
    except AssertionError as e:
        proc.kill()
        proc.communicate()
        return [str(e)]
    failures = []
    server_exe = os.path.realpath(os.path.join(build, "server", "server"))
    if not any(observe.exe(p) == server_exe for p in started):
        failures.append("no server among the harness's processes")
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        failures.append(f"the harness did not exit within {EXIT_WAIT_S} s of SIGTERM")
    print(f"        the harness exited {time.monotonic() - sent:.1f} s after SIGTERM")
    if proc.returncode != INTERRUPTED:
        failures.append(f"the harness exited {proc.returncode}, not {INTERRUPTED}")
    left = left_over(started)
    if left:
        failures.append(f"still running after the harness exited: {left}")
    prof = (observe.results(out_dir, "profile") or {}).get("profile", {})
    if prof.get("interrupted") != "SIGTERM":
        failures.append(f"the results say interrupted={prof.get('interrupted')!r}, not SIGTERM")
    return failures


def run_bounded_check(name, argv, timeout_s, beside, pids, wanted, what):
    """run_bounded(argv, timeout_s, beside) in a thread: failures if it is
    still running after BOUND_S, if what it returned or raised is not
    wanted(it) (`what` says what is), or if one of pids (beside notes them)
    is still running."""
    out = {}

    def body():
        try:
            out["value"] = run_bounded(argv, timeout_s, beside)
        except BaseException as e:  # the interrupt it passes on is what is checked
            out["value"] = e
    t = threading.Thread(target=body, daemon=True)  # one that hangs for good does not hold the test
    t.start()
    t.join(BOUND_S)
    failures = []
    if t.is_alive():
        failures.append(f"{name}: run_bounded still running after {BOUND_S} s")
    elif not wanted(out["value"]):
        failures.append(f"{name}: run_bounded gave {out['value']!r}, not {what}")
    left = left_over(pids)
    if left:
        failures.append(f"{name}: still running: {left}")
    return failures


def interrupted_poll(_build):
    name = "an interrupt inside a generator's poll()"
    pids = []

    def interrupt_in_poll(proc):
        pids.append(proc.pid)
        lock = getattr(proc, "_waitpid_lock", None)
        if lock is None:
            raise RuntimeError("this Python's Popen has no _waitpid_lock: the check must follow it")
        lock.acquire()  # where a signal that came during poll() leaves it
        raise KeyboardInterrupt("SIGTERM")
    failures = run_bounded_check(name, ["sleep", str(LIFE_S)], LIFE_S, interrupt_in_poll, pids,
                                 lambda v: isinstance(v, KeyboardInterrupt), "the interrupt")
    print(("ok" if not failures else "FAIL") + f"    {name}: passed on, the generator gone")
    return failures


def grandchild_pipe(_build):
    name = "a generator past its timeout, its grandchild holding its stdout"
    pids = []

    def note_grandchild(proc):
        pids.extend(observe.eventually(lambda: observe.children(proc.pid), BOUND_S, "the grandchild"))
    # The shell's background sleep is the grandchild; the shell becomes the other.
    argv = ["sh", "-c", f"sleep {LIFE_S} & exec sleep {LIFE_S}"]
    failures = run_bounded_check(name, argv, TIMEOUT_S, note_grandchild, pids,
                                 lambda v: isinstance(v, tuple) and v[0] is None, "a timeout")
    print(("ok" if not failures else "FAIL") + f"    {name}: a timeout, the grandchild gone")
    return failures


if __name__ == "__main__":
    sys.exit(observe.run_checks(interrupted_poll, grandchild_pipe, stuck_perf))
