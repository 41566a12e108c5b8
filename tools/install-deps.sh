#!/usr/bin/env bash
# Installs what ringhttp needs from Debian's packages. Idempotent and quiet
# when everything is already present. Usage: tools/install-deps.sh [--bench]
# The list is what a minimal Debian 12 (debootstrap --variant=minbase) lacks
# for the README's two commands: tools/fresh-debian.sh proves it there.
set -euo pipefail

packages=(meson ninja-build pkg-config cmake g++ liburing-dev libsimdjson-dev libmimalloc-dev
          libgtest-dev libbenchmark-dev node-llhttp libssl-dev zlib1g-dev
          libnghttp2-dev  # the client's HTTP/2 (core/http2)
          # cmake: Debian 12's libmimalloc-dev has no mimalloc.pc, only a CMake
          # package, which meson's dependency('mimalloc') finds through cmake.
          clang libclang-rt-14-dev  # libFuzzer targets (tools/fuzz.sh)
          libhdrhistogram-java default-jre-headless  # --hdr-log is checked by HdrHistogram's own reader
          nginx-light h2o nodejs python3  # the benchmark's peers: tests/bench checks their workloads
          nghttp2-client  # h2load, beside the client on the bench's HTTP/2 rows: tests/bench runs them
          libjemalloc2 libtcmalloc-minimal4  # preloaded by allocator_test and by the bench's --compare alloc
          linux-perf gnuplot-nox  # the bench's --profile and its charts: tests/bench checks both
          postgresql-15 libpq-dev  # the database rows: db/cluster.sh runs a throwaway cluster
          openssl  # tests/db makes a certificate to run the database routes over TLS
          curl  # tests/socket/h2_server_test.cpp: the server's answers checked by a second HTTP client
          git  # the benchmark's report names the commit it measured (bench/harness/environment.py)
          python3-yaml)  # tests/deploy reads the Kubernetes example
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(wrk time procps util-linux)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Debian 12's nodejs does not bring npm, so a minimal Debian needs the npm
# package for `npm ci` below. A Node.js from NodeSource brings its own npm and
# conflicts with Debian's ("nodejs : Conflicts: npm"): ask for the package
# only when there is no npm command.
command -v npm >/dev/null || missing+=(npm)
# The Node peers' packages (bench/peers/package.json, pinned by its lock
# file): installed again only when the lock file is newer than what is there.
node_packages() {
  local peers
  peers="$(cd "$(dirname "$0")/.." && pwd)/bench/peers"
  if [[ ! -f "$peers/node_modules/.package-lock.json" || "$peers/package-lock.json" -nt "$peers/node_modules/.package-lock.json" ]]; then
    command -v npm >/dev/null || { echo "install-deps: npm is missing (Debian: npm)" >&2; exit 1; }
    echo "install-deps: npm ci in bench/peers" >&2
    npm ci --prefix "$peers" --no-audit --no-fund --loglevel=error >/dev/null
  fi
}
if [[ ${#missing[@]} -eq 0 ]]; then
  node_packages
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
node_packages
