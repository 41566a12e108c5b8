#!/usr/bin/env bash
# Baseline: ringhttp against the floor responders and nginx, under wrk.
#
# Usage: bench/baseline.sh [--build DIR] [--duration S] [--warmup S]
#                          [--connections N] [--iterations N] [--only LIST]
#
#   --build DIR       meson build directory (default: build, relative to the repo root)
#   --duration S      measured seconds per run (default 10)
#   --warmup S        warm-up seconds before each measured run, not reported (default 3)
#   --connections N   wrk connections (default 128)
#   --iterations N    runs per row, each with a freshly started server (default 3)
#   --only LIST       comma-separated row ids or server names, e.g.
#                     floor-epoll,floor-uring,nginx (a server name selects all its rows)
#
# Method (docs/BENCHMARKS.md): server pinned to CPU 0, `wrk -t1` pinned
# to CPU 1. Per run: start the server, wait for it to listen, warm up, read the
# server's utime+stime, run wrk, read it again. Server CPU per request is the
# difference over the requests wrk completed; wrk's own CPU comes from its
# rusage. Any wrk error (socket error or non-2xx) fails the row, and the script
# then exits non-zero naming it. Raw figures go to results/baseline-<time>.jsonl.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH="$ROOT/bench"
PIPELINE_DEPTH=16
LISTEN_WAIT_S=10     # a server that is not listening by then has failed
WRK_GRACE_S=30       # wrk is killed this long after its own -d should have ended
STOP_WAIT_S=5        # SIGTERM, then SIGKILL after this long
COOL_DOWN_S=1

build_dir="$ROOT/build"
duration=10
warmup=3
connections=128
iterations=3
only=""

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "baseline: $*" >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

while (($#)); do
    case $1 in
        --build) build_dir=$(realpath -m -- "${2:?}"); shift 2 ;;
        --duration) duration=${2:?}; shift 2 ;;
        --warmup) warmup=${2:?}; shift 2 ;;
        --connections) connections=${2:?}; shift 2 ;;
        --iterations) iterations=${2:?}; shift 2 ;;
        --only) only=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
for n in "$duration" "$warmup" "$connections" "$iterations"; do
    is_uint "$n" || die "not a whole number: $n"
done
((duration > 0 && connections > 0 && iterations > 0)) || die "duration, connections and iterations must be positive"

# Rows: id, server, path, pipelining depth (0 = one request at a time).
ROWS=(
    "floor-epoll      floor-epoll  /plaintext 0"
    "floor-uring      floor-uring  /plaintext 0"
    "ringhttp         ringhttp     /plaintext 0"
    "ringhttp-json    ringhttp     /json      0"
    "nginx            nginx        /plaintext 0"
    "nginx-json       nginx        /json      0"
    "floor-epoll-p16  floor-epoll  /plaintext $PIPELINE_DEPTH"
    "floor-uring-p16  floor-uring  /plaintext $PIPELINE_DEPTH"
    "ringhttp-p16     ringhttp     /plaintext $PIPELINE_DEPTH"
    "nginx-p16        nginx        /plaintext $PIPELINE_DEPTH"
)

selected() {  # selected ID SERVER: is this row in --only (or is there no --only)?
    [[ -z $only ]] && return 0
    local want
    IFS=',' read -r -a want <<<"$only"
    local w
    for w in "${want[@]}"; do
        [[ $w == "$1" || $w == "$2" ]] && return 0
    done
    return 1
}

if [[ -n $only ]]; then
    IFS=',' read -r -a wanted <<<"$only"
    for w in "${wanted[@]}"; do
        found=0
        for row in "${ROWS[@]}"; do
            read -r id server _ <<<"$row"
            [[ $w == "$id" || $w == "$server" ]] && found=1
        done
        ((found)) || die "--only: no row or server named '$w' (rows: $(printf '%s ' "${ROWS[@]}" | awk '{for (i = 1; i <= NF; i += 4) printf "%s ", $i}'))"
    done
fi

