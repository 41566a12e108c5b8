"""Tables (terminal and markdown), the memory tables and notes, the chart."""
import os
import shutil
import subprocess

from .memory import largest_count_reason
from .constants import TLS_HANDSHAKE_SERVER_CPU_RATIO, TLS_SERVER_CPU_RATIO
from .summary import fmt, ratio_base, with_range

# A chart draws in well under a second; past this, gnuplot is stuck, and the
# report (an interrupted run's too) is written without its chart.
GNUPLOT_WAIT_S = 60


def table_rows(rows, summaries, instances, database=False):
    """The results table's rows; with database=True a last column, the
    Postgres processes' CPU per request (rows without a database: —)."""
    out = []
    for row in rows:
        s = summaries[row.id]
        base = summaries.get(ratio_base(row, summaries) or "")
        ratio = None
        if base and s["server_cpu_us"] and base["server_cpu_us"]:
            ratio = s["server_cpu_us"][0] / base["server_cpu_us"][0]
        s["ratio"] = ratio
        s["ratio_base"] = base["row"] if base else None
        inst = instances.get(row.instance, {})
        cpu = s["server_cpu_us"]
        rps = s["rps"] and tuple(v / 1000 for v in s["rps"])
        out.append([
            row.id + ("  FAILED" if s["failures"] else ""),
            with_range(rps, ".1f"),
            with_range(cpu, ".2f"),
            fmt(ratio, ".2f", "—"),
            fmt(s["server_syscalls_per_request"] and s["server_syscalls_per_request"][0], ".3f", "—"),
            fmt(s["client_cpu_us"] and s["client_cpu_us"][0], ".2f"),
            fmt(s["client_syscalls_per_request"] and s["client_syscalls_per_request"][0], ".3f", "—"),
            fmt(s["p50_ms"] and s["p50_ms"][0], ".2f"),
            fmt(s["p99_ms"] and s["p99_ms"][0], ".2f"),
            fmt(s["p999_ms"] and s["p999_ms"][0], ".2f"),
            fmt(inst.get("cold_start_ms"), ".1f"),
            fmt(s["rss_bytes"] and s["rss_bytes"][0] / 2**20, ".1f"),
            str(s["errors"]),
        ] + ([fmt(s["database_cpu_us"] and s["database_cpu_us"][0], ".2f", "—")] if database else []))
    return out


HEADER = ["row", "req/s (k)", "server CPU µs/req", "÷ base", "server syscalls/req", "client CPU µs/req",
          "client syscalls/req", "p50 ms", "p99 ms", "p99.9 ms", "cold start ms", "RSS MiB", "errors"]
DATABASE_COLUMN = "database CPU µs/req"  # only when a row of the run has a database


CONNECTION_HEADER = ["row", "TLS (server's log)", "req/s (k)", "new connections/s", "full/s", "resumed/s", "client CPU µs/conn",
                     "server CPU µs/conn", "counted by", "server's log: connections, resumed"]


def connection_table(rows, summaries):
    """The rows over TLS or with a new connection per request: the window's
    new connections (TLS handshakes: full and resumed) a second and the CPU
    per connection of each side (its CPU over the window ÷ the connections
    made in it), and the server's own log of the whole run where it keeps one."""
    body = []
    for row in rows:
        s = summaries[row.id]
        if not row.server.tls and not row.workload.requests_per_connection:
            continue
        log = s.get("server_connection_log")
        tls = "—"
        if row.server.tls:
            # As the server's log has it (the same for every generator), the most common first.
            kinds = list((log or {}).get("negotiated", {}))
            tls = (kinds[0] + (f" (+{len(kinds) - 1} other)" if len(kinds) > 1 else "")) if kinds else "n/a"
        per_connection = row.workload.requests_per_connection > 0  # else a few connections carry the whole run
        rps = s["rps"] and tuple(v / 1000 for v in s["rps"])
        body.append([
            row.id + ("  FAILED" if s["failures"] else ""), tls, with_range(rps, ".1f"),
            with_range(s.get("handshakes_per_s"), ",.0f") if s.get("handshakes_per_s") else "0",
            fmt(s.get("full_handshakes_per_s") and s["full_handshakes_per_s"][0], ",.0f", "—")
            if row.server.tls else "—",
            fmt(s.get("resumed_handshakes_per_s") and s["resumed_handshakes_per_s"][0], ",.0f", "—")
            if row.server.tls else "—",
            with_range(s.get("client_cpu_us_per_handshake"), ".1f")
            if per_connection and s.get("client_cpu_us_per_handshake") else "—",
            with_range(s.get("server_cpu_us_per_handshake"), ".1f")
            if per_connection and s.get("server_cpu_us_per_handshake") else "—",
            s.get("connections_counted_by") or "—",
            f"{log['connections']:,}, {log['resumed']:,} resumed ({log['resumed'] / log['connections']:.1%})"
            if log and log["connections"] else "—",
        ])
    return CONNECTION_HEADER, body


