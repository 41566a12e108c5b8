#!/usr/bin/env python3
"""Figures for bench/baseline.sh (stdlib only).

  record  parse one measured wrk run, append it as a JSON line, print a summary;
          exit 3 when the run failed (any error, or a failure bash reported)
  table   read a results .jsonl and print the markdown table
  rusage  run a command, then write its CPU time ("user_s sys_s", from
          RUSAGE_CHILDREN) to a file; exit with the command's status

Server CPU per request = (utime+stime ticks after - before) / CLK_TCK / requests.
"""
import argparse
import json
import re
import resource
import signal
import statistics
import subprocess
import sys

TIME_UNITS_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3, "h": 3600e3}
ERROR_KINDS = ("connect", "read", "write", "timeout", "non2xx")


def to_ms(value, unit):
    return float(value) * TIME_UNITS_MS[unit]


def parse_wrk(text):
    """The figures we use from wrk 4.x's report; None where a line is absent."""
    out = {"requests": None, "duration_s": None, "rps": None, "latency_avg_ms": None,
           "p50_ms": None, "p75_ms": None, "p90_ms": None, "p99_ms": None}
    m = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)", text, re.M)
    if m:
        out["requests"] = int(m.group(1))
        out["duration_s"] = to_ms(m.group(2), m.group(3)) / 1e3
    m = re.search(r"^Requests/sec:\s+([\d.]+)", text, re.M)
    if m:
        out["rps"] = float(m.group(1))
    m = re.search(r"^\s+Latency\s+([\d.]+)(us|ms|s|m|h)", text, re.M)
    if m:
        out["latency_avg_ms"] = to_ms(m.group(1), m.group(2))
    for pct in ("50", "75", "90", "99"):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s|m|h)" % pct, text, re.M)
        if m:
            out["p%s_ms" % pct] = to_ms(m.group(1), m.group(2))
    # wrk prints these two lines only when a count is nonzero.
    errors = dict.fromkeys(ERROR_KINDS, 0)
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        for kind, value in zip(ERROR_KINDS, m.groups()):
            errors[kind] = int(value)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m:
        errors["non2xx"] = int(m.group(1))
    out["errors"] = errors
    return out


def cmd_record(a):
    rec = {"type": "run", "row": a.row, "server": a.server, "path": a.path,
           "pipeline": a.pipeline, "iteration": a.iteration, "connections": a.connections,
           "clk_tck": a.clk_tck, "server_exit": a.server_exit}
    failures = [a.failure] if a.failure else []
    wrk = {}
    if a.wrk_out:
        with open(a.wrk_out, encoding="utf-8", errors="replace") as f:
            wrk = parse_wrk(f.read())
        rec.update(wrk)
        if not wrk["requests"]:
            failures.append("wrk reported no requests")
        bad = {k: v for k, v in wrk["errors"].items() if v}
        if bad:
            failures.append("wrk errors " + ", ".join("%s %d" % kv for kv in bad.items()))
    requests = wrk.get("requests") or 0
    if requests and a.cpu_before is not None and a.cpu_after is not None:
        ticks = a.cpu_after - a.cpu_before
        rec["server_cpu_ticks"] = ticks
        rec["server_cpu_us_per_req"] = ticks / a.clk_tck * 1e6 / requests
    if requests and a.wrk_cpu:
        user_s, sys_s = (float(x) for x in a.wrk_cpu.split())
        rec["wrk_user_s"], rec["wrk_sys_s"] = user_s, sys_s
        rec["wrk_cpu_us_per_req"] = (user_s + sys_s) * 1e6 / requests
    rec["ok"] = not failures
    rec["failures"] = failures
    with open(a.jsonl, "a", encoding="utf-8") as f:
        f.write(json.dumps(rec, sort_keys=True) + "\n")

    def fmt(key, spec):
        return format(rec[key], spec) if rec.get(key) is not None else "?"
    print("  %-16s iter %d: %s req/s, server %s us/req, wrk %s us/req, %s"
          % (a.row, a.iteration, fmt("rps", ".0f"), fmt("server_cpu_us_per_req", ".2f"),
             fmt("wrk_cpu_us_per_req", ".2f"), "ok" if rec["ok"] else "FAIL: " + "; ".join(failures)))
    return 0 if rec["ok"] else 3


