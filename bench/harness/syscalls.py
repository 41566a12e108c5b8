"""System calls per request, each side's own count: ringhttp's server from its
/metrics at the measured window's two edges, the client from its report."""
import re
import time

from .processes import get_once

# ringhttp_syscalls_total{call="..."} N, one sample per call; the responses
# the same readings count, one sample per status.
SYSCALLS = re.compile(rb'^ringhttp_syscalls_total\{call="[a-z_]+"\} (\S+)$', re.M)
RESPONSES = re.compile(rb'^ringhttp_responses_total\{status="\d+"\} (\S+)$', re.M)
METRICS_WAIT_S = 2  # one reading of a loaded server's /metrics; past it the row has no figure


def metrics_totals(text):
    """(system calls, responses) summed over their samples, or None when
    the text has no system call samples (a server from before they were counted)."""
    calls = SYSCALLS.findall(text)
    if not calls:
        return None
    return sum(int(float(n)) for n in calls), sum(int(float(n)) for n in RESPONSES.findall(text))


class ServerSyscalls:
    """A ringhttp server's system calls over a measured window (runs.at_edges
    calls begin and end) ÷ the responses it counted between the same two
    readings: both from one /metrics answer each, so the two edges are the
    same for both counts. The readings' own two requests are in the window:
    a few system calls among millions."""

    def __init__(self, port, tls=None):
        self.port = port
        self.tls = tls  # an ssl.SSLContext for an HTTPS server
        self.before = None
        self.per_request = None

    def read(self):
        answer = get_once(self.port, "/metrics", time.monotonic() + METRICS_WAIT_S, self.tls)
        return metrics_totals(answer[1]) if answer and answer[0] == 200 else None

    def begin(self):
        self.before = self.read()

    def end(self):
        after = self.read()
        if self.before and after and after[1] > self.before[1]:
            self.per_request = (after[0] - self.before[0]) / (after[1] - self.before[1])


def client_syscalls(report):
    """The client's own system calls per request over its measured window,
    from its report; None when it does not count them (another client binary)."""
    return (report.get("syscalls") or {}).get("per_request")
