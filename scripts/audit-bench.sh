#!/usr/bin/env bash
# What the audit trail and the metrics cost (a benchmark, never part of `make test`; results in
# docs/BENCHMARKS.md, "Audit trail and metrics").
#
#   scripts/audit-bench.sh                  # BASE = the last commit before the audit trail
#   DURATION=5s ROUNDS=2 scripts/audit-bench.sh
#
# 1. The criterion bench core/benches/audited.rs (enable then disable through Service, on an
#    SQLite file and on PostgreSQL) on the code of BASE and on today's, side by side: the bench
#    uses only API that predates the audit trail, so the same file builds on both. PostgreSQL
#    is a throwaway cluster (scripts/with-postgres.sh), one database per side.
# 2. wrk against the release server of BASE (no metrics) and today's (metrics recorded, the
#    metrics listener scraped every second), alternating ROUNDS times on the same seeded data:
#    GET /v1/auth/2fa and POST /v1/auth/verify2fa.
# 3. `rampart-server audit verify` over ROWS audit rows, timed (and the criterion bench
#    core/benches/audit_verify.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BASE=${BASE:-9d1d0fd}
DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-32}
CONTACTS=${CONTACTS:-20000}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}
base_src=${BASE_SRC:-$HOME/.cache/rampart-bench-base-src}
base_target=${BASE_TARGET:-$HOME/.cache/rampart-bench-base-target}

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

echo "== the code of $BASE in $base_src (built in $base_target)"
rm -rf "$base_src" && mkdir -p "$base_src"
git archive "$BASE" | tar -x -C "$base_src"
cp core/benches/audited.rs "$base_src/core/benches/audited.rs"
printf '\n[[bench]]\nname = "audited"\nharness = false\n' >>"$base_src/core/Cargo.toml"

echo "== 1. enable then disable, with and without their audit rows (criterion)"
bench() { # DIR TARGET LABEL: the audited bench of one side, against a database of its own
    local dir=$1 target=$2 label=$3
    psql "$RAMPART_TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS bench_$label" -c "CREATE DATABASE bench_$label" >/dev/null
    (cd "$dir" && RAMPART_BENCH_DATABASE_URL="${RAMPART_TEST_DATABASE_URL/\/postgres\?/\/bench_$label?}" \
        CARGO_TARGET_DIR="$target" cargo bench -q -p rampart-core --features postgres --bench audited -- --noplot 2>&1 |
        grep -E '^(sqlite|postgres)_audited|time:' | sed "s/^/[$label] /")
}
export -f bench
scripts/with-postgres.sh bash -c "bench '$base_src' '$base_target' before && bench '$root' '$CARGO_TARGET_DIR' after"

echo "== 2. the server: GET /v1/auth/2fa and POST /v1/auth/verify2fa, before and after ($ROUNDS rounds of $DURATION)"
(cd "$base_src" && CARGO_TARGET_DIR="$base_target" cargo build --release --locked -q -p rampart-server --bin rampart-server --example seed)
cargo build --release --locked -q -p rampart-server --bin rampart-server --example seed
work=$(mktemp -d)
server=
scraper=
stop() {
    [ -n "$scraper" ] && kill "$scraper" 2>/dev/null; scraper=
    [ -n "$server" ] && { kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; }; server=
}
trap 'stop; rm -rf "$work"' EXIT
for side in before after; do
    bin=$CARGO_TARGET_DIR/release
    [ "$side" = before ] && bin=$base_target/release
    mkdir -p "$work/$side"
    "$bin/examples/seed" "$work/$side/bench.db" "$CONTACTS" "$work/$side" >/dev/null
done
sync
run() { # SIDE ROUTE
    local side=$1 route=$2 bin=$CARGO_TARGET_DIR/release extra=()
    [ "$side" = before ] && bin=$base_target/release
    [ "$side" = after ] && extra=(--metrics-listen 127.0.0.1:19464)
    RUST_LOG=warn "$bin/rampart-server" --db "$work/$side/bench.db" --listen 127.0.0.1:18080 "${extra[@]}" \
        >"$work/$side/server.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do curl -sf http://127.0.0.1:18080/healthz >/dev/null && break; sleep 0.1; done
    if [ "$side" = after ]; then
        (while curl -sf -o /dev/null http://127.0.0.1:19464/metrics; do sleep 1; done) &
        scraper=$!
    fi
    local rps
    if [ "$route" = status ]; then
        rps=$(wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s scripts/wrk/get.lua http://127.0.0.1:18080 -- \
            "$work/$side/key.txt" "$work/$side/contacts.txt" "/v1/auth/2fa?contactId=" | awk '/Requests\/sec/ {print $2}')
    else
        read -r now next < <("$bin/examples/seed" --codes "$work/$side")
        rps=$(wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s scripts/wrk/verify.lua http://127.0.0.1:18080 -- \
            "$work/$side/key.txt" "$work/$side/contacts.txt" "$now" "$next" | awk '/Requests\/sec/ {print $2}')
    fi
    stop
    echo "$rps"
}
for route in status verify; do
    for round in $(seq "$ROUNDS"); do
        b=$(run before "$route"); a=$(run after "$route")
        python3 -c "import sys; b, a = map(float, sys.argv[3:5]); print(f'[{sys.argv[1]} round {sys.argv[2]}] before {b:,.0f}/s  after {a:,.0f}/s  after/before {a / b:.3f}')" \
            "$route" "$round" "$b" "$a"
    done
done

echo "== 3. audit verify over ${ROWS:-200000} rows"
ROWS=${ROWS:-200000} cargo bench -q -p rampart-core --bench audit_verify -- --noplot 2>&1 | grep -E 'populated|audit_verify|time:|thrpt:'
