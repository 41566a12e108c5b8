#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz/ with clang (address and
# undefined-behaviour sanitizers on) and runs each: the request parser, its
# framing scanner alone, POST /echo's body parser, and the bearer-token
# verifier.
#
# Usage:
#   tools/fuzz.sh --fixed                  tools/test.sh's run: each target
#       from its seed corpus alone (a fresh copy), with a fixed -seed and a
#       fixed number of runs, so it passes or fails the same way every time
#       and on every machine (about 20 s per target on a 2-CPU VM)
#   tools/fuzz.sh [SECONDS] [--no-driver]  random seeds: each target for
#       SECONDS (default 20) with a seed libFuzzer draws, growing its corpus
#       in build-fuzz/corpus/ from run to run; then the hostile-client driver
#       against the real server with random seeds for as long, half over
#       HTTP and half over HTTPS (--no-driver leaves it out). A finding
#       prints libFuzzer's seed and its input (build-fuzz/TARGET-crash-*).
set -euo pipefail
cd "$(dirname "$0")/.."
fixed=0 seconds=20 run_driver=1
for arg in "$@"; do
  case "$arg" in
    --fixed) fixed=1; run_driver=0 ;;
    --no-driver) run_driver=0 ;;
    [0-9]*) seconds=$arg ;;
    *) echo "usage: tools/fuzz.sh --fixed | tools/fuzz.sh [SECONDS] [--no-driver]" >&2; exit 2 ;;
  esac
done
# The fixed run: libFuzzer's seed, and the inputs each target runs (-runs,
# about 20 s each on a 2-CPU VM, from its inputs per second there).
FIXED_SEED=20261207
declare -A FIXED_RUNS=([request_parser]=1000000 [framing_scanner]=300000 [echo_body]=3000000 [jwt]=1000000)

out=build-fuzz
mkdir -p "$out/corpus/request_parser" "$out/corpus/framing_scanner" "$out/corpus/echo_body" "$out/corpus/jwt"
# A seed: the target's corpus, the file's name, its bytes (printf's %b escapes).
seed() { printf '%b' "$3" > "$out/corpus/$1/$2"; }
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE)

# llhttp's C sources (Debian's node-llhttp), compiled once.
# llhttp in strict mode, as subprojects/llhttp builds it.
for c in api http llhttp; do
  if [[ ! -f "$out/llhttp_strict_$c.o" ]]; then
    clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined -w -DLLHTTP_STRICT_MODE=1 -I/usr/share/include/llhttp \
      -c "/usr/share/llhttp/$c.c" -o "$out/llhttp_strict_$c.o"
  fi
done

clang++ -std=c++20 "${flags[@]}" -I. -isystem /usr/share/include/llhttp \
  tests/fuzz/request_parser_fuzz.cpp core/http/request_parser.cpp core/http/framing_scanner.cpp \
  "$out"/llhttp_strict_*.o -o "$out/request_parser_fuzz"

# A few valid requests as seeds, so the fuzzer starts from real HTTP.
seed request_parser get '\x03\x05\x11\x02GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\nGET /json?x=1 HTTP/1.0\r\n\r\n'
seed request_parser chunked '\x02\x07\x01POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
seed request_parser length '\x01\x09POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabcGET / HTTP/1.1\r\nHost: a\r\n\r\n'
seed request_parser kept '\x02\x11\x05POST /echo HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nOrigin: https://x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer x\r\n\r\n'

clang++ -std=c++20 "${flags[@]}" -I. tests/fuzz/framing_scanner_fuzz.cpp core/http/framing_scanner.cpp \
  -o "$out/framing_scanner_fuzz"
# Seeds for the scanner: a limit byte, a cut byte, then framing with marks
# (0xfd a header section's end, 0xfc a request's end, 0xff or 0xfe and a
# length: body or chunk data).
seed framing_scanner request '\x80\x11GET / HTTP/1.1\r\nHost: a\r\n\r\n\xfcGET /b HTTP/1.1\r\n\r\n'
seed framing_scanner body '\x80\x30POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n\xfd\xff\x03a\r\n\xfcGET / HTTP/1.1\r\n\r\n'
seed framing_scanner chunked '\x40\x05POST / HTTP/1.1\r\n\r\n\xfd5\r\n\xfe\x05hello\r\n0;x=1\r\nT: y\r\n\r\n\xfc'
seed framing_scanner faults '\x20\x07GET / HTTP/1.1\nHost: a\r\n b\r\n: c\rx\r\n\r\n'
clang++ -std=c++20 "${flags[@]}" -I. tests/fuzz/echo_body_fuzz.cpp server/app/echo_body.cpp \
  core/http/json_writer.cpp -lsimdjson -o "$out/echo_body_fuzz"
