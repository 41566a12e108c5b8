"""Summaries: medians and ranges over iterations, ratios to each row's base, the ladder."""
import statistics

from .workloads import LADDER, SEEDS_LADDER
from .rows import AXES


# Summaries, tables, chart.

def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return statistics.median(values), min(values), max(values)


def summarize(row, runs):
    ok = [r for r in runs if "failure" not in r]
    s = {"row": row.id, "server": row.server.name, "workload": row.workload.name, "generator": row.generator,
         "variant": row.variant.name if row.variant else None, "axis": row.axis, "kind": row.server.kind,
         "iterations": len(runs), "failures": [r["failure"] for r in runs if "failure" in r],
         "errors": sum(r.get("errors", 0) for r in runs)}
    for key in ("rps", "server_cpu_us", "client_cpu_us", "p50_ms", "p99_ms", "p999_ms", "rss_bytes", "bytes_per_s",
                "database_cpu_us"):
        s[key] = spread([r.get(key) for r in ok])
    return s


def ratio_base(row, summaries):
    """The row a row is divided by: the default variant on an axis, else the io_uring floor."""
    if row.axis:
        base_variant = AXES[row.axis][1][0].name
        return f"ringhttp:{base_variant}/{row.workload.name}"
    if row.workload.ladder:
        return "ringhttp/json"  # each rung's price is its difference from json
    if row.workload.name in ("plaintext", "json"):
        return "floor-uring/plaintext"
    if row.workload.name == "pipelined":
        return "floor-uring/pipelined"
    return None


def generator_comparison(rows, summaries):
    """ringhttp's client against wrk on the same server and workload, same run."""
    lines = []
    for row in rows:
        if row.generator != "wrk":
            continue
        ours = summaries.get(row.id[:-len("/wrk")])
        theirs = summaries[row.id]
        if not ours or not ours["client_cpu_us"] or not theirs["client_cpu_us"] or not theirs["rps"]:
            continue
        lines.append(f"Generators on {ours['row']}: ringhttp's client {ours['client_cpu_us'][0]:.2f} µs/req of its "
                     f"own CPU, wrk {theirs['client_cpu_us'][0]:.2f} "
                     f"({ours['client_cpu_us'][0] / theirs['client_cpu_us'][0]:.2f}×); req/s "
                     f"{ours['rps'][0] / theirs['rps'][0]:.2f}× wrk's.")
    return lines


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
