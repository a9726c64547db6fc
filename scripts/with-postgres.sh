#!/usr/bin/env bash
# Run a command against a PostgreSQL: the one RAMPART_TEST_DATABASE_URL names, or else a
# throwaway cluster started here (initdb + pg_ctl in a temporary directory, loopback only, a
# free port, trust authentication, no fsync) and deleted on exit.
#
#   scripts/with-postgres.sh CMD [ARGS...]
#
# The command sees RAMPART_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:PORT/postgres?sslmode=disable
# (plain TCP, which the store refuses unless the URL asks for it), and for the tests that need
# the cluster itself: RAMPART_TEST_PG_BIN (its tools), RAMPART_TEST_PGDATA (its data directory),
# RAMPART_TEST_PG_SOCKET (its Unix socket directory) and RAMPART_TEST_PG_CA (the CA that signed
# its TLS certificate, for localhost and 127.0.0.1; the cluster accepts TLS and plain TCP).
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

if ! command -v openssl >/dev/null 2>&1; then
    echo "-- installing Debian's openssl (for the test certificates)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null; }
fi
# A CA and a server certificate it signs, for the TLS tests (the store verifies chain and name).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=rampart-test-ca \
    -keyout "$work/ca.key" -out "$work/ca.crt" >/dev/null 2>&1
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout "$work/server.key" -out "$work/server.csr" >/dev/null 2>&1
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$work/server.ext"
openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
    -extfile "$work/server.ext" -out "$work/server.crt" >/dev/null 2>&1
chmod 600 "$work/server.key"
if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$work/server.key" "$work/server.crt"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
    2>/dev/null || echo $((20000 + RANDOM % 20000)))

if ! as_postgres "$bin/initdb" -D "$work/data" -A trust --no-sync -U postgres -E UTF8 >"$work/initdb.log" 2>&1; then
    cat "$work/initdb.log" >&2
    exit 1
fi
# RAMPART_PG_DURABLE=1 (benchmarks): keep PostgreSQL's defaults, fsync and synchronous commits on.
nosync="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
[ "${RAMPART_PG_DURABLE:-}" = 1 ] && nosync=""
if ! as_postgres "$bin/pg_ctl" -D "$work/data" -w -t 60 -l "$work/server.log" \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $work $nosync -c max_connections=200 \
        -c ssl=on -c ssl_cert_file=$work/server.crt -c ssl_key_file=$work/server.key" start >/dev/null; then
    cat "$work/server.log" >&2
    exit 1
fi
export RAMPART_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
export RAMPART_TEST_PG_BIN="$bin" RAMPART_TEST_PGDATA="$work/data" RAMPART_TEST_PG_SOCKET="$work" \
    RAMPART_TEST_PG_CA="$work/ca.crt"
echo "with-postgres: started $("$bin/postgres" --version) ($bin) on 127.0.0.1:$port, data in $work"

status=0
"$@" || status=$?
exit "$status"
