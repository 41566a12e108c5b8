"""The memory row: RSS growth per idle keep-alive connection at several counts, held by forked holders."""
import argparse
import resource
import socket
import ssl
import time

from .constants import (
    HOLDERS_MIN,
    HOLDER_CONNECTIONS_MAX,
    HOLDER_FD_MARGIN,
    IDLE_CONNECTIONS_CAP,
    IDLE_OPEN_BUDGET_S,
    IDLE_OPEN_TIMEOUT_S,
    IP_BIND_ADDRESS_NO_PORT,
    MEMORY_SETTLE_S,
    SERVER_FD_MARGIN,
    STOP_WAIT_S,
)
from .processes import Running, read_response, rss_bytes
from .stopping import KILL_WAIT_S


# The memory row: RSS growth per idle keep-alive connection at several counts.
#
# The connections are held by HOLDERS, forked helper processes, each with its
# own 127.0.0.x source address, so that neither the harness nor any one
# holder needs more descriptors than its limit allows, nor more ephemeral
# ports than one source address has towards one destination.

def descriptor_limits():
    """The soft descriptor limit raised to the hard one (the started servers
    inherit it), and what bounds the memory row's largest count: the hard
    limit (`ulimit -Hn`), which root cannot raise past fs.nr_open, and may
    not be allowed to raise at all (it is not tried)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass
    with open("/proc/sys/fs/nr_open") as f:
        nr_open = int(f.read())
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = (int(x) for x in f.read().split())
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    hard = hard if hard != resource.RLIM_INFINITY else nr_open
    largest = min(soft, nr_open) - SERVER_FD_MARGIN
    return {"soft": soft, "hard": hard, "nr_open": nr_open, "ephemeral_ports": high - low + 1,
            "largest": max(0, min(largest, IDLE_CONNECTIONS_CAP)),
            "capped": largest > IDLE_CONNECTIONS_CAP}


def idle_counts(text):
    """--idle-connections: '0' (no memory row), or counts and 'max', comma-separated."""
    tokens = [t.strip() for t in text.split(",") if t.strip()]
    if tokens == ["0"]:
        return []
    counts = []
    for t in tokens:
        if t != "max" and not (t.isdigit() and int(t) >= 2):
            raise argparse.ArgumentTypeError(f"'{t}': a count of 2 or more, or 'max' (or 0 alone: no memory row)")
        counts.append(t if t == "max" else int(t))
    if not counts:
        raise argparse.ArgumentTypeError("no count given")
    return counts


def resolve_counts(counts, limits):
    """The counts as numbers, 'max' the largest the servers can hold, in
    increasing order; a count past that largest is an error (None, why)."""
    out = sorted({limits["largest"] if c == "max" else c for c in counts})
    if out and out[-1] > limits["largest"]:
        return None, (f"{out[-1]:,} idle connections is more than a server here can hold: the most is "
                      f"{limits['largest']:,}, " + largest_count_reason(limits))
    if out and out[0] < 2:
        return None, f"the most a server here can hold is {limits['largest']}, under 2: " + largest_count_reason(limits)
    return out, None


def largest_count_reason(limits):
    if limits["capped"]:
        return f"the row stops at {IDLE_CONNECTIONS_CAP:,} (IDLE_CONNECTIONS_CAP) though descriptors allow more"
    return (f"the descriptor limit a server inherits ({limits['soft']:,}; ulimit -Hn "
            f"{limits['hard']:,}, fs.nr_open {limits['nr_open']:,}) less {SERVER_FD_MARGIN} for the server's own "
            "descriptors")


def holder_plan(limits, count_max):
    """How many holders, on which source addresses: each under its descriptor
    limit and under one source address's ephemeral ports, and at least
    HOLDERS_MIN so that the spreading is always exercised."""
    per = max(1, min(HOLDER_CONNECTIONS_MAX, limits["soft"] - HOLDER_FD_MARGIN,
                     limits["ephemeral_ports"] - HOLDER_FD_MARGIN))
    n = max(HOLDERS_MIN, -(-count_max // per))
    assert n <= 253, f"{n} holders: more than 127.0.0.2-254 has addresses"
    return [f"127.0.0.{2 + i}" for i in range(n)], per


def open_idle(source, port, tls=None):
    """One keep-alive connection from `source`, one request answered on it;
    over HTTPS (`tls`: an ssl.SSLContext) after a full handshake."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # The port is picked at connect(), per destination, not at bind():
        # a bound source would otherwise hold a port for every destination.
        s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        s.bind((source, 0))
        s.settimeout(IDLE_OPEN_TIMEOUT_S)
        s.connect(("127.0.0.1", port))
        if tls is not None:
            s = tls.wrap_socket(s, server_hostname="127.0.0.1")
        s.sendall(b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _, _ = read_response(s, b"")
        if status != 200:
            raise OSError(f"status {status}")
    except BaseException:
        s.close()
        raise
    return s


def still_open(sock):
    """Whether the peer has neither closed nor reset this connection (a FIN reads as b"")."""
    sock.setblocking(False)
    try:
        # The TCP stream itself, under TLS too: a peek at ciphertext.
        return socket.socket.recv(sock, 1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def holder_main(pipe, source, ca=None):
    """A holder's loop: ("open", port, total) opens connections until it holds
    `total`; ("held",) counts those still open; ("close",) closes them all.
    `ca`: the run's CA, for an HTTPS server."""
    socks = []
    tls = ssl.create_default_context(cafile=ca) if ca else None
    while True:
        cmd = pipe.recv()
        if cmd[0] == "open":
            _, port, total = cmd
            try:
                while len(socks) < total:
                    socks.append(open_idle(source, port, tls))
                pipe.send(("ok", len(socks)))
            except (OSError, ValueError, IndexError, ssl.SSLError) as e:
                pipe.send(("error", f"from {source}, connection {len(socks) + 1}: {e or type(e).__name__}"))
        elif cmd[0] == "held":
            pipe.send(("ok", sum(still_open(s) for s in socks)))
        else:
            for s in socks:
                s.close()
            pipe.send(("ok", 0))
            return


class Holders:
    """The holder processes of one memory row, started for it and stopped after."""

    def __init__(self, sources, ca=None):
        import multiprocessing
        fork = multiprocessing.get_context("fork")
        self.pipes, self.procs = [], []
        for source in sources:
            mine, theirs = fork.Pipe()
            p = fork.Process(target=holder_main, args=(theirs, source, ca), daemon=True)
            p.start()
            theirs.close()
            self.pipes.append(mine)
            self.procs.append(p)

    def ask(self, commands, wait_s):
        """Sends each holder its command, then collects every answer."""
        for pipe, cmd in zip(self.pipes, commands):
            pipe.send(cmd)
        answers = []
        deadline = time.monotonic() + wait_s
        for pipe, proc in zip(self.pipes, self.procs):
            if not pipe.poll(max(0.0, deadline - time.monotonic())):
                raise OSError(f"a holder did not answer within {wait_s:g} s")
            kind, value = pipe.recv()
            if kind != "ok":
                raise OSError(value)
            answers.append(value)
        return answers

    def open_to(self, port, total):
        """Spreads `total` connections over the holders, as evenly as can be."""
        n = len(self.pipes)
        shares = [total // n + (i < total % n) for i in range(n)]
        self.ask([("open", port, s) for s in shares], IDLE_OPEN_TIMEOUT_S * 2 + total * IDLE_OPEN_BUDGET_S)

    def held(self):
        return sum(self.ask([("held",)] * len(self.pipes), IDLE_OPEN_TIMEOUT_S))

    def close(self):
        try:
            self.ask([("close",)] * len(self.pipes), IDLE_OPEN_TIMEOUT_S + 60)
        except (OSError, EOFError):
            pass
        for p in self.procs:
            p.join(timeout=STOP_WAIT_S)
            if p.is_alive():
                p.kill()
                p.join(timeout=KILL_WAIT_S)  # one stuck in the kernel is left behind, not waited for


def memory_per_connection(ctx, server, variant):
    """RSS growth per idle keep-alive connection at each of ctx.idle_counts,
    each connection having had one request answered, on one server process.

    RSS is read with one connection open, then with each count open; the
    growth is divided by the connections it covers: those still open at that
    reading (a server may have closed some, as ringhttp closes the oldest
    idle one when its table is full), less the one already open at the first.
    The slope is the growth from the previous reading divided by the
    connections held added since, so a figure that holds as the count grows
    shows as a slope equal to it."""
    extra = ("--connections-max", str(ctx.server_connections)) if server.name.startswith("ringhttp") else ()
    record = {"rss_before": None, "points": [], "sources": ctx.holder_sources,
              "holder_connections_max": ctx.holder_connections_max}
    running = Running(ctx, server, variant, extra)
    holders = Holders(ctx.holder_sources, ctx.certificates().ca if server.tls else None)
    try:
        holders.open_to(running.port, 1)
        time.sleep(MEMORY_SETTLE_S / 2)
        record["rss_before"] = prev_rss = rss_bytes(running.pid)
        prev_held = 1
        for count in ctx.idle_counts:
            holders.open_to(running.port, count)
            time.sleep(MEMORY_SETTLE_S)  # let the server finish whatever it does after answering
            rss = rss_bytes(running.pid)
            held = holders.held()
            if running.proc.poll() is not None:
                record["failure"] = f"the server died holding {count} connections"
                break
            if held < 2:
                record["failure"] = f"the server kept {held} of the {count} idle connections open"
                break
            record["points"].append({
                "requested": count, "connections": held, "rss_after": rss,
                "bytes_per_connection": (rss - record["rss_before"]) / (held - 1),
                "slope_bytes_per_connection": (rss - prev_rss) / (held - prev_held) if held > prev_held else None})
            prev_rss, prev_held = rss, held
    except (OSError, EOFError) as e:
        record["failure"] = f"opening {count if record['rss_before'] is not None else 1} connections: {e}"
    finally:
        holders.close()
        running.stop()
    return record


def memory_summary(m):
    """One line for the progress output."""
    parts = [f"{p['bytes_per_connection'] / 1024:.2f} KiB per idle connection at {p['connections']:,}"
             for p in m.get("points", [])]
    if "failure" in m:
        parts.append(f"memory row failed: {m['failure']}")
    return ", " + "; ".join(parts) if parts else ""
