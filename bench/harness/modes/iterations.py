"""The measuring loop the rows run and the rate sweep share: iterations the
outer loop, every row in each, as the method has it (docs/BENCHMARKS.md)."""
import time


def iterate(ctx, rows, iterations, runs, measure_one, said):
    """Each iteration, each row: measure_one(row)'s record, with its
    iteration, appended to runs[row.id] and printed as said(row, iteration,
    record) puts it; then the cool-down."""
    for it in range(1, iterations + 1):
        for r in rows:
            rec = measure_one(r)
            rec["iteration"] = it
            runs[r.id].append(rec)
            print(said(r, it, rec), flush=True)
            time.sleep(ctx.cool_down)