def spread(values, spec):
    """median [min-max], or n/a."""
    values = [v for v in values if v is not None]
    if not values:
        return "n/a"
    med = format(statistics.median(values), spec)
    if len(values) == 1:
        return med
    return "%s [%s–%s]" % (med, format(min(values), spec), format(max(values), spec))


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cmd_table(a):
    runs, skips, rows = [], [], []
    with open(a.jsonl, encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] == "run":
                runs.append(rec)
                if rec["row"] not in rows:
                    rows.append(rec["row"])
            elif rec["type"] == "skip":
                skips.append(rec)
    by_row = {r: [x for x in runs if x["row"] == r] for r in rows}
    # The control: floor-uring's median CPU per request, per pipelining depth.
    floor = {}
    for r in rows:
        first = by_row[r][0]
        if first["server"] == "floor-uring":
            floor[first["pipeline"]] = median_or_none(
                [x.get("server_cpu_us_per_req") for x in by_row[r] if x["ok"]])

    print("| row | req/s (k) | server CPU µs/req | wrk CPU µs/req | p50 / p99 ms | errors | server CPU ÷ floor-uring |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        its = by_row[r]
        first = its[0]
        ok = [x for x in its if x["ok"]]
        name = "%s %s" % (first["server"], first["path"])
        if first["pipeline"]:
            name += ", pipelined %d" % first["pipeline"]
        rps = spread([x["rps"] / 1e3 for x in ok if x.get("rps")], ".1f")
        cpu = spread([x.get("server_cpu_us_per_req") for x in ok], ".2f")
        wrk_cpu = median_or_none([x.get("wrk_cpu_us_per_req") for x in ok])
        wrk_cpu = "n/a" if wrk_cpu is None else "%.2f" % wrk_cpu
        if first["pipeline"]:
            lat = "n/a"  # wrk's percentiles read 0 in pipelined mode
        else:
            p50 = median_or_none([x.get("p50_ms") for x in ok])
            p99 = median_or_none([x.get("p99_ms") for x in ok])
            lat = "n/a" if p50 is None or p99 is None else "%.2f / %.2f" % (p50, p99)
        n_err = sum(sum(x.get("errors", {}).values()) for x in its)
        failed = len(its) - len(ok)
        errors = str(n_err) if not failed else "%d, FAIL (%d of %d runs)" % (n_err, failed, len(its))
        mine = median_or_none([x.get("server_cpu_us_per_req") for x in ok])
        base = floor.get(first["pipeline"])
        ratio = "%.2f" % (mine / base) if mine is not None and base else "n/a"
        print("| %s | %s | %s | %s | %s | %s | %s |" % (name, rps, cpu, wrk_cpu, lat, errors, ratio))
    for s in skips:
        print("\nskipped %s: %s" % (s["row"], s["reason"]), end="")
    if skips:
        print()
    return 0


def cmd_rusage(a):
    if a.command and a.command[0] == "--":
        a.command = a.command[1:]
    child = subprocess.Popen(a.command)

    def forward(signum, _frame):
        child.send_signal(signum)
    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    status = child.wait()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("%.6f %.6f\n" % (usage.ru_utime, usage.ru_stime))
    return status if status >= 0 else 128 - status


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--jsonl", required=True)
    r.add_argument("--row", required=True)
    r.add_argument("--server", required=True)
    r.add_argument("--path", required=True)
    r.add_argument("--pipeline", type=int, required=True)
    r.add_argument("--iteration", type=int, required=True)
    r.add_argument("--connections", type=int, required=True)
    r.add_argument("--clk-tck", type=int, required=True)
    r.add_argument("--wrk-out", default="")
    r.add_argument("--wrk-cpu", default="", help='"USER_S SYS_S" of the measured wrk')
    r.add_argument("--cpu-before", type=int)
    r.add_argument("--cpu-after", type=int)
    r.add_argument("--server-exit", default="")
    r.add_argument("--failure", default="", help="a failure the script saw itself")
    t = sub.add_parser("table")
    t.add_argument("--jsonl", required=True)
    u = sub.add_parser("rusage")
    u.add_argument("--out", required=True)
    u.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    return {"record": cmd_record, "table": cmd_table, "rusage": cmd_rusage}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