server_binary() {  # the executable that runs a server
    case $1 in
        floor-epoll) echo "$build_dir/bench/floor/floor-epoll" ;;
        floor-uring) echo "$build_dir/bench/floor/floor-uring" ;;
        ringhttp) echo "$build_dir/server/server" ;;
        nginx) command -v nginx || echo "nginx" ;;
    esac
}

missing_reason() {  # why a server cannot run here, or nothing
    local bin
    bin=$(server_binary "$1")
    if [[ $1 == nginx ]]; then
        [[ -x $bin ]] || echo "nginx is not installed"
    else
        [[ -x $bin ]] || echo "$bin is not built"
    fi
}

for tool in wrk taskset curl python3 timeout; do
    command -v "$tool" >/dev/null || die "$tool is required"
done

CLK_TCK=$(getconf CLK_TCK)
RUN_DIR=$(mktemp -d /tmp/ringhttp-baseline.XXXXXX)
SERVER_PID=""
WRK_PID=""
PORT=""

stop_server() {  # SIGTERM, wait (bounded), SIGKILL; sets SERVER_EXIT
    SERVER_EXIT=""
    [[ -n $SERVER_PID ]] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    local waited=0
    while kill -0 "$SERVER_PID" 2>/dev/null && ((waited < STOP_WAIT_S * 20)); do
        sleep 0.05
        waited=$((waited + 1))
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "baseline: server $SERVER_PID ignored SIGTERM for ${STOP_WAIT_S}s, killing it" >&2
        kill -KILL "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_EXIT=0
    wait "$SERVER_PID" 2>/dev/null || SERVER_EXIT=$?
    SERVER_PID=""
}

