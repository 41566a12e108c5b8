"""What the harness does, one module per mode (cli picks one from the options):

listing     --list: the workloads, rows, groups and axes, as text or JSON
rows        the default run, --only and --compare: every row's iterations, the results table and its sections
soak        --soak: phases of load against one server process; growth from the second phase on fails
profile     --profile: one row plain and recorded by perf, its top functions, folded stacks and chart
rate_sweep  --rate-sweep: one row in the open model at rising rates, a table and a chart
iterations  the measuring loop rows and rate_sweep share

Each measuring mode has choose(a) (its rows, or a usage error), method(a,
ctx, rows, text) (the environment's method line for it) and run(prepared, a)
(the exit status); prepare does what they share before measuring, report
writes what they measured.
"""
