"""Summaries: medians and ranges over iterations, ratios to each row's base, the ladder, the targets."""
import collections
import dataclasses
import statistics

from .constants import (H2_CLIENT_CPU_RATIO, OPEN_CLIENT_CPU_RATIO, OPEN_RATE_TOLERANCE, TLS_CLIENT_CPU_RATIO,
                        TLS_HANDSHAKE_SERVER_CPU_RATIO, TLS_SERVER_CPU_RATIO, URING_FLOOR_PIPELINED_RATIO,
                        URING_FLOOR_RATIO)
from .workloads import LADDER, SEEDS_LADDER
from .rows import PEER_GENERATORS, axis_base, axis_rows


# Summaries, tables, chart.

def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def summarize(row, runs):
    ok = [r for r in runs if "failure" not in r]
    s = {"row": row.id, "server": row.server.name, "workload": row.workload.name, "generator": row.generator,
         "client": row.client or None,
         "variant": row.variant.name if row.variant else None, "axis": row.axis, "kind": row.server.kind,
         "iterations": len(runs), "failures": [r["failure"] for r in runs if "failure" in r],
         "errors": sum(r.get("errors", 0) for r in runs),
         "requested_rps": next((r["requested_rps"] for r in runs if r.get("requested_rps")), None)}
    for key in ("rps", "server_cpu_us", "client_cpu_us", "p50_ms", "p99_ms", "p999_ms", "rss_bytes", "bytes_per_s",
                "database_cpu_us", "p99_uncorrected_ms", "server_syscalls_per_request",
                "client_syscalls_per_request") + CONNECTION_FIGURES:
        s[key] = spread([r.get(key) for r in ok])
    # What the TLS rows negotiated and who counted their connections: the
    # same in every run, else each value once.
    for key in ("tls_protocol", "tls_cipher", "connections_counted_by"):
        values = list(dict.fromkeys(r[key] for r in ok if r.get(key)))
        s[key] = "/".join(values) or None
    log = [r["server_connection_log"] for r in ok if r.get("server_connection_log")]
    if log:
        negotiated = collections.Counter()
        for x in log:
            negotiated.update(x["negotiated"])
        s["server_connection_log"] = {"connections": sum(x["connections"] for x in log),
                                      "resumed": sum(x["resumed"] for x in log),
                                      "negotiated": dict(negotiated.most_common())}
    return s


# A run's connection figures (tls.handshake_figures): rows with a TLS server
# or a new connection per request.
CONNECTION_FIGURES = ("handshakes_per_s", "full_handshakes_per_s", "resumed_handshakes_per_s", "resumed_share",
                      "client_cpu_us_per_handshake", "server_cpu_us_per_handshake")


def ratio_base(row, summaries):
    """The row a row is divided by: the default variant on an axis, else the io_uring floor."""
    if row.axis:
        if row.server.name != "ringhttp":
            return f"{row.server.name}/{row.workload.name}"  # a floor's variant: the floor as it starts
        base_variant = axis_base(row.axis).name
        return f"ringhttp:{base_variant}/{row.workload.name}"
    if row.workload.ladder:
        return "ringhttp/json"  # each rung's price is its difference from json
    if row.workload.name in ("plaintext", "json"):
        return "floor-uring/plaintext"
    if row.workload.name == "pipelined":
        return "floor-uring/pipelined"
    if row.workload.name == "pipelined-open":
        return "floor-uring/pipelined-open"
    return None


def generator_comparison(rows, summaries):
    """ringhttp's client against wrk or h2load on the same server and
    workload, same run; and against each other client binary (--also-client)."""
    lines = []
    for row in rows:
        if row.client:
            lines += client_comparison(row, summaries)
        lines += client_variant_comparison(row, summaries)
        if row.generator not in PEER_GENERATORS:
            continue
        peer = row.generator
        ours = summaries.get(row.id[:-len("/" + peer)])
        theirs = summaries[row.id]
        if not ours or not ours["client_cpu_us"] or not theirs["client_cpu_us"] or not theirs["rps"]:
            continue
        lines.append(f"Generators on {ours['row']}: ringhttp's client {ours['client_cpu_us'][0]:.2f} µs/req of its "
                     f"own CPU, {peer} {theirs['client_cpu_us'][0]:.2f} "
                     f"({ours['client_cpu_us'][0] / theirs['client_cpu_us'][0]:.2f}×); req/s "
                     f"{ours['rps'][0] / theirs['rps'][0]:.2f}× {peer}'s.")
    return lines


