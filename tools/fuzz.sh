#!/usr/bin/env bash
# Builds the libFuzzer targets in tests/fuzz/ with clang (address and
# undefined-behaviour sanitizers on) and runs each for a short time.
# Usage: tools/fuzz.sh [seconds per target, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}

out=build-fuzz
mkdir -p "$out/corpus/request_parser"
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE)

# llhttp's C sources (Debian's node-llhttp), compiled once.
for c in api http llhttp; do
  if [[ ! -f "$out/llhttp_$c.o" ]]; then
    clang -g -O1 -fsanitize=fuzzer-no-link,address,undefined -w -I/usr/share/include/llhttp \
      -c "/usr/share/llhttp/$c.c" -o "$out/llhttp_$c.o"
  fi
done

clang++ -std=c++20 "${flags[@]}" -I. -isystem /usr/share/include/llhttp \
  tests/fuzz/request_parser_fuzz.cpp core/http/request_parser.cpp \
  "$out"/llhttp_*.o -o "$out/request_parser_fuzz"

# A few valid requests as seeds, so the fuzzer starts from real HTTP.
seed() { printf '%b' "$2" > "$out/corpus/request_parser/$1"; }
seed get '\x03\x05\x11\x02GET /plaintext HTTP/1.1\r\nHost: a\r\n\r\nGET /json?x=1 HTTP/1.0\r\n\r\n'
seed chunked '\x02\x07\x01POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n5\r\nhello\r\n0\r\n\r\n'
seed length '\x01\x09POST /a HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabcGET / HTTP/1.1\r\n\r\n'

"$out/request_parser_fuzz" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$out/" \
  "$out/corpus/request_parser" 2>&1 | tail -n 12
echo "fuzz.sh: request_parser ran ${seconds}s without a finding"