CONNECTIONS_TITLE = "## Connections: TLS, and a new connection per request"


def connection_notes(rows, summaries):
    """How the connection table is counted, and what TLS adds to each load:
    a TLS row against the same load over plain HTTP in the same run."""
    notes = [
        "New connections/s: the measured window's connections made ÷ its seconds; over HTTPS each is a TLS "
        "handshake, full or resumed, as ringhttp's client's report counts them, or for wrk (which does not say) as "
        "the server's log has them for the measured run (a fresh wrk process: its connections' first handshakes "
        "are full). CPU µs/conn, on the rows with a connection per request: that side's CPU over the window ÷ those "
        "connections, the request each carried included. The server's log: every connection nginx-tls (or "
        "nginx-h2) logged over the row's runs (warm-up and the harness's start-up check included), and the sessions "
        "it resumed."]
    ids = {r.id for r in rows}
    for row in rows:
        # Each TLS row driven by ringhttp's client beside the same load over
        # plain HTTP (its server's name without -tls), where that row ran.
        if not row.server.tls or row.generator != "client" or row.client or not row.server.name.endswith("-tls"):
            continue
        tls_row = row.id
        plain_row = row.id.replace(row.server.name, row.server.name[:-len("-tls")], 1)
        if plain_row not in ids:
            continue
        t, p = summaries[tls_row], summaries[plain_row]
        parts = []
        for side, key in (("server", "server_cpu_us"), ("client", "client_cpu_us")):
            if t[key] and p[key]:
                parts.append(f"the {side}'s {t[key][0]:.2f} µs against {p[key][0]:.2f} ({t[key][0] - p[key][0]:+.2f} "
                             f"µs, {t[key][0] / p[key][0]:.2f}×)")
        if parts:
            per = "connection" if row.workload.requests_per_connection else "request"
            notes.append(f"What TLS adds per {per} ({tls_row} against {plain_row}, ringhttp's client, CPU µs per "
                         f"request): " + "; ".join(parts) + ".")
    notes += tls_server_comparison(ids, summaries)
    return notes


def tls_server_comparison(ids, summaries):
    """ringhttp-tls's server CPU per request ÷ nginx-tls's on the same load,
    the same client, with the goal each has (summary.TLS_TARGETS): kept
    alive, with a handshake per request (resumed as the client resumes
    them: the share of each is given where the client counted it), and
    with a full handshake per request (the goal's row)."""
    figures = []
    for workload, goal in (("plaintext", TLS_SERVER_CPU_RATIO), ("json", None), ("handshake", None),
                           ("handshake-full", TLS_HANDSHAKE_SERVER_CPU_RATIO)):
        ours, theirs = f"ringhttp-tls/{workload}", f"nginx-tls/{workload}"
        if ours not in ids or theirs not in ids:
            continue
        o, n = summaries[ours]["server_cpu_us"], summaries[theirs]["server_cpu_us"]
        if not o or not n:
            continue
        text = f"{workload} {o[0]:.2f} µs against {n[0]:.2f} ({o[0] / n[0]:.2f}×" + (
            f", goal ≤ {goal:.2f}×" if goal else "")
        shares = [summaries[r].get("resumed_share") for r in (ours, theirs)]
        if workload == "handshake" and all(shares):
            text += f"; sessions resumed {shares[0][0]:.1%} and {shares[1][0]:.1%}"
        figures.append(text + ")")
    if not figures:
        return []
    return ["ringhttp-tls server CPU per request ÷ nginx-tls's (ringhttp's client, medians): " + "; ".join(figures)
            + "."]


