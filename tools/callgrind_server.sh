#!/usr/bin/env bash
# User-space instructions per request of a server, counted by callgrind
# (repeatable whatever else the machine is doing): the server under
# valgrind on CPU 0, ringhttp's client on CPU 1 for a fixed number of
# requests, then the total (and without the dynamic loader's start-up
# share) and the top functions.
# Usage: tools/callgrind_server.sh SERVER_BINARY [PIPELINE (16)] [REQUESTS (64000)] [PATH (/plaintext)]
# Needs build-release/client/client (tools/bench.sh builds it), or CLIENT=PATH.
# SERVER_ARGS adds to the server's flags (--backend epoll).
# TOP=N lists N functions (12); KEEP=FILE keeps the callgrind output there
# (for callgrind_annotate --auto=yes, line by line in a build with -g).
set -euo pipefail
cd "$(dirname "$0")/.."
server=$1
pipeline=${2:-16}
requests=${3:-64000}
path=${4:-/plaintext}
out=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
taskset -c 0 valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
  "$server" --address 127.0.0.1 --port "$port" --shards 1 --cpus 0 ${SERVER_ARGS:-} >"$out/server.out" 2>"$out/server.err" &
pid=$!
for _ in $(seq 1 150); do grep -q listening "$out/server.out" 2>/dev/null && break; sleep 0.2; done
taskset -c 1 "${CLIENT:-build-release/client/client}" -c 16 -p "$pipeline" -n "$requests" -d 120s --cpus 1 \
  "http://127.0.0.1:$port$path" >"$out/client.out" 2>&1 || { cat "$out/client.out"; kill -TERM "$pid"; exit 1; }
# The counts so far (start-up and every request, not the exit) dumped now,
# while the server still runs: a server stopped under valgrind may not
# leave io_uring_enter to take its signal, and the count must not hang on it.
callgrind_control -d "$pid" >/dev/null 2>&1
dump=$(ls "$out"/callgrind.out.* 2>/dev/null | head -n 1)
[[ -n "$dump" ]] || { echo "callgrind_server.sh: callgrind_control wrote no dump" >&2; kill -KILL "$pid"; exit 1; }
kill -TERM "$pid"
# Valgrind runs one thread at a time and does not let go while the shard
# waits in io_uring_enter: a connection wakes it so the signal is taken;
# past 10 s it is killed (the dump above has what is counted).
sleep 0.5
(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -KILL "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
# The dynamic loader's share is a start-up cost, once per process (libpq's
# libraries weigh on it): per request it depends on the run's length.
loader=$(callgrind_annotate --threshold=100 "$dump" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed -n '2,$p' |
  awk '/ld-linux|dl-/ {gsub(",", "", $1); n += $1} END {print n + 0}')
[[ -n "${KEEP:-}" ]] && cp "$dump" "$KEEP"
echo "requests: $requests, instructions: $total, per request: $((total / requests));" \
  "without the dynamic loader's start-up ($loader): $(((total - loader) / requests))"
callgrind_annotate --threshold=100 "$dump" 2>/dev/null | grep -E '^ *[0-9,]+ ' | sed -n "2,$((${TOP:-12} + 1))p"