cleanup() {
    if [[ -n $WRK_PID ]]; then
        kill -TERM "$WRK_PID" 2>/dev/null || true
        wait "$WRK_PID" 2>/dev/null || true
    fi
    stop_server
    rm -rf "$RUN_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

proc_cpu_ticks() {  # utime+stime (stat fields 14 and 15) of a process, all its threads included
    local stat rest
    stat=$(<"/proc/$1/stat") || return 1
    rest=${stat##*) }  # comm (field 2) may hold spaces or ')': split after the last ')'
    local -a f
    read -r -a f <<<"$rest"  # f[0] is field 3, the state
    [[ ${f[0]} != Z ]] || return 1  # exited, not yet reaped: it is our child
    echo $((f[11] + f[12]))
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server SERVER PATH: starts it pinned to CPU 0 and sets SERVER_PID and
# PORT. Not called in a subshell, so the server stays this shell's child.
# Returns non-zero (after printing why) when it does not come up.
start_server() {
    local server=$1 path=$2 bin out="$RUN_DIR/server.out" err="$RUN_DIR/server.err"
    bin=$(server_binary "$server")
    : >"$out"
    : >"$err"
    PORT=""
    case $server in
        floor-epoll|floor-uring)
            taskset -c 0 "$bin" --port 0 >"$out" 2>"$err" &
            ;;
        ringhttp)
            # It prints "... listening on 127.0.0.1:PORT ..." and flushes.
            taskset -c 0 "$bin" --shards 1 --cpus 0 --port 0 >"$out" 2>"$err" &
            ;;
        nginx)
            PORT=$(free_port)
            mkdir -p "$RUN_DIR/nginx"
            sed -e "s|@PORT@|$PORT|g" -e "s|@RUNDIR@|$RUN_DIR/nginx|g" \
                "$BENCH/peers/nginx.conf" >"$RUN_DIR/nginx/nginx.conf"
            taskset -c 0 "$bin" -p "$RUN_DIR/nginx" -c "$RUN_DIR/nginx/nginx.conf" -e stderr >"$out" 2>"$err" &
            ;;
    esac
    SERVER_PID=$!
    local tries=0 line
    while ((tries < LISTEN_WAIT_S * 20)); do
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "baseline: $server exited during start-up:" >&2
            tail -n 5 "$err" >&2 || true
            return 1
        fi
        if [[ -z $PORT ]]; then
            line=$(grep -m1 -oE 'listening on 127\.0\.0\.1:[0-9]+' "$out" || true)
            [[ -n $line ]] && PORT=${line##*:}
        fi
        if [[ -n $PORT ]] && curl -s -o /dev/null --max-time 1 "http://127.0.0.1:$PORT$path"; then
            return 0
        fi
        sleep 0.05
        tries=$((tries + 1))
    done
    echo "baseline: $server did not start listening within ${LISTEN_WAIT_S}s" >&2
    return 1
}

# run_wrk SECONDS URL PIPELINE OUT [more wrk options]: wrk pinned to CPU 1,
# its own CPU time written to $RUN_DIR/wrk.rusage ("user_s sys_s"). timeout
# bounds it and, being a process-group leader, takes wrk down with it when
# cleanup signals it. It runs in the background and is waited for, because
# bash acts on a trapped SIGINT/SIGTERM during `wait` at once, but during a
# foreground command only if that command died of the signal.
run_wrk() {
    local secs=$1 url=$2 pipeline=$3 out=$4
    shift 4
    local -a wrk=(wrk -t1 "-c$connections" "-d${secs}s" "$@")
    if ((pipeline > 0)); then
        wrk+=(-s "$BENCH/peers/pipeline.lua" "$url" -- "$pipeline")
    else
        wrk+=("$url")
    fi
    : >"$RUN_DIR/wrk.rusage"
    timeout --kill-after=5 $((secs + WRK_GRACE_S)) \
        python3 "$BENCH/baseline_stats.py" rusage --out "$RUN_DIR/wrk.rusage" -- \
        taskset -c 1 "${wrk[@]}" >"$out" 2>&1 &
    WRK_PID=$!
    local rc=0
    wait "$WRK_PID" || rc=$?
    WRK_PID=""
    return "$rc"
}

# ---- environment ---------------------------------------------------------
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$ROOT/results"
JSONL="$ROOT/results/baseline-$STAMP.jsonl"
REPORT="$ROOT/results/baseline-$STAMP.md"

first_line() { "$@" 2>&1 | head -n1 || true; }
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
if [[ -n $(git -C "$ROOT" status --porcelain 2>/dev/null | head -n1) ]]; then commit+=" (dirty)"; fi

{
    echo "## Environment"
    echo
    echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- kernel: $(uname -r)"
    echo "- cpu: ${cpu_model:-unknown}, nproc $(nproc)"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- wrk: $(first_line wrk -v)"
    echo "- nginx: $(first_line nginx -v)"
    echo "- compiler: $(first_line "${CXX:-c++}" --version)"
    echo "- ringhttp: $commit, build dir $build_dir"
    echo "- method: server on CPU 0, wrk -t1 -c$connections on CPU 1, ${warmup}s warm-up, ${duration}s measured," \
        "$iterations iteration(s), fresh server per run; pipelined rows: $PIPELINE_DEPTH requests per batch"
    echo
} | tee "$REPORT"
python3 - "$JSONL" "$STAMP" "$duration" "$warmup" "$connections" "$iterations" "$cpu_model" "$commit" <<'EOF'
import json, os, sys
jsonl, stamp, duration, warmup, connections, iterations, cpu, commit = sys.argv[1:]
rec = {"type": "env", "stamp": stamp, "kernel": os.uname().release, "cpu": cpu, "nproc": os.cpu_count(),
       "duration_s": int(duration), "warmup_s": int(warmup), "connections": int(connections),
       "iterations": int(iterations), "commit": commit}
open(jsonl, "a").write(json.dumps(rec, sort_keys=True) + "\n")
EOF

record_skip() {
    python3 -c 'import json, sys; print(json.dumps({"type": "skip", "row": sys.argv[1], "reason": sys.argv[2]}))' \
        "$1" "$2" >>"$JSONL"
}

# ---- rows that can run ---------------------------------------------------
RUNNABLE=()
for row in "${ROWS[@]}"; do
    read -r id server path pipeline <<<"$row"
    selected "$id" "$server" || continue
    reason=$(missing_reason "$server")
    if [[ -n $reason ]]; then
        echo "skipping $id: $reason" | tee -a "$REPORT"
        record_skip "$id" "$reason"
        continue
    fi
    RUNNABLE+=("$row")
done
((${#RUNNABLE[@]})) || die "no row can run"
echo "rows: $(printf '%s ' "${RUNNABLE[@]}" | awk '{for (i = 1; i <= NF; i += 4) printf "%s ", $i}')"

# ---- measurement -----------------------------------------------------------
# Iterations are the outer loop, so slow drift on the machine (another job,
# thermal state) is spread over all rows instead of landing on one.
declare -A FAILED=()
for ((it = 1; it <= iterations; it++)); do
    echo "iteration $it of $iterations"
    for row in "${RUNNABLE[@]}"; do
        read -r id server path pipeline <<<"$row"
        failure=""
        cpu_before=""
        cpu_after=""
        WRK_CPU=""
        SERVER_EXIT=""
        wrk_out="$RUN_DIR/wrk.out"
        : >"$wrk_out"

        if ! start_server "$server" "$path"; then
            failure="server did not start"
        fi
        url="http://127.0.0.1:$PORT$path"
        if [[ -z $failure ]]; then
            code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)
            [[ $code == 200 ]] || failure="GET $path answered ${code:-nothing}, not 200"
        fi
        if [[ -z $failure ]] && ((warmup > 0)); then
            run_wrk "$warmup" "$url" "$pipeline" "$RUN_DIR/warmup.out" || failure="warm-up wrk failed"
        fi
        if [[ -z $failure ]]; then
            cpu_before=$(proc_cpu_ticks "$SERVER_PID") || failure="server gone before the measured run"
        fi
        if [[ -z $failure ]]; then
            rc=0
            run_wrk "$duration" "$url" "$pipeline" "$wrk_out" --latency || rc=$?
            WRK_CPU=$(<"$RUN_DIR/wrk.rusage")
            ((rc == 0)) || failure="wrk exited with status $rc"
            cpu_after=$(proc_cpu_ticks "$SERVER_PID") || failure="server died during the measured run"
        fi
        stop_server
        if [[ -z $failure && $SERVER_EXIT != 0 ]]; then
            echo "  warning: $server exited with status $SERVER_EXIT after SIGTERM" >&2
        fi

        rc=0
        python3 "$BENCH/baseline_stats.py" record --jsonl "$JSONL" \
            --row "$id" --server "$server" --path "$path" --pipeline "$pipeline" \
            --iteration "$it" --connections "$connections" --clk-tck "$CLK_TCK" \
            --wrk-out "$wrk_out" --wrk-cpu "$WRK_CPU" \
            ${cpu_before:+--cpu-before "$cpu_before"} ${cpu_after:+--cpu-after "$cpu_after"} \
            --server-exit "$SERVER_EXIT" --failure "$failure" || rc=$?
        if ((rc != 0)); then
            FAILED[$id]=1
            if [[ -s $wrk_out ]]; then sed 's/^/    wrk| /' "$wrk_out" >&2; fi
        fi
        sleep "$COOL_DOWN_S"
    done
done

# ---- report ----------------------------------------------------------------
{
    echo
    echo "## Results"
    echo
    python3 "$BENCH/baseline_stats.py" table --jsonl "$JSONL"
    echo
    echo "Server CPU is utime+stime of the server process per completed request; wrk CPU is wrk's own rusage per request."
    echo "Medians across iterations, [min–max] where there is more than one. p50/p99 are n/a for pipelined rows (wrk's percentiles read 0 there)."
    echo "Raw figures: ${JSONL#"$ROOT"/}"
} | tee -a "$REPORT"

if ((${#FAILED[@]})); then
    echo "baseline: FAILED rows: ${!FAILED[*]}" >&2
    exit 1
fi