def client_variant_comparison(row, summaries):
    """A variant that changes the client (--compare backend's client-epoll)
    against its axis's base on the same workload, the same run: the
    client's own CPU and system calls per request."""
    if not row.variant or not row.variant.client_args:
        return []
    base = summaries.get(ratio_base(row, summaries) or "")
    ours = summaries[row.id]
    if not base or not ours["client_cpu_us"] or not base["client_cpu_us"]:
        return []
    line = (f"Client on {row.id} ({' '.join(row.variant.client_args)}) against {base['row']}: its own CPU "
            f"{with_range(ours['client_cpu_us'], '.3f')} µs/req against {with_range(base['client_cpu_us'], '.3f')} "
            f"({ours['client_cpu_us'][0] / base['client_cpu_us'][0]:.3f}×)")
    if ours["client_syscalls_per_request"] and base["client_syscalls_per_request"]:
        line += (f"; system calls {with_range(ours['client_syscalls_per_request'], '.3f')} per request against "
                 f"{with_range(base['client_syscalls_per_request'], '.3f')}")
    if ours["rps"] and base["rps"]:
        line += f"; req/s {ours['rps'][0] / base['rps'][0]:.3f}×"
    return [line + " (medians, [min–max])."]


def client_comparison(row, summaries):
    """The build's client against another client binary (row.client) on the
    same row, the same run: each one's own CPU and the server's per request."""
    ours = summaries.get(row.id[:-len("/" + row.client)])
    other = summaries[row.id]
    if not ours or not ours["client_cpu_us"] or not other["client_cpu_us"]:
        return []
    line = (f"Clients on {ours['row']}: this build's client {with_range(ours['client_cpu_us'], '.3f')} µs/req of "
            f"its own CPU against {row.client}'s {with_range(other['client_cpu_us'], '.3f')} "
            f"({ours['client_cpu_us'][0] / other['client_cpu_us'][0]:.3f}×)")
    if ours["server_cpu_us"] and other["server_cpu_us"]:
        line += (f"; the server's {ours['server_cpu_us'][0]:.3f} against {other['server_cpu_us'][0]:.3f} µs/req "
                 f"({ours['server_cpu_us'][0] / other['server_cpu_us'][0]:.3f}×)")
    if ours["rps"] and other["rps"]:
        line += f"; req/s {ours['rps'][0] / other['rps'][0]:.3f}×"
    return [line + " (medians, [min–max])."]


def ladder_table(summaries):
    """The seeds' ladder on ringhttp: each rung's server CPU µs/req, its
    difference from json measured in the same run, and the goal it has."""
    base = summaries.get("ringhttp/json")
    base_cpu = base and base["server_cpu_us"] and base["server_cpu_us"][0]
    body, verdicts = [], []
    for name, goal in LADDER:
        s = summaries.get(f"ringhttp/{name}")
        if not s or not s["server_cpu_us"]:
            continue
        cpu = s["server_cpu_us"][0]
        delta = cpu - base_cpu if base_cpu else None
        ratio = cpu / base_cpu if base_cpu else None
        goal_text, verdict = "—", ""
        if goal and base_cpu:
            kind, limit = goal
            met = ratio <= limit if kind == "ratio" else delta <= limit
            goal_text = f"≤ {limit:.2f}× json" if kind == "ratio" else f"≤ json + {limit:.1f} µs"
            verdict = "met" if met else "NOT MET"
            verdicts.append(f"{name}: {verdict} ({goal_text}; measured {ratio:.3f}×, {delta:+.2f} µs)")
        body.append([name, with_range(s["server_cpu_us"], ".2f"), fmt(delta, "+.2f", "—"), fmt(ratio, ".3f", "—"),
                     goal_text, verdict, SEEDS_LADDER.get(name, "—")])
    return body, verdicts


