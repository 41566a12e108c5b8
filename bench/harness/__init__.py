"""ringhttp's benchmark harness, one concern per module (bench/bench.py runs it):

constants    placement, bounds and the bytes every workload is checked against
units        counts and durations as options take them
workloads    what is asked and what every response must be
servers      how each server is started, what it serves, why it cannot run
rows         server x workload x generator; the default run and the --compare axes
processes    starting, watching and stopping processes; their CPU time
stopping     a child stopped within a bound: SIGTERM, SIGKILL, its process group, reaped without Popen's lock
interrupts   SIGTERM and Ctrl-C: one guard that ends a mode's measuring, and what it started stopped
database     the database rows' throwaway Postgres cluster and its CPU over a window
tls          the TLS rows' CA and certificate (openssl), nginx's log of each connection's session, handshake figures
runs         one measured run of a row (the generator, the server's CPU, the variant confirmed)
h2load       h2load on the HTTP/2 rows: its command, its report read, its CPU and the server's over the window
syscalls     system calls per request: ringhttp's server from its /metrics over the window, the client's report
soak         phases of load against one server; growth from the second phase on fails
cold_start   exec to the first right answer
memory       RSS per idle connection, held by forked holders
environment  the machine and build beside every number
summary      medians, ranges, ratios, the ladder, the targets (database rows, open model)
render       tables, memory tables and notes, the chart
report       every mode's report written one way: the markdown, the raw JSON, where they went, the exit status
profile      a row's server recorded by perf in its measured window: top functions, folded stacks, chart
rate_sweep   one row in the open model at rising rates: achieved rate and corrected p99, a table and a chart
context      one run's resolved options and the bodies and token rows need
prepare      what every measuring mode does first: the context, the rows that can run, the environment
modes/       one module per mode: listing, rows (and --compare), soak, profile, rate_sweep
cli          the command line: the options, the mode they pick, everything stopped on the way out
"""
