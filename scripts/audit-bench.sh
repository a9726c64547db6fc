#!/usr/bin/env bash
# What the audit trail and the metrics cost (a benchmark, never part of `make test`; results in
# docs/BENCHMARKS.md, "Audit trail and metrics").
#
#   scripts/audit-bench.sh                  # BASE = the last commit before the audit trail
#   DURATION=5s ROUNDS=2 scripts/audit-bench.sh
#   CRITERION_ONLY=1 scripts/audit-bench.sh # parts 1 and 1b only
#
# 1. The criterion bench core/benches/audited.rs (enable then disable through Service, on an
#    SQLite file and on PostgreSQL) on the code of BASE and on today's, side by side: the bench
#    uses only API that predates the audit trail, so the same file builds on both. PostgreSQL
#    is a throwaway cluster (scripts/with-postgres.sh), one database per side.
# 1b. core/benches/sqlite_floor.rs: the least a record written in a change's transaction costs
#    on SQLite (raw SQL on the store's schema and settings), beside today's verify by
#    authenticator code and by recovery code (core/benches/recovery.rs) and an order without
#    and with a webhook endpoint (core/benches/webhooks.rs), so the floors meet the
#    budgets of the audit trail's, recovery codes' and webhooks' targets in one run.
# 2. wrk against the release server of BASE (before: no metrics), today's without a metrics
#    listener (metrics off: nothing recorded) and today's with one (metrics on, scraped every
#    second), in turn, ROUNDS times, each on a fresh copy of the seeded data: GET /v1/auth/2fa
#    and POST /v1/auth/verify2fa.
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
        grep -E 'audited/|time:|error|panicked' | sed "s/^/[$label] /")
}
export -f bench
scripts/with-postgres.sh bash -c "set -o pipefail; bench '$base_src' '$base_target' before && bench '$root' '$CARGO_TARGET_DIR' after"

echo "== 1b. the floor on SQLite: a record written in a change's transaction, raw SQL (criterion)"
cargo bench -q -p rampart-core --bench sqlite_floor -- --noplot 2>&1 | grep -E '^sqlite_floor/|time:|error|panicked'
echo "   and beside it, today's verify by authenticator code and by recovery code on SQLite"
cargo bench -q -p rampart-core --bench recovery -- --noplot sqlite 2>&1 | grep -E '^sqlite|time:|error|panicked'
echo "   and a sandbox order without and with a webhook endpoint on SQLite"
cargo bench -q -p rampart-core --bench webhooks -- --noplot sqlite 2>&1 | grep -E '^sqlite|time:|error|panicked'
[ "${CRITERION_ONLY:-}" = 1 ] && exit 0

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
    "$bin/examples/seed" "$work/$side/seed.db" "$CONTACTS" "$work/$side" >/dev/null
done
sync
run() { # SIDE ROUTE: before (the old server), off (today's, no metrics), on (metrics, scraped)
    local side=$1 route=$2 data=after bin=$CARGO_TARGET_DIR/release extra=()
    [ "$side" = before ] && { bin=$base_target/release; data=before; }
    [ "$side" = on ] && extra=(--metrics-listen 127.0.0.1:19464)
    # A fresh copy of the seeded database each run, so no run meets another's used codes.
    rm -f "$work/run.db"*; cp "$work/$data/seed.db" "$work/run.db"; cp "$work/$data/seed.db.key" "$work/run.db.key"
    RUST_LOG=warn "$bin/rampart-server" --db "$work/run.db" --listen 127.0.0.1:18080 "${extra[@]}" \
        >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 100); do curl -sf http://127.0.0.1:18080/healthz >/dev/null && break; sleep 0.1; done
    if [ "$side" = on ]; then
        (while curl -sf -o /dev/null http://127.0.0.1:19464/metrics; do sleep 1; done) &
        scraper=$!
    fi
    local rps
    if [ "$route" = status ]; then
        rps=$(wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s scripts/wrk/get.lua http://127.0.0.1:18080 -- \
            "$work/$data/key.txt" "$work/$data/contacts.txt" "/v1/auth/2fa?contactId=" | awk '/Requests\/sec/ {print $2}')
    else
        read -r now next < <("$bin/examples/seed" --codes "$work/$data")
        rps=$(wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s scripts/wrk/verify.lua http://127.0.0.1:18080 -- \
            "$work/$data/key.txt" "$work/$data/contacts.txt" "$now" "$next" | awk '/Requests\/sec/ {print $2}')
    fi
    stop
    echo "$rps"
}
for route in status verify; do
    for round in $(seq "$ROUNDS"); do
        b=$(run before "$route"); off=$(run off "$route"); on=$(run on "$route")
        python3 -c "import sys; r, n, b, off, on = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:6]); print(f'[{r} round {n}] before {b:,.0f}/s  metrics off {off:,.0f}/s  metrics on {on:,.0f}/s  on/off {on / off:.3f}  on/before {on / b:.3f}')" \
            "$route" "$round" "$b" "$off" "$on"
    done
done

echo "== 3. audit verify over ${ROWS:-200000} rows"
ROWS=${ROWS:-200000} cargo bench -q -p rampart-core --bench audit_verify -- --noplot 2>&1 | grep -E 'populated|audit_verify|time:|thrpt:'
