#!/usr/bin/env bash
# Load benchmark of the example server (a script, not a test; results in docs/BENCHMARKS.md).
#
#   scripts/load-bench.sh            # 100 000 contacts, 10 s per route, 32 connections
#   CONTACTS=1000 DURATION=3s scripts/load-bench.sh
#
# Starts rampart-server (release) on a temporary SQLite database seeded with CONTACTS enabled
# contacts, drives GET /v1/auth/2fa and POST /v1/auth/verify2fa from wrk (a second process, on
# loopback), and reports requests/s, latency percentiles, non-2xx answers and the server's
# peak RSS; GET /healthz runs first as a peer (the same server without authentication or a
# contact lookup), so the routes can be read as ratios of it. Needs wrk (Debian package
# `wrk`; installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
CONTACTS=${CONTACTS:-100000}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18080}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}

if ! command -v wrk >/dev/null; then
  echo "== installing wrk"
  (apt-get install -y wrk || (apt-get update && apt-get install -y wrk)) >/dev/null
fi
echo "== building (release)"
cargo build --release --locked -q -p rampart-server --bin rampart-server --example seed
bin=$CARGO_TARGET_DIR/release
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

echo "== seeding $CONTACTS contacts"
"$bin/examples/seed" "$work/bench.db" "$CONTACTS" "$work"
# Flush the seeding's writes now, so the kernel's writeback does not land inside a measurement.
sync
RUST_LOG=warn "$bin/rampart-server" --db "$work/bench.db" --listen "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$PORT"

# Peers in the same run, for ratios: the server's own floor without auth or a contact lookup.
echo "== peer: GET /healthz, one trivial store read ($DURATION, $CONNECTIONS connections)"
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency "$url/healthz"

echo "== GET /v1/auth/2fa ($DURATION, $CONNECTIONS connections)"
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/wrk/get.lua "$url" -- "$work/key.txt" "$work/contacts.txt" "/v1/auth/2fa?contactId="

read -r now next < <("$bin/examples/seed" --codes "$work")
echo "== POST /v1/auth/verify2fa ($DURATION, $CONNECTIONS connections)"
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/wrk/verify.lua "$url" -- "$work/key.txt" "$work/contacts.txt" "$now" "$next"

echo "== server peak RSS: $(grep VmHWM /proc/$server/status | awk '{print $2, $3}')"
grep -ciE 'error|panic' "$work/server.log" | sed 's/^/== server log lines with error or panic: /'