def text_table(header, body):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    lines = ["  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def md_table(header, body):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def memory_table(instances):
    """Each server's readings: one connection, then each count."""
    body = []
    for name, inst in instances.items():
        m = inst.get("memory")
        if not m:
            continue
        if m.get("rss_before") is not None:
            body.append([name, "1", f"{m['rss_before'] / 2**20:.1f}", "", ""])
        for p in m.get("points", []):
            held = f"{p['connections']:,}" + ("" if p["connections"] == p["requested"] else
                                              f" of {p['requested']:,} opened")
            body.append([name, held, f"{p['rss_after'] / 2**20:.1f}", f"{p['bytes_per_connection'] / 1024:.2f}",
                         fmt(p["slope_bytes_per_connection"] and p["slope_bytes_per_connection"] / 1024, ".2f")])
        if "failure" in m:
            body.append([name, "FAILED", m["failure"], "", ""])
    return ["server", "idle connections held", "RSS MiB", "KiB per connection",
            "KiB per added connection (slope)"], body


def memory_side_by_side(instances, counts):
    """Per count, each server's KiB per connection and slope beside it."""
    names = [n for n, inst in instances.items() if inst.get("memory")]
    header = ["idle connections"]
    for n in names:
        header += [f"{n} KiB/conn", f"{n} slope"]
    body = []
    for count in counts:
        row = [f"{count:,}"]
        for n in names:
            m = instances[n]["memory"]
            p = next((p for p in m.get("points", []) if p["requested"] == count), None)
            if p is None:
                row += ["failed" if "failure" in m else "—", ""]
                continue
            held = "" if p["connections"] == count else f" (held {p['connections']:,})"
            row += [f"{p['bytes_per_connection'] / 1024:.2f}{held}",
                    fmt(p["slope_bytes_per_connection"] and p["slope_bytes_per_connection"] / 1024, ".2f")]
        body.append(row)
    return header, body


def memory_notes(ctx, instances):
    limits = ctx.fd_limits
    notes = [f"Memory row: RSS growth from one idle keep-alive connection open to each count (one request answered "
             f"on each) ÷ the connections the server still held at that reading, less the first; slope: the "
             f"growth since the previous reading ÷ the connections added since (the first count's is from the one "
             f"connection). A figure that holds as the count grows has a slope equal to it. Largest count "
             f"{limits['largest']:,}: {largest_count_reason(limits)}. The connections come from "
             f"{len(ctx.holder_sources)} holder processes on {ctx.holder_sources[0]}–{ctx.holder_sources[-1]}, "
             f"at most {ctx.holder_connections_max:,} each."]
    for name, inst in instances.items():
        points = [p for p in inst.get("memory", {}).get("points", []) if p["slope_bytes_per_connection"]]
        if points:
            slope = points[-1]["slope_bytes_per_connection"]
            notes.append(f"{name} at its last slope ({slope / 1024:.2f} KiB): 100,000 idle connections would add "
                         f"{slope * 1e5 / 2**20:,.0f} MiB, 1,000,000 {slope * 1e6 / 2**30:,.1f} GiB.")
    return notes


def gnuplot_missing():
    """Why no chart can be drawn here, or None."""
    return None if shutil.which("gnuplot") else "gnuplot is not installed (Debian: gnuplot-nox)"


def run_gnuplot(script, *data_files):
    """Draws `script`, then removes its data files: None, or why it failed."""
    try:
        r = subprocess.run(["gnuplot"], input=script, text=True, capture_output=True, timeout=GNUPLOT_WAIT_S)
    except subprocess.TimeoutExpired:
        return f"gnuplot did not finish within {GNUPLOT_WAIT_S} s"
    finally:
        for path in data_files:
            os.unlink(path)
    return None if r.returncode == 0 else f"gnuplot failed: {r.stderr.strip()[-200:]}"


CHART_COLOURS = {"ours": "0x3b6ea8", "control": "0x9a9a9a", "peer": "0xd9822b", "custom": "0x6aa84f"}


def chart(path, rows, summaries):
    if gnuplot_missing():
        return gnuplot_missing()
    data = path + ".dat"
    n = 0
    with open(data, "w") as f:
        for row in rows:
            cpu = summaries[row.id]["server_cpu_us"]
            if cpu:
                colour = CHART_COLOURS[row.server.kind]
                f.write(f'"{row.id}" {cpu[0]:.4f} {cpu[1]:.4f} {cpu[2]:.4f} {colour}\n')
                n += 1
    if not n:
        return "no row has a figure to plot"
    script = f"""
set terminal pngcairo size {max(900, 60 * n + 200)},640 font ",10"
set output "{path}"
set title "server CPU µs per request, median with min–max (blue: ringhttp, grey: floor controls, orange: peers)"
set ylabel "µs per request"
set style fill solid 0.7 border -1
set boxwidth 0.75
set xtics rotate by -40 left noenhanced
set yrange [0:*]
set xrange [-0.6:{n - 0.4}]
set grid ytics
set bmargin 11
unset key
plot "{data}" using 0:2:5:xtic(1) with boxes linecolor rgb variable, \\
     "{data}" using 0:2:3:4 with yerrorbars linecolor rgb "black" pointtype -1, \\
     "{data}" using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.8 font ",8"
"""
    return run_gnuplot(script, data)
