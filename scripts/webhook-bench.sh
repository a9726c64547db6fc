#!/usr/bin/env bash
# What webhooks cost (a benchmark, never part of `make test`; results in docs/BENCHMARKS.md,
# "Webhooks"):
#
#   scripts/webhook-bench.sh
#
# 1. core/benches/webhooks.rs (criterion): placing an order with and without a webhook endpoint.
# 2. examples/server/benches/delivery.rs: one server's delivery worker, 20,000 queued messages
#    to a loopback receiver that answers 204 at once (one endpoint, then ten), and the time from
#    an order's commit to its first attempt at 200 orders a second.
# Both on an SQLite file and on a throwaway PostgreSQL cluster (scripts/with-postgres.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}
cargo build -q --release -p rampart-core --features postgres --benches
cargo build -q --release -p rampart-server --benches
db() { # NAME: a fresh database on the throwaway cluster, as a URL
    psql "$RAMPART_TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1" >/dev/null
    echo "${RAMPART_TEST_DATABASE_URL/\/postgres\?/\/$1?}"
}
export -f db
scripts/with-postgres.sh bash -c 'set -euo pipefail
    echo "== 1. placing an order, with and without an endpoint (criterion)"
    RAMPART_BENCH_DATABASE_URL=$(db bench_orders) cargo bench -q -p rampart-core --features postgres \
        --bench webhooks -- --noplot 2>&1 | grep -E "^(sqlite|postgres)/|time:|error|panicked"
    echo "== 2. delivery by one server"
    RAMPART_BENCH_DATABASE_URL=$(db bench_delivery) cargo bench -q -p rampart-server --bench delivery'
