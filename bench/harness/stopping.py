"""Stopping a child process within a bound, whatever the child does.

A child may ignore SIGTERM, die slowly on a loaded machine, or leave a
grandchild that holds its pipes open; none of that may hold the harness,
and above all not on the way out of an interrupted run, where the server
is still to be stopped.

The waits here reap the child with os.waitpid themselves rather than by
Popen.wait(): Popen.poll() and wait() take a lock that a KeyboardInterrupt
raised by the SIGTERM handler just after the lock is taken leaves held for
good (a few times in 5,000 signals sent to a loop of poll(), on Python
3.11), and every later wait() on that process then blocks forever.
"""
import os
import signal
import subprocess
import time

from .constants import STOP_WAIT_S

# After SIGKILL: a child not reaped by then is stuck in the kernel (an
# uninterruptible wait), and the harness goes on without it rather than hang.
KILL_WAIT_S = 5
# Reading what a stopped child wrote: a grandchild outside its group can
# hold the pipes open for as long as it lives.
DRAIN_WAIT_S = 2
REAP_POLL_S = 0.01  # how often a bounded wait looks again


def send(proc, sig, group):
    """sig to proc, or with group to its whole process group (a child
    started with process_group=0 leads its own); nothing if none is left."""
    try:
        if group:
            os.killpg(proc.pid, sig)
        elif proc.returncode is None:  # a reaped child's pid may be another process's by now
            os.kill(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reaped(proc, wait_s):
    """Waits up to wait_s for proc to exit; True once it has been reaped,
    proc.returncode then saying how it ended (negative: a signal)."""
    deadline = time.monotonic() + wait_s
    while proc.returncode is None:
        try:
            pid, status = os.waitpid(proc.pid, os.WNOHANG)
        except ChildProcessError:
            # Popen reaped it and was interrupted before it kept the status:
            # the child is gone, its status lost; Popen says 0 here too.
            proc.returncode = 0
            break
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            break
        if time.monotonic() >= deadline:
            return False
        time.sleep(REAP_POLL_S)
    return True


def stop_child(proc, group=False, grace_s=STOP_WAIT_S):
    """SIGTERM, up to grace_s for the child to exit, then SIGKILL and up to
    KILL_WAIT_S more. With group, each signal goes to the child's whole
    process group, and a last SIGKILL to whatever of it outlived the child
    (a grandchild that ignores SIGTERM). Never raises for a child already
    gone; returns its exit status, None if it could not be reaped."""
    if not reaped(proc, 0):
        send(proc, signal.SIGTERM, group)
        if not reaped(proc, grace_s):
            send(proc, signal.SIGKILL, group)
            reaped(proc, KILL_WAIT_S)
    if group:
        send(proc, signal.SIGKILL, group)
    return proc.returncode


def drain(proc):
    """(stdout, stderr) of a stopped child, as bytes, read for at most
    DRAIN_WAIT_S: what was read by then if a grandchild holds a pipe."""
    try:
        out, err = proc.communicate(timeout=DRAIN_WAIT_S)
    except subprocess.TimeoutExpired as e:
        out, err = e.output, e.stderr
        close_pipes(proc)
    return out or b"", err or b""


def close_pipes(proc):
    """The harness's ends of a child's pipes, whose output is not wanted."""
    for f in (proc.stdin, proc.stdout, proc.stderr):
        if f:
            f.close()
