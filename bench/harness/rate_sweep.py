"""--rate-sweep: one row's load in the open model at rising requested rates, past what the server can take.

Each point is the row's workload with -R at that rate (a whole number of
pipelined batches a second), run like any row (a fresh server, warm-up not
reported, every response checked); the table and chart show the achieved
rate and the corrected p99 (from each request's intended time) against the
requested rate, with the uncorrected p99 (from the actual send) beside it:
past the server's capacity the achieved rate flattens and the corrected
latency grows with the run, while the uncorrected one hides the queue.
"""
import dataclasses
import os

from .summary import fmt, with_range
from .runs import open_rate
from .render import gnuplot_missing, run_gnuplot

SWEEP_HEADER = ["requested req/s", "achieved req/s", "achieved ÷ requested", "p50 ms", "p99 ms",
                "p99 ms uncorrected", "server CPU µs/req", "client CPU µs/req", "errors"]


def parse_rates(text):
    """'250k,500k,1M,1.5M' -> [250000, 500000, 1000000, 1500000]; ValueError names what is wrong."""
    rates = []
    for token in (t.strip() for t in text.split(",")):
        if not token:
            continue
        scale = {"k": 1_000, "K": 1_000, "m": 1_000_000, "M": 1_000_000}.get(token[-1], 1)
        number = token[:-1] if scale != 1 else token
        try:
            value = float(number)
        except ValueError:
            raise ValueError(f"'{token}' is not a rate (a number of requests a second, k or M allowed)") from None
        if not value > 0 or value * scale > 100_000_000 or value * scale != int(value * scale):
            raise ValueError(f"'{token}': a whole number of requests a second, from 1 to 100M")
        rates.append(int(value * scale))
    if not rates:
        raise ValueError("no rate given")
    if sorted(set(rates)) != rates:
        raise ValueError("rates rising, each once")
    return rates


def rate_label(rate):
    if rate % 1_000_000 == 0:
        return f"{rate // 1_000_000}M"
    if rate % 1_000 == 0:
        return f"{rate // 1_000}k"
    return str(rate)


def sweep_rows(row, rates):
    """The row at each rate: its workload with the rate set, named ROW@RATE."""
    return [dataclasses.replace(row, workload=dataclasses.replace(
        row.workload, name=f"{row.workload.name}@{rate_label(rate)}", rate=rate)) for rate in rates]


def sweep_table(rows, summaries, pipeline):
    body = []
    for r in rows:
        s = summaries[r.id]
        asked = open_rate(r.workload, pipeline)
        achieved = s["rps"][0] if s["rps"] else None
        body.append([f"{asked:,}", with_range(s["rps"], ",.0f"),
                     fmt(achieved / asked if achieved is not None else None, ".3f"),
                     with_range(s["p50_ms"], ".2f"), with_range(s["p99_ms"], ".2f"),
                     with_range(s["p99_uncorrected_ms"], ".2f"), with_range(s["server_cpu_us"], ".3f"),
                     with_range(s["client_cpu_us"], ".3f"),
                     str(s["errors"]) + (f" ({len(s['failures'])} failed runs)" if s["failures"] else "")])
    return body


def sweep_chart(path, rows, summaries, pipeline, title):
    """A PNG of two panels against the requested rate: the achieved rate
    (with the line achieved = requested), and the corrected and uncorrected
    p99 on a log scale. None, or why there is no chart."""
    if gnuplot_missing():
        return gnuplot_missing()
    data = path + ".dat"
    points = 0
    with open(data, "w") as f:
        for r in rows:
            s = summaries[r.id]
            if not s["rps"]:
                continue
            points += 1
            f.write(f"{open_rate(r.workload, pipeline) / 1e6:.6f} {s['rps'][0] / 1e6:.6f} "
                    f"{s['p99_ms'][0] if s['p99_ms'] else 'NaN'} "
                    f"{s['p99_uncorrected_ms'][0] if s['p99_uncorrected_ms'] else 'NaN'}\n")
    if not points:
        os.unlink(data)
        return "no point has figures"
    script = f"""
set terminal pngcairo size 1500,560 font ",10"
set output "{path}"
set multiplot layout 1,2 title "{title.replace('"', "'")}" noenhanced
set xlabel "requested (million requests/s)"
set grid
set key top left
set ylabel "achieved (million requests/s)"
set xrange [0:*]
set yrange [0:*]
plot "{data}" using 1:2 with linespoints pointtype 7 linewidth 2 title "achieved", \\
     x with lines dashtype 2 linecolor rgb "gray50" title "achieved = requested"
set ylabel "p99 latency (ms, log scale)"
set logscale y
set yrange [*:*]
plot "{data}" using 1:3 with linespoints pointtype 7 linewidth 2 title "p99 from the intended time (corrected)", \\
     "{data}" using 1:4 with linespoints pointtype 6 dashtype 2 title "p99 from the actual send (uncorrected)"
unset multiplot
"""
    return run_gnuplot(script, data)
