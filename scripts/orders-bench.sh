#!/usr/bin/env bash
# Load benchmark of the partner's order read (a script, not a test; results in
# docs/BENCHMARKS.md).
#
#   scripts/orders-bench.sh                 # 2 000 orders, 10 s per route, 32 connections
#   ORDERS=200 DURATION=3s scripts/orders-bench.sh
#
# Starts rampart-server (release, sandbox) on a temporary SQLite database, places ORDERS
# sandbox orders through the widget session routes (10 signed-in contacts), then drives
# GET /healthz (the peer: no authentication, one trivial store read) and
# GET /v1/widget/orders/{id} (secret key, random order ids) from wrk in the same run, so the
# route reads as a ratio of the peer. Needs wrk (Debian package `wrk`; installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
ORDERS=${ORDERS:-2000}
DURATION=${DURATION:-10s}
CONNECTIONS=${CONNECTIONS:-32}
PORT=${PORT:-18081}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}

if ! command -v wrk >/dev/null; then
  echo "== installing wrk"
  (apt-get install -y wrk || (apt-get update && apt-get install -y wrk)) >/dev/null
fi
echo "== building (release)"
cargo build --release --locked -q -p rampart-server --bin rampart-server
bin=$CARGO_TARGET_DIR/release
work=$(mktemp -d)
trap 'kill "${server:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin/rampart-server" partner create --db "$work/bench.db" --name "Bench" --environment sandbox >"$work/partner.json"
RUST_LOG=warn "$bin/rampart-server" --db "$work/bench.db" --listen "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
url="http://127.0.0.1:$PORT"

echo "== placing $ORDERS sandbox orders"
PYTHONPATH=scripts python3 - "$url" "$work" "$ORDERS" <<'PY'
import json, sys
from widget_client import place_order, signed_in_session
url, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
partner = json.load(open(f"{work}/partner.json"))
tokens = [signed_in_session(url, partner["publicKey"], f"buyer{n}@example.com") for n in range(10)]
order = {"coin": "btc", "amount": "25", "currency": "usd", "address": "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"}
with open(f"{work}/orders.txt", "w") as out:
    for n in range(count):
        out.write(place_order(url, tokens[n % len(tokens)], order)["orderId"] + "\n")
with open(f"{work}/key.txt", "w") as out:
    out.write(partner["secretKey"] + "\n")
PY
sync

echo "== peer: GET /healthz, one trivial store read ($DURATION, $CONNECTIONS connections)"
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency "$url/healthz"

echo "== GET /v1/widget/orders/{id} ($DURATION, $CONNECTIONS connections)"
wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/wrk/get.lua "$url" -- "$work/key.txt" "$work/orders.txt" "/v1/widget/orders/"

echo "== server peak RSS: $(grep VmHWM /proc/$server/status | awk '{print $2, $3}')"
grep -ciE 'error|panic' "$work/server.log" | sed 's/^/== server log lines with error or panic: /' || true