@dataclasses.dataclass(frozen=True)
class Target:
    """A goal one row's median is held to against another row's median in
    the same run: ratio (figure ≥ limit × the reference's) or plus (figure
    ≤ the reference's + limit)."""
    row: str
    figure: str        # the summaries' key: rps or server_cpu_us
    reference: str     # the row it is held to
    kind: str          # ratio | plus
    limit: float
    what: str          # the figure, as the line names it
    control: bool = False  # the reference is a control row: added to a run that has the target's row
    # Rows the reference is the best of (the lowest median of the figure
    # among those that ran; `reference` is then their name in the line).
    candidates: tuple = ()


# Issue 16's targets for ringhttp's database rows, judged within one run:
# reads at 0.8x of pgbench's rate over the same database connections and at
# most 3 µs of server CPU more than json; writes at 0.8x pgbench's insert rate.
# Their references are control rows, added to a run that selects the row.
DATABASE_TARGETS = [
    Target("ringhttp/database-read", "rps", "pgbench/database-read", "ratio", 0.8, "req/s", control=True),
    Target("ringhttp/database-read", "server_cpu_us", "ringhttp/json", "plus", 3.0, "server CPU µs/req",
           control=True),
    Target("ringhttp/database-write", "rps", "pgbench/database-write", "ratio", 0.8, "req/s", control=True),
]


# Issue 17's targets for the open model: the rate row achieves the rate it
# asked for to OPEN_RATE_TOLERANCE (kind "rate": judged against the row's own
# requested rate), at a client CPU per request of at most
# OPEN_CLIENT_CPU_RATIO times the same load's in the closed model (a ratio
# held from above: kind "at most").
OPEN_MODEL_TARGETS = [
    Target("floor-uring/pipelined-open", "rps", "", "rate", OPEN_RATE_TOLERANCE, "req/s"),
    Target("floor-uring/pipelined-open", "client_cpu_us", "floor-uring/pipelined", "at most", OPEN_CLIENT_CPU_RATIO,
           "client CPU µs/req", control=True),
]

# Issue 26's target for the client over HTTPS: its own CPU per request at
# most TLS_CLIENT_CPU_RATIO times wrk's on the same load (nginx over TLS,
# kept-alive connections), judged within one run; wrk's row is the control.
# And ringhttp's server over HTTPS against nginx's on the same loads, the
# same client: its CPU per request at most TLS_SERVER_CPU_RATIO times
# nginx-tls's kept alive, and per full handshake (a new connection per
# request, no session resumed) at most TLS_HANDSHAKE_SERVER_CPU_RATIO
# times; nginx-tls's rows are the controls.
TLS_TARGETS = [
    Target("nginx-tls/plaintext", "client_cpu_us", "nginx-tls/plaintext/wrk", "at most", TLS_CLIENT_CPU_RATIO,
           "client CPU µs/req", control=True),
    Target("ringhttp-tls/plaintext", "server_cpu_us", "nginx-tls/plaintext", "at most", TLS_SERVER_CPU_RATIO,
           "server CPU µs/req", control=True),
    Target("ringhttp-tls/handshake-full", "server_cpu_us", "nginx-tls/handshake-full", "at most",
           TLS_HANDSHAKE_SERVER_CPU_RATIO, "server CPU µs/req", control=True),
]
# Issue 31's target for the client over HTTP/2: its own CPU per request at
# most H2_CLIENT_CPU_RATIO times h2load's on the same load (the same server,
# connections and streams per connection), judged within one run; h2load's
# row is the control.
H2_TARGETS = [
    Target(f"{server}/plaintext", "client_cpu_us", f"{server}/plaintext/h2load", "at most", H2_CLIENT_CPU_RATIO,
           "client CPU µs/req", control=True)
    for server in ("nginx-h2", "h2o-h2")
]
TARGETS = DATABASE_TARGETS + OPEN_MODEL_TARGETS + TLS_TARGETS + H2_TARGETS


def floor_profiles(workload):
    """The uring axis's floor-uring rows of a workload that differ in the
    floor's own --uring profile or switches (not in the client's)."""
    return tuple(r.id for r in axis_rows(["uring"]) if r.server.name == "floor-uring"
                 and r.workload.name == workload and not (r.variant and r.variant.client_args))


