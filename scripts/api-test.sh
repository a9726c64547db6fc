#!/usr/bin/env bash
# schemathesis against the real rampart-server: every check on (positive-data acceptance
# included), a fixed seed, a bounded number of examples; any failure fails the step.
#
#   scripts/api-test.sh SERVER_BINARY SCHEMATHESIS_BINARY
#
# A throwaway sandbox database and partner; the server listens on a free loopback port and is
# stopped on exit. Tunables: API_SEED, API_MAX_EXAMPLES.
set -euo pipefail
server=$1
schemathesis=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

"$server" partner create --db "$work/api.db" --name "API test" --environment sandbox >"$work/partner.json" 2>/dev/null
key=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["secretKey"])' "$work/partner.json")
RAMPART_PUBLIC_KEY=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["publicKey"])' "$work/partner.json")
export RAMPART_PUBLIC_KEY
RUST_LOG=info "$server" --db "$work/api.db" --listen 127.0.0.1:0 2>"$work/server.log" &
pid=$!
address=
for _ in $(seq 1 300); do
    address=$(sed -n 's/.*listening address=\([0-9.:]*\).*/\1/p;T;q' "$work/server.log")
    [ -n "$address" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$address" ] || { echo "rampart-server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
base="http://$address"

# The widget session routes take a session token (ws_...), not the secret key: three signed-in
# sessions of the test partner, one for sign-out, one for the sandbox KYC control (which moves
# its contact to the 2FA setup step) and one for every other session route.
{ read -r RAMPART_SESSION; read -r RAMPART_SESSION_KYC; read -r RAMPART_SESSION_CLOSE; } < <(
    python3 "$root/scripts/widget_client.py" "$base" "$RAMPART_PUBLIC_KEY" \
        session@example.com session-kyc@example.com session-close@example.com)
[ -n "${RAMPART_SESSION_CLOSE:-}" ] || { echo "cannot sign in to the widget" >&2; exit 1; }
export RAMPART_SESSION RAMPART_SESSION_KYC RAMPART_SESSION_CLOSE
export RAMPART_SECRET_KEY=$key

cd "$root/tests/api"
RAMPART_API=$base SCHEMATHESIS_HOOKS=rampart_hooks PYTHONPATH=. "$schemathesis" \
    --config-file schemathesis.toml run "$base/openapi.json" \
    --checks all \
    --seed "${API_SEED:-20261122}" --max-examples "${API_MAX_EXAMPLES:-40}" \
    --workers 1 --no-color --generation-database none