clang++ -std=c++20 "${flags[@]}" -I. tests/fuzz/jwt_fuzz.cpp core/auth/jwt.cpp core/auth/base64url.cpp \
  core/auth/hmac_sha256.cpp -lsimdjson -lcrypto -o "$out/jwt_fuzz"

# Seeds for the body parser: valid bodies and each kind of refusal.
seed echo_body ok '{"name":"Ada","n":21}'
seed echo_body spaced ' {\n "n" : -1.5e3 , "name" : "\\u00e9\\"" } '
seed echo_body unknown '{"name":"a","n":1,"x":[1,{"y":null}]}'
seed echo_body duplicate '{"name":"a","name":"b","n":1e999}'
seed echo_body utf8 '{"name":"\xc3\xa9\xe6\x97\xa5","n":0}'
# Seeds for the verifier: raw tokens (first byte even) and header/payload
# pairs to be signed (first byte odd, NUL between them).
seed jwt raw '\x00eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJlc2lnbmF0dXJlc2lnbmF0dXJlc2lnbmE'
seed jwt signed '\x01{"alg":"HS256","typ":"JWT"}\x00{"sub":"u1","exp":1900000000,"nbf":1}'
seed jwt none '\x01{"alg":"none"}\x00{"sub":"u1"}'
seed jwt claims '\x01{"alg":"HS256","crit":["x"]}\x00{"sub":"a\\"b","exp":"soon"}'

run() {  # target, corpus, max_len
  if [[ $fixed == 1 ]]; then
    # A fresh copy of the seeds: what earlier random runs added to the
    # corpus must not change what this run tries.
    local corpus
    corpus=$(mktemp -d "$out/fixed-$1.XXXXXX")
    cp "$out/corpus/$2"/* "$corpus/"
    local rc=0
    "$out/$1_fuzz" -seed="$FIXED_SEED" -runs="${FIXED_RUNS[$1]}" -max_len="$3" -print_final_stats=1 \
      -artifact_prefix="$out/$1-" "$corpus" >"$corpus.log" 2>&1 || rc=$?
    tail -n 12 "$corpus.log"
    rm -rf "$corpus" "$corpus.log"
    [[ $rc -eq 0 ]] || { echo "fuzz.sh: $1 found a failure with -seed=$FIXED_SEED (its input: $out/$1-*)" >&2; exit 1; }
    echo "fuzz.sh: $1 ran ${FIXED_RUNS[$1]} inputs with -seed=$FIXED_SEED without a finding"
    return
  fi
  "$out/$1_fuzz" -max_total_time="$seconds" -max_len="$3" -print_final_stats=1 \
    -artifact_prefix="$out/$1-" "$out/corpus/$2" 2>&1 | tail -n 12
  echo "fuzz.sh: $1 ran ${seconds}s without a finding"
}
run request_parser request_parser 4096
run framing_scanner framing_scanner 4096
run echo_body echo_body 4096
run jwt jwt 2048

# The connection state machine, not only the parser: the hostile-client
# driver (tests/socket/hostile_driver_main.cpp; `meson test` runs one fixed
# seed) against the real server, with random seeds for the same time: half
# of it over plain HTTP, half over HTTPS (--tls; every session at least one
# seed). The sanitizer build when there is one (tools/test.sh makes it
# first). A failure prints its seed, the failing connections' bytes, and how
# to replay them: hostile_driver [--tls] --seed S [--connection K].
if [[ $run_driver == 0 ]]; then
  echo "fuzz.sh: the hostile-client driver's random seeds left out (meson test runs its fixed seed)"
  exit 0
fi
driver_build=build-san
[[ -f "$driver_build/build.ninja" ]] || driver_build=build
[[ -f "$driver_build/build.ninja" ]] || meson setup "$driver_build" >/dev/null
ninja -C "$driver_build" server/server tests/socket/hostile_driver >/dev/null
half=$(((seconds + 1) / 2))
for mode in plain tls; do
  tls_flag=()
  [[ $mode == tls ]] && tls_flag=(--tls)
  if ! ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$driver_build/tests/socket/hostile_driver" "${tls_flag[@]}" --seconds "$half" --quiet \
      --server "$driver_build/server/server"; then
    echo "fuzz.sh: hostile_driver found a failure over $mode (its seed is printed above)" >&2
    exit 1
  fi
done
echo "fuzz.sh: hostile_driver ran ${half}s of random seeds over HTTP and ${half}s over HTTPS without a finding"