# Issue 29's targets for --compare uring, judged within one run: ringhttp
# with every feature (the axis's `all`) against the floor's best profile
# that ran, on server CPU per request; and the open model's client CPU
# against the closed model's, with the client's min-wait and without.
URING_TARGETS = [
    Target("ringhttp:all/plaintext", "server_cpu_us", "the best floor-uring profile on plaintext", "at most",
           URING_FLOOR_RATIO, "server CPU µs/req", candidates=floor_profiles("plaintext")),
    Target("ringhttp:all/json", "server_cpu_us", "the best floor-uring profile on plaintext", "at most",
           URING_FLOOR_RATIO, "server CPU µs/req", candidates=floor_profiles("plaintext")),
    Target("ringhttp:all/pipelined", "server_cpu_us", "the best floor-uring profile on pipelined", "at most",
           URING_FLOOR_PIPELINED_RATIO, "server CPU µs/req", candidates=floor_profiles("pipelined")),
] + OPEN_MODEL_TARGETS + [
    Target("floor-uring:client-min-wait/pipelined-open", "rps", "", "rate", OPEN_RATE_TOLERANCE, "req/s"),
    Target("floor-uring:client-min-wait/pipelined-open", "client_cpu_us", "floor-uring/pipelined", "at most",
           OPEN_CLIENT_CPU_RATIO, "client CPU µs/req"),
]
# The targets a --compare run judges, by axis.
AXIS_TARGETS = {"uring": URING_TARGETS}


def targets_for(axes):
    """The targets a run judges: the default run's, or its axes' own."""
    if not axes:
        return TARGETS
    return [t for axis in axes for t in AXIS_TARGETS.get(axis, [])]


def target_controls(row_ids, targets=TARGETS):
    """The control rows the targets of these rows need and they lack."""
    return [t.reference for t in targets if t.control and t.row in row_ids and t.reference not in row_ids]


def judge_targets(summaries, targets=TARGETS):
    """Each target whose row ran, judged on the medians: a dict with its
    figures, verdict (met, NOT MET, or not judged when its reference did not
    run or a median is missing) and the line printed. A target whose own row
    did not run is left out. Targets are reported; they do not fail a run."""
    out = []
    for t in targets:
        s = summaries.get(t.row)
        if s is None:
            continue
        goal = {"ratio": f"≥ {t.limit:.2f}× {t.reference}'s", "plus": f"≤ {t.reference}'s + {t.limit:.1f} µs",
                "at most": f"≤ {t.limit:.2f}× {t.reference}" + ("" if t.candidates else "'s"),
                "rate": f"within {t.limit:.0%} of the rate asked for"}[t.kind]
        label = f"{t.row} {t.what} {goal}"
        value = s[t.figure][0] if s.get(t.figure) else None
        if t.kind == "rate":
            # The reference is the row's own requested rate (every run asks the same).
            ref, ref_value = s, s.get("requested_rps")
        elif t.candidates:
            ref, ref_value = best_of(summaries, t.candidates, t.figure)
        else:
            ref = summaries.get(t.reference)
            ref_value = ref[t.figure][0] if ref and ref.get(t.figure) else None
        j = {"row": t.row, "figure": t.figure, "reference": (ref["row"] if t.candidates and ref else
                                                             t.reference or "requested"), "kind": t.kind,
             "limit": t.limit, "goal": goal, "measured": value, "reference_measured": ref_value, "ratio": None,
             "delta": None}
        if t.kind == "rate" and (value is None or not ref_value):
            j["verdict"], j["why"] = "not judged", f"row {t.row} has no {t.what} (its runs failed)"
        elif ref is None and t.candidates:
            j["verdict"], j["why"] = "not judged", f"no row of {', '.join(t.candidates)} has a {t.what}"
        elif ref is None:
            j["verdict"], j["why"] = "not judged", f"row {t.reference} did not run"
        elif value is None or ref_value is None:
            missing = t.row if value is None else t.reference
            j["verdict"], j["why"] = "not judged", f"row {missing} has no {t.what} (its runs failed)"
        else:
            j["ratio"], j["delta"] = value / ref_value if ref_value else None, value - ref_value
            if t.kind == "ratio":
                met = ref_value > 0 and value / ref_value >= t.limit
                j["why"] = f"measured {value:,.0f}/s against {ref_value:,.0f}/s: {fmt(j['ratio'], '.2f')}×"
            elif t.kind == "at most":
                met = ref_value > 0 and value / ref_value <= t.limit
                j["why"] = (f"measured {value:.3f} µs against {ref_value:.3f}"
                            + (f" ({ref['row']})" if t.candidates else "") + f": {fmt(j['ratio'], '.2f')}×")
            elif t.kind == "rate":
                met = abs(value / ref_value - 1) <= t.limit
                j["why"] = f"achieved {value:,.0f}/s of {ref_value:,.0f}/s asked: {value / ref_value - 1:+.2%}"
            else:
                met = value <= ref_value + t.limit
                j["why"] = f"measured {value:.2f} µs against {ref_value:.2f}: {j['delta']:+.2f} µs"
            j["verdict"] = "met" if met else "NOT MET"
        j["line"] = f"{label}: {j['verdict']}" + (f" ({j['why']})" if j["verdict"] != "not judged"
                                                   else f": {j['why']}")
        out.append(j)
    return out


