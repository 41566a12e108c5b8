# Sourced by tools/test.sh and tools/bench.sh: one way to configure a build
# directory.

# Runs a command, showing its output only when it fails (meson prints its
# errors on stdout).
quiet() {
  local out
  if ! out=$("$@" 2>&1); then
    printf '%s\n' "$out" >&2
    echo "${0##*/}: failed: $*" >&2
    return 1
  fi
}

# configure DIR OPTIONS...: sets up DIR with OPTIONS, or sets OPTIONS again
# on an existing DIR (meson 1.0's --reconfigure keeps the options a
# directory had, so each caller passes every option it relies on).
configure() {
  local dir=$1; shift
  if [[ -d "$dir" ]]; then
    quiet meson setup --reconfigure "$dir"
    quiet meson configure "$dir" "$@"
  else
    quiet meson setup "$dir" "$@"
  fi
}
