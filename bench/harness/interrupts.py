"""SIGTERM and Ctrl-C: the run stops where it is, stops what it started and
writes what it measured.

SIGTERM is made to raise KeyboardInterrupt as Ctrl-C does, so one guard,
Interrupted, catches both wherever a mode measures. Further signals are
held off from the first one on, so that stopping and writing are not cut
short: a second signal must not land between a child's kill and its wait,
nor skip the stop of the server.
"""
import signal

from .database import Database
from .processes import Running

INTERRUPTED = 130  # the exit status of a run stopped by SIGTERM or Ctrl-C (128 + SIGINT, as a shell says)


def raise_interrupt(signum, _frame):
    """SIGTERM as Ctrl-C is: the run stops where it is and writes what it
    measured, and no later signal cuts that short."""
    hold_signals()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def sigterm_as_ctrl_c():
    signal.signal(signal.SIGTERM, raise_interrupt)
    # Ctrl-C too, so that it holds off later signals as SIGTERM does; not
    # where SIGINT was ignored when Python started (a background job's).
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, raise_interrupt)


def hold_signals():
    """After SIGTERM or Ctrl-C has stopped a run: stopping what it started and
    writing what it measured are not cut short by another."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)


class Interrupted:
    """with Interrupted() as stop: the block ends at SIGTERM or Ctrl-C, which
    goes no further; stop.reason is then the signal's name ("SIGINT" for a
    bare KeyboardInterrupt), None while none came. Other exceptions pass."""

    def __init__(self):
        self.reason = None

    def __enter__(self):
        return self

    def __exit__(self, kind, e, _tb):
        if kind is None or not issubclass(kind, KeyboardInterrupt):
            return False
        hold_signals()
        self.reason = str(e) or "SIGINT"
        return True


def stop_processes():
    """Every server, generator and database the harness started, the servers
    first (a database outlives the servers using it)."""
    for running in list(Running.live):
        running.stop()
    for db in list(Database.live):
        db.stop()
