#!/usr/bin/env bash
# Run a command against a PostgreSQL: the one RAMPART_TEST_DATABASE_URL names, or else a
# throwaway cluster started here (initdb + pg_ctl in a temporary directory, loopback only, a
# free port, trust authentication, no fsync) and deleted on exit.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# The command sees RAMPART_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:PORT/postgres.
# Debian's `postgresql` package is installed when no initdb is found. initdb and pg_ctl refuse
# to run as root, so as root they run as the `postgres` user. Exits with the command's status.
set -euo pipefail

if [ $# -eq 0 ]; then
    echo "usage: $0 CMD [ARGS...]" >&2
    exit 2
fi
if [ -n "${RAMPART_TEST_DATABASE_URL:-}" ]; then
    exec "$@"
fi

bindir() {
    local dir
    dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
        echo "$dir"
    elif command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
    fi
}

bin=$(bindir)
if [ -z "$bin" ]; then
    echo "-- installing Debian's postgresql (no initdb found)" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq postgresql >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && apt-get install -y -qq postgresql >/dev/null; }
    bin=$(bindir)
fi
if [ -z "$bin" ]; then
    echo "with-postgres: no initdb after installing postgresql" >&2
    exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rampart-pg.XXXXXX")
# Runs a PostgreSQL tool as an unprivileged user, from a directory it may read.
as_postgres() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd "$work" && runuser -u postgres -- "$@")
    else
        (cd "$work" && "$@")
    fi
}
cleanup() {
    if [ -f "$work/data/postmaster.pid" ]; then
        as_postgres "$bin/pg_ctl" -D "$work/data" stop -m immediate >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$work"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    2>/dev/null || echo $((20000 + RANDOM % 20000)))

if ! as_postgres "$bin/initdb" -D "$work/data" -A trust --no-sync -U postgres -E UTF8 >"$work/initdb.log" 2>&1; then
    cat "$work/initdb.log" >&2
    exit 1
fi
if ! as_postgres "$bin/pg_ctl" -D "$work/data" -w -t 60 -l "$work/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $work -c fsync=off -c synchronous_commit=off \
        -c full_page_writes=off -c max_connections=200" start >/dev/null; then
    cat "$work/server.log" >&2
    exit 1
fi
export RAMPART_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres"
echo "with-postgres: started $("$bin/postgres" --version) ($bin) on 127.0.0.1:$port, data in $work"

status=0
"$@" || status=$?
exit "$status"
