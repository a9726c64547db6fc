#!/usr/bin/env bash
# What recovery codes cost (a benchmark, never part of `make test`; results in
# docs/BENCHMARKS.md, "Recovery codes").
#
#   scripts/recovery-bench.sh          # BASE = the last commit before recovery codes
#
# 1. core/benches/enable.rs (enable through Service, on an SQLite file and on PostgreSQL) on the
#    code of BASE and on today's, side by side: the bench uses only API that predates recovery
#    codes, so the same file builds on both. PostgreSQL is a throwaway cluster
#    (scripts/with-postgres.sh), one database per side.
# 2. core/benches/recovery.rs on today's code: a verify by recovery code beside a verify by
#    authenticator code, on SQLite and on PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
BASE=${BASE:-828ac94}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}
base_src=${BASE_SRC:-$HOME/.cache/rampart-bench-base-src}
base_target=${BASE_TARGET:-$HOME/.cache/rampart-bench-base-target}

echo "== the code of $BASE in $base_src (built in $base_target)"
rm -rf "$base_src" && mkdir -p "$base_src"
git archive "$BASE" | tar -x -C "$base_src"
cp core/benches/enable.rs "$base_src/core/benches/enable.rs"
printf '\n[[bench]]\nname = "enable"\nharness = false\n' >>"$base_src/core/Cargo.toml"

run() { # DIR TARGET LABEL BENCH: one bench of one side, against a database of its own
    local dir=$1 target=$2 label=$3 bench=$4
    psql "$RAMPART_TEST_DATABASE_URL" -qc "DROP DATABASE IF EXISTS bench_$label" -c "CREATE DATABASE bench_$label" >/dev/null
    (cd "$dir" && RAMPART_BENCH_DATABASE_URL="${RAMPART_TEST_DATABASE_URL/\/postgres\?/\/bench_$label?}" \
        CARGO_TARGET_DIR="$target" cargo bench -q -p rampart-core --features postgres --bench "$bench" -- --noplot 2>&1 |
        grep -E '^(sqlite|postgres)/|time:|error|panicked' | sed "s/^/[$label] /")
}
export -f run
echo "== 1. enable before and after recovery codes; 2. verify by token and by recovery code (criterion)"
scripts/with-postgres.sh bash -c "set -o pipefail; run '$base_src' '$base_target' before enable && \
    run '$root' '$CARGO_TARGET_DIR' after enable && run '$root' '$CARGO_TARGET_DIR' verify recovery"
