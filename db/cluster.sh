#!/usr/bin/env bash
# A throwaway Postgres cluster for the tests and the benchmark (issue 16).
# initdb into DIR as an unprivileged user (Postgres refuses to run as root:
# as root, the `postgres` user of Debian's package runs it), listening on a
# Unix socket in DIR and on 127.0.0.1:PORT only, trust authentication (only
# this machine's loopback and a socket in a private directory reach it),
# fsync and synchronous_commit at their defaults (a commit is a real flush,
# as in the seeds). Each start applies db/schema.sql. Nothing outside DIR is
# touched and no system service is used.
#   db/cluster.sh start DIR PORT   initdb when DIR holds no cluster, start, apply the schema; prints the URL
#   db/cluster.sh stop DIR         fast shutdown, bounded; nothing to do when it is not running
#   db/cluster.sh url DIR          the libpq URL of DIR's cluster
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
START_WAIT_S=30   # pg_ctl's bound on a start or stop
DATABASE=ringhttp
ROLE=ringhttp

usage() { echo "usage: db/cluster.sh start DIR PORT | stop DIR | url DIR" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
cmd=$1 dir=$2
bindir=$(pg_config --bindir 2>/dev/null || true)
[[ -x "$bindir/initdb" ]] || bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x "$bindir/initdb" ]] || { echo "db/cluster.sh: no Postgres server (Debian: postgresql-15)" >&2; exit 1; }

# Everything the cluster runs, as its owner: `postgres` when we are root.
as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}
url() { echo "postgresql://$ROLE@127.0.0.1:$(cat "$dir/port")/$DATABASE"; }

case "$cmd" in
  start)
    [[ $# -eq 3 ]] || usage
    port=$3
    mkdir -p "$dir"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$dir"
    chmod 700 "$dir"
    if [[ ! -f "$dir/data/PG_VERSION" ]]; then
      as_owner "$bindir/initdb" -D "$dir/data" -U "$ROLE" --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
        { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    echo "$port" >"$dir/port"
    as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t "$START_WAIT_S" \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c max_connections=200" start >/dev/null ||
      { tail -20 "$dir/server.log" >&2; exit 1; }
    psql() { PGOPTIONS="-c client_min_messages=warning" as_owner "$bindir/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U "$ROLE" "$@"; }
    if [[ -z $(psql -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'") ]]; then
      psql -d postgres -c "CREATE DATABASE $DATABASE" >/dev/null
    fi
    psql -d "$DATABASE" -f - <"$here/schema.sql" >/dev/null
    url
    ;;
  stop)
    if [[ -f "$dir/data/postmaster.pid" ]]; then
      as_owner "$bindir/pg_ctl" -D "$dir/data" -m fast -w -t "$START_WAIT_S" stop >/dev/null
    fi
    ;;
  url)
    url
    ;;
  *) usage ;;
esac
