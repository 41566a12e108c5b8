#!/usr/bin/env bash
# Keeps tools/install-deps.sh honest: builds a minimal Debian 12 root
# (debootstrap --variant=minbase bookworm: what a fresh installation has,
# no build tools, no curl, no Node.js), clones this repository's committed
# main into it, and runs the README's two commands there, each timed.
# It downloads a whole system (about 40 MB, then about 1 GB of packages), so
# it is not part of tools/test.sh or .ci/run. docs/TESTING.md records a run.
#
# Usage (as root): tools/fresh-debian.sh [--root DIR] [--keep] [--only bench|test] [-- BENCH_ARGS...]
#   --root DIR    where the system is built (default /var/tmp/ringhttp-fresh);
#                 an existing DIR is removed first unless --keep
#   --keep        reuse DIR's system as it is (a second run, to time the
#                 commands once the packages are there)
#   --only X      run only one of the two commands
#   BENCH_ARGS    passed to tools/bench.sh (for example --quick)
#
# The root is entered with chroot, /proc, /sys, /dev, /dev/pts and /dev/shm
# mounted (unmounted on exit). The chroot shares this machine's network, so
# /usr/sbin/policy-rc.d keeps the packages' own services (nginx on port 80,
# Postgres's "main" cluster) from starting, as a container's would: the two
# commands start what they need themselves. Logs: DIR/root/*.log.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
root=/var/tmp/ringhttp-fresh
keep=0 only=""
bench_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --root) root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --only) only=$2; shift 2 ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "usage: tools/fresh-debian.sh [--root DIR] [--keep] [--only bench|test] [-- BENCH_ARGS...]" >&2; exit 2 ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "fresh-debian: run as root (debootstrap and chroot)" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "fresh-debian: debootstrap is missing (Debian: debootstrap)" >&2; exit 1; }
MIRROR=${MIRROR:-http://deb.debian.org/debian}

mounted=()
cleanup() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
bind() {  # source, target inside the root
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounted+=("$root$2")
}

if [[ $keep == 0 || ! -x "$root/bin/bash" ]]; then
  rm -rf "$root"
  start=$SECONDS
  debootstrap --variant=minbase bookworm "$root" "$MIRROR" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; exit 1; }
  echo "fresh-debian: debootstrap took $((SECONDS - start)) s"
fi
# What a Debian 12 installation's apt reads: the release, its updates and
# its security archive.
cat >"$root/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$root/etc/resolv.conf"
# A machine behind a TLS-inspecting proxy (as this project's are) trusts
# its proxy's CA, installed by its administrator in
# /usr/local/share/ca-certificates: the root gets the same, so that npm
# reaches its registry. ca-certificates' own set comes from Debian (npm
# depends on it); a machine on an open network has no such file.
mkdir -p "$root/usr/local/share/ca-certificates"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  if [[ -x "$root/usr/sbin/update-ca-certificates" ]]; then
    chroot "$root" /usr/sbin/update-ca-certificates >/dev/null 2>&1 || true
  fi
fi

# A fresh clone of what is committed on main, as CI takes it.
rm -rf "$root/root/ringhttp"
git clone -q --branch main "$here" "$root/root/ringhttp"

mkdir -p "$root/proc" "$root/sys"
mount -t proc proc "$root/proc"; mounted+=("$root/proc")
mount -t sysfs sys "$root/sys"; mounted+=("$root/sys")
bind /dev /dev
bind /dev/pts /dev/pts
mkdir -p "$root/dev/shm"
mount -t tmpfs -o mode=1777 shm "$root/dev/shm"; mounted+=("$root/dev/shm")

run_in_root() {  # name, command...
  local name=$1; shift
  local start=$SECONDS rc=0
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    TERM=dumb LANG=C.UTF-8 bash -c "cd /root/ringhttp && $*" >"$root/root/$name.log" 2>&1 || rc=$?
  echo "fresh-debian: $name: exit $rc after $((SECONDS - start)) s (log: $root/root/$name.log)"
  [[ $rc -eq 0 ]] || tail -30 "$root/root/$name.log" >&2
  return $rc
}

rc=0
if [[ -z $only || $only == bench ]]; then
  run_in_root bench "tools/bench.sh ${bench_args[*]:-}" || rc=1
fi
if [[ -z $only || $only == test ]]; then
  run_in_root test tools/test.sh || rc=1
fi
exit $rc