def best_of(summaries, candidates, figure):
    """The summary among the candidates' with the lowest median of the
    figure (the best, for a cost per request), and that median; (None, None)
    when none ran with one."""
    ran = [(summaries[c][figure][0], c) for c in candidates if summaries.get(c) and summaries[c].get(figure)]
    if not ran:
        return None, None
    value, rid = min(ran)
    return summaries[rid], value


def uring_comparison(rows, summaries):
    """--compare uring: each switch on ringhttp against the same switch on
    the floor (the floor as it starts for `all`), server CPU and system calls
    per request; and the open model's client CPU against the closed model's,
    with the client's min-wait and without."""
    lines = []
    for row in rows:
        if row.axis != "uring" or row.server.name != "ringhttp":
            continue
        ours = summaries.get(row.id)
        twin = (f"floor-uring:{row.variant.name}/{row.workload.name}" if row.variant.extra_args
                else f"floor-uring/{row.workload.name}")
        floor = summaries.get(twin)
        if not ours or not floor or not ours["server_cpu_us"] or not floor["server_cpu_us"]:
            continue
        lines.append(f"{row.id} against {twin}: server CPU {with_range(ours['server_cpu_us'], '.3f')} µs/req "
                     f"against {with_range(floor['server_cpu_us'], '.3f')} "
                     f"({ours['server_cpu_us'][0] / floor['server_cpu_us'][0]:.3f}×); the server's system calls "
                     f"{fmt(ours['server_syscalls_per_request'] and ours['server_syscalls_per_request'][0], '.3f')} "
                     "per request (the floor does not count its own).")
    ratios = []
    for label, open_row, closed_row in (
            ("plain client", "floor-uring/pipelined-open", "floor-uring/pipelined"),
            ("client min-wait", "floor-uring:client-min-wait/pipelined-open", "floor-uring:client-min-wait/pipelined"),
            ("client min-wait open, plain client closed", "floor-uring:client-min-wait/pipelined-open",
             "floor-uring/pipelined")):
        o, c = summaries.get(open_row), summaries.get(closed_row)
        if o and c and o["client_cpu_us"] and c["client_cpu_us"]:
            ratios.append(f"{label} {o['client_cpu_us'][0]:.3f} µs against {c['client_cpu_us'][0]:.3f} "
                          f"({o['client_cpu_us'][0] / c['client_cpu_us'][0]:.2f}×)")
    if ratios:
        lines.append("The open model's client CPU per request against the closed model's (floor-uring, pipelined, "
                     "medians): " + "; ".join(ratios) + ".")
    return lines


LADDER_HEADER = ["rung", "server CPU µs/req", "− json µs", "÷ json", "goal", "", "seeds' figure (M1, Node)"]


def fmt(v, spec, missing="n/a"):
    return missing if v is None else format(v, spec)


def with_range(m, spec):
    """median [min–max], or the median alone when the runs agree (or there was one)."""
    if not m:
        return "n/a"
    median, lo, hi = m
    return format(median, spec) + ("" if format(lo, spec) == format(hi, spec) else
                                   f" [{format(lo, spec)}–{format(hi, spec)}]")
