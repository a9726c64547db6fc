#!/usr/bin/env bash
# Benchmark of the PostgreSQL store and of the server on it (a script, not a test; results in
# docs/BENCHMARKS.md, "PostgreSQL store").
#
#   scripts/pg-bench.sh                                  # what `make pg-bench` runs
#   CONTACTS=20000 REAL_CONTACTS=500 DURATION=3s PROBE_DURATION=2s scripts/pg-bench.sh
#
# Starts its own PostgreSQL (scripts/with-postgres.sh with RAMPART_PG_DURABLE=1: fsync and
# synchronous commits on, as in production), then in one run:
#  1. fills a `contacts` table of CONTACTS rows (core/benches/postgres.rs `setup`: REAL_CONTACTS
#     made through Service create + enable, the rest sealed the same way and loaded by COPY);
#  2. ROUNDS rounds alternating the floor, pgbench (-M prepared, THREADS clients) running
#     update_contact's locked read-change-write (BEGIN; SELECT ... FOR UPDATE; UPDATE; COMMIT)
#     on random contacts, with the store's verify_2fa from THREADS threads (each call accepted
#     and committed); DURATION each, which goes first turning every round;
#  3. the same for status: pgbench running contact_enabled's SELECT, and the store's status_2fa;
#  4. probes that split the store's cost (round trips, prepared statements, the pool's checkout
#     test), in ROUNDS rounds of PROBE_DURATION each (core/benches/postgres.rs `probes`);
#  5. wrk (CONNECTIONS connections, DURATION) on GET /healthz and GET /v1/auth/2fa of the release
#     rampart-server on SQLite, on the PostgreSQL (one instance), and two instances on it at once
#     (a wrk each, rates summed), SERVER_CONTACTS enabled contacts made over HTTP; ROUNDS rounds,
#     the setups in an order that turns each round; the servers' peak RSS.
# On a shared machine the load moves between two measurements, so each ratio is the median of
# the per-round ratios. Prints a markdown table to paste; RESULTS_DIR=DIR keeps the raw outputs.
# Needs wrk (Debian package `wrk`; installed when missing) and pgbench (Debian's postgresql,
# which with-postgres.sh installs).
set -euo pipefail
cd "$(dirname "$0")/.."
CONTACTS=${CONTACTS:-1000000}
REAL_CONTACTS=${REAL_CONTACTS:-10000}
THREADS=${THREADS:-8}
PGBENCH_JOBS=${PGBENCH_JOBS:-2}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
PROBE_DURATION=${PROBE_DURATION:-3s}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_CONTACTS=${SERVER_CONTACTS:-1000}
PORT=${PORT:-18090}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/rampart-target}
export CONTACTS REAL_CONTACTS THREADS ROUNDS DURATION PROBE_DURATION CONNECTIONS SERVER_CONTACTS
bench=(cargo bench -q --locked -p rampart-core --features postgres --bench postgres)

if [ "${1:-}" != --inner ]; then
  if ! command -v wrk >/dev/null; then
    echo "== installing wrk"
    (apt-get install -y wrk || (apt-get update && apt-get install -y wrk)) >/dev/null
  fi
  echo "== building (release): rampart-server and the store bench"
  cargo build --release --locked -q -p rampart-server --bin rampart-server
  "${bench[@]}" --no-run
  RAMPART_PG_DURABLE=1 exec scripts/with-postgres.sh "$0" --inner
fi

pg_bin=${RAMPART_TEST_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)}
base=$RAMPART_TEST_DATABASE_URL
# The URL of database $1 on the same server.
url_of() {
  local path=${base%%\?*} query=""
  [[ $base == *\?* ]] && query="?${base#*\?}"
  echo "${path%/*}/$1$query"
}
bin=$CARGO_TARGET_DIR/release
work=$(mktemp -d)
out=$work/out
mkdir -p "$out"
servers=()
bench_db=rampart_bench_$$ server_db=rampart_server_$$
cleanup() {
  if [ -n "${RESULTS_DIR:-}" ]; then mkdir -p "$RESULTS_DIR" && cp -r "$out"/. "$RESULTS_DIR"/ || true; fi
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$pg_bin/psql" "$base" -qc "DROP DATABASE IF EXISTS $bench_db WITH (FORCE)" \
    -c "DROP DATABASE IF EXISTS $server_db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"$pg_bin/psql" "$base" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE $bench_db" -c "CREATE DATABASE $server_db"
export RAMPART_BENCH_DATABASE_URL
RAMPART_BENCH_DATABASE_URL=$(url_of "$bench_db")
server_url=$(url_of "$server_db")

{
  echo "nproc $(nproc)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
  echo "kernel $(uname -r)"
  echo "postgres $("$pg_bin/psql" "$base" -Atc 'SHOW server_version')"
  echo "settings $("$pg_bin/psql" "$base" -Atc "SELECT string_agg(name || '=' || current_setting(name), ', ' ORDER BY name) \
    FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'shared_buffers', 'wal_sync_method')")"
  echo "load_start $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"
echo "== machine: $(tr '\n' ';' <"$out/machine.txt")"

echo "== [1/6] filling $CONTACTS contacts ($REAL_CONTACTS through Service create + enable, the rest by COPY)"
"${bench[@]}" -- setup "$work/state" | tee "$out/setup.txt"

# update_contact's transaction on the real schema: lock one (partner_id, contact_id) row, read
# it, write the row back (a new step, failures cleared), commit. The bulk contacts' ids are
# BULK_PREFIX (core/benches/postgres.rs, "RAMPBULK") followed by the row number.
cat >"$work/verify.sql" <<'SQL'
\set c random(0, :bulk - 1)
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT kyc_passed, enabled, secret, pending, pending_created_at, last_step, failures, last_failure_at
  FROM contacts WHERE partner_id = :partner::bytea AND contact_id = '\x52414d5042554c4b'::bytea || int8send(:c)
  FOR UPDATE;
UPDATE contacts SET kyc_passed = kyc_passed, enabled = enabled, secret = secret, pending = pending,
    pending_created_at = pending_created_at, last_step = last_step + 1, failures = 0, last_failure_at = NULL
  WHERE partner_id = :partner::bytea AND contact_id = '\x52414d5042554c4b'::bytea || int8send(:c);
COMMIT;
SQL
# status's read (contact_enabled).
cat >"$work/status.sql" <<'SQL'
\set c random(0, :bulk - 1)
SELECT enabled FROM contacts WHERE partner_id = :partner::bytea AND contact_id = '\x52414d5042554c4b'::bytea || int8send(:c);
SQL
partner_hex=$(head -n 1 "$work/state" | tr -d '-')
bulk=$(sed -n 2p "$work/state")
floor() { # verify|status ROUND: pgbench on $work/MODE.sql
  local name=floor_$1_r$2
  (cd "$work" && "$pg_bin/pgbench" -n -M prepared -c "$THREADS" -j "$PGBENCH_JOBS" -T "${DURATION%s}" \
    -f "$1.sql" -D "partner=\\x$partner_hex" -D "bulk=$bulk" -l --sampling-rate=0.1 --log-prefix="$out/log_$name" \
    "$RAMPART_BENCH_DATABASE_URL") >"$out/$name.txt" 2>&1 || { cat "$out/$name.txt"; exit 1; }
  echo "   round $2: pgbench $(grep -E '^tps' "$out/$name.txt" | cut -d' ' -f1-3)," \
    "$(grep -E '^latency average' "$out/$name.txt")"
}
store() { # verify|status ROUND
  "${bench[@]}" -- "$1" "$work/state" "$2" | tee -a "$out/store.txt" | sed "s/^result /   round $2: /"
}
interleave() { # verify|status: ROUNDS rounds of the floor and the store, the first turning
  for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then floor "$1" "$round"; store "$1" "$round"; else store "$1" "$round"; floor "$1" "$round"; fi
  done
}

echo "== [2/6] verify: $ROUNDS rounds of pgbench (update_contact's SQL, $THREADS clients, $PGBENCH_JOBS threads) and the store's verify_2fa ($THREADS threads), $DURATION each"
interleave verify
# pgbench counts a statement that matched no row as done: check that the floor wrote rows.
moved=$("$pg_bin/psql" "$RAMPART_BENCH_DATABASE_URL" -Atc \
  "SELECT COUNT(*) FROM contacts WHERE last_step > (SELECT MIN(last_step) FROM contacts)")
echo "   contacts written since the fill: $moved"
[ "$moved" -gt 0 ] || { echo "no contact was written" >&2; exit 1; }

echo "== [3/6] status: $ROUNDS rounds of pgbench (contact_enabled's SELECT) and the store's status_2fa, $DURATION each"
interleave status

echo "== [4/6] probes: $ROUNDS rounds of the store and its SQL sent three ways, $PROBE_DURATION each"
"${bench[@]}" -- probes "$work/state" | tee "$out/probes.txt" | sed 's/^result /   /'

# The servers. One master key for all (the two PostgreSQL instances must share it).
printf '1:%s\n' "$(printf '7d%.0s' $(seq 32))" >"$work/master.key"
chmod 600 "$work/master.key"
start_server() { # DB PORT: starts a release server, waits for /healthz, appends its pid to servers
  RUST_LOG=warn "$bin/rampart-server" --db "$1" --master-key-file "$work/master.key" \
    --listen "127.0.0.1:$2" >>"$work/server-$2.log" 2>&1 &
  servers+=($!)
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null && return; sleep 0.1; done
  echo "the server on port $2 did not answer /healthz" >&2
  cat "$work/server-$2.log" >&2
  exit 1
}
# DB NAME PORT: a partner by the CLI and SERVER_CONTACTS contacts enabled over HTTP on the server
# at PORT (a tiny RFC 6238 TOTP here), into $work/NAME.key and $work/NAME.contacts.
make_contacts() {
  RUST_LOG=warn "$bin/rampart-server" partner create --db "$1" --master-key-file "$work/master.key" --name Bench \
    --environment sandbox | python3 -c 'import json, sys; print(json.load(sys.stdin)["secretKey"])' >"$work/$2.key"
  python3 - "$3" "$work/$2.key" "$SERVER_CONTACTS" "$work/$2.contacts" <<'PY'
import base64, hashlib, hmac, http.client, json, struct, sys, time, uuid
port, key, count, path = int(sys.argv[1]), open(sys.argv[2]).read().strip(), int(sys.argv[3]), sys.argv[4]
conn = http.client.HTTPConnection("127.0.0.1", port)
def call(method, url, body=None):
    headers = {"Authorization": "Bearer " + key}
    if body is not None:
        headers["Content-Type"], body = "application/json", json.dumps(body)
    conn.request(method, url, body, headers)
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        sys.exit(f"{method} {url}: {response.status} {data[:200]!r}")
    return json.loads(data)
def code(manual):
    secret = base64.b32decode(manual.upper() + "=" * (-len(manual) % 8))
    mac = hmac.new(secret, struct.pack(">Q", int(time.time()) // 30), hashlib.sha1).digest()
    offset = mac[-1] & 15
    return "%06d" % ((struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 1000000)
with open(path, "w") as out:
    for _ in range(count):
        contact = str(uuid.uuid4())
        manual = call("GET", f"/v1/auth/create2fa?contactId={contact}")["details"]["manual"]
        call("POST", "/v1/auth/enable2fa", {"contactId": contact, "token": code(manual)})
        out.write(contact + "\n")
PY
}
# NAME CONTACTS ROUND PORT...: wrk on /healthz, then on the status route, every PORT at once.
drive() {
  local name=$1 setup=$2 round=$3 port pids file
  shift 3
  for route in healthz status; do
    pids=()
    for port in "$@"; do
      file=$out/wrk_${name}_${route}_r${round}_$port.txt
      if [ "$route" = healthz ]; then
        wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency "http://127.0.0.1:$port/healthz" >"$file" &
      else
        wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s scripts/wrk/get.lua "http://127.0.0.1:$port" -- \
          "$work/$setup.key" "$work/$setup.contacts" "/v1/auth/2fa?contactId=" >"$file" &
      fi
      pids+=($!)
    done
    wait "${pids[@]}"
    echo "   round $round, $name, $route: $(grep -h 'Requests/sec' "$out"/wrk_"${name}_${route}_r${round}"_*.txt |
      awk '{print $2}' | paste -sd+) req/s$(cat "$out"/wrk_"${name}_${route}_r${round}"_*.txt |
      grep -E 'Non-2xx|Socket errors' | sed 's/^ */; /' | tr -d '\n')"
  done
}

echo "== [5/6] servers: SQLite, PostgreSQL (one instance), two instances on it; $SERVER_CONTACTS contacts over HTTP each; $ROUNDS rounds of wrk /healthz and GET /v1/auth/2fa, $DURATION, $CONNECTIONS connections per instance"
start_server "$work/server.db" "$PORT"
start_server "$server_url" "$((PORT + 1))"
start_server "$server_url" "$((PORT + 2))"
make_contacts "$work/server.db" sqlite "$PORT"
make_contacts "$server_url" pg "$((PORT + 1))"
sync
setups=(sqlite pg1 pg2)
for round in $(seq "$ROUNDS"); do
  for i in 0 1 2; do
    case ${setups[$(((i + round - 1) % 3))]} in
      sqlite) drive sqlite sqlite "$round" "$PORT" ;;
      pg1) drive pg1 pg "$round" "$((PORT + 1))" ;;
      pg2) drive pg2 pg "$round" "$((PORT + 1))" "$((PORT + 2))" ;;
    esac
  done
done
for i in 0 1 2; do
  echo "$i $(awk '/VmHWM/ {print $2}' "/proc/${servers[$i]}/status")" >>"$out/rss.txt"
done
echo "load_end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
grep -ciE 'error|panic' "$work"/server-*.log | sed 's/^/== server log lines with error or panic: /' || true

echo "== [6/6] results (markdown)"
python3 - "$out" <<'PY'
import glob, os, re, statistics, sys
out = sys.argv[1]
env = {k: os.environ[k] for k in
       ["CONTACTS", "REAL_CONTACTS", "THREADS", "ROUNDS", "DURATION", "PROBE_DURATION", "CONNECTIONS", "SERVER_CONTACTS"]}
machine = dict(line.rstrip("\n").split(" ", 1) for line in open(f"{out}/machine.txt"))
med = statistics.median

def pct(values, p):
    values = sorted(values)
    return values[min(int(len(values) * p), len(values) - 1)]

def floor(mode, rnd):
    text = open(f"{out}/floor_{mode}_r{rnd}.txt").read()
    failed = re.search(r"^number of failed transactions: (\d+)", text, re.M)
    micros = [int(line.split()[2]) for f in glob.glob(f"{out}/log_floor_{mode}_r{rnd}.*") for line in open(f)]
    return {"ops": float(re.search(r"^tps = ([\d.]+)", text, re.M).group(1)), "p50": pct(micros, 0.5) / 1000,
            "p99": pct(micros, 0.99) / 1000, "errors": int(failed.group(1)) if failed else 0}

store = {}  # (name, round) -> figures; the probes' file's names get "probes_" in front
for path, prefix in [("store.txt", ""), ("probes.txt", "probes_")]:
    for line in open(f"{out}/{path}"):
        if line.startswith("result "):
            name, *fields = line.split()[1:]
            kv = dict(f.split("=") for f in fields)
            store[(prefix + name, int(kv["round"]))] = {"ops": float(kv["ops_per_s"]), "p50": float(kv["p50_ms"]),
                                                         "p99": float(kv["p99_ms"]), "errors": int(kv["errors"])}
rounds = range(1, int(env["ROUNDS"]) + 1)

def summary(runs):
    return {"ops": med([r["ops"] for r in runs]), "p50": med([r["p50"] for r in runs]),
            "p99": med([r["p99"] for r in runs]), "errors": sum(r["errors"] for r in runs),
            "each": " / ".join(f"{r['ops']:,.0f}" for r in runs)}

def ratio(num, den):
    values = sorted(n / d for n, d in zip(num, den))
    return med(values), values

def show_ratio(r):
    return f"**{r[0]:.2f}** ({r[1][0]:.2f} to {r[1][-1]:.2f})" if len(r[1]) > 1 else f"**{r[0]:.2f}**"

print(f"Command: `make pg-bench` (scripts/pg-bench.sh; " + ", ".join(f"{k}={v}" for k, v in env.items()) + ").")
print(f"Machine: nproc {machine['nproc']}, \"{machine['cpu']}\", Linux {machine['kernel']}, PostgreSQL "
      f"{machine['postgres']} ({machine['settings']}); load average {machine['load_start']} at the start, "
      f"{machine.get('load_end', '?')} at the end.")
print()
print(f"| {env['THREADS']} clients / threads, {env['CONTACTS']} contacts | ops/s (median) | each round | "
      f"ratio to the floor, median of rounds (range) | p50 | p99 | errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
results = {}
for mode, floor_label, store_name, store_label in [
        ("verify", "floor: pgbench, `update_contact`'s SQL", "store_verify_commit",
         "**store: `verify_2fa`, accepted and committed**"),
        ("status", "floor: pgbench, `contact_enabled`'s SELECT", "store_status", "**store: `status_2fa`**")]:
    floors = [floor(mode, r) for r in rounds]
    stores = [store[(store_name, r)] for r in rounds]
    results[mode] = (summary(floors), summary(stores), ratio([s["ops"] for s in stores], [f["ops"] for f in floors]))
    for label, s, shown in [(floor_label, results[mode][0], "1"), (store_label, results[mode][1], show_ratio(results[mode][2]))]:
        print(f"| {label} | {s['ops']:,.0f} | {s['each']} | {shown} | {s['p50']:.2f} ms | {s['p99']:.2f} ms | {s['errors']} |")
print()
labels = {
    "store_verify_commit": "store: `verify_2fa`",
    "probe_verify_sql_as_store": "verify's SQL as text, checkout test (the store's first version)",
    "probe_verify_sql_prepared_checkout_test": "verify's SQL prepared once per connection, checkout test",
    "probe_verify_sql_prepared": "verify's SQL prepared once per connection, no checkout test",
    "store_status": "store: `status_2fa`",
    "probe_status_sql_as_store": "status's SQL as text, checkout test (the store's first version)",
    "probe_status_sql_prepared_checkout_test": "status's SQL prepared once, checkout test",
    "probe_status_sql_prepared": "status's SQL prepared once, no checkout test",
}
print(f"| probes, {env['PROBE_DURATION']} each, plain client per thread | ops/s (median) | each round | "
      "ratio to the store, median of rounds (range) | p50 | p99 | errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, label in labels.items():
    runs = [store.get(("probes_" + name, r)) for r in rounds]
    base = [store.get(("probes_" + ("store_verify_commit" if "verify" in name else "store_status"), r)) for r in rounds]
    if None in runs or None in base:
        continue
    s = summary(runs)
    shown = "1" if name.startswith("store") else show_ratio(ratio([r["ops"] for r in runs], [b["ops"] for b in base]))
    print(f"| {label} | {s['ops']:,.0f} | {s['each']} | {shown} "
          f"| {s['p50']:.2f} ms | {s['p99']:.2f} ms | {s['errors']} |")
print()

def unit(text):
    value, suffix = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[suffix]

def wrk(name, route, rnd):
    runs = []
    for path in sorted(glob.glob(f"{out}/wrk_{name}_{route}_r{rnd}_*.txt")):
        text = open(path).read()
        bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
        sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
        runs.append({"ops": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1)),
                     "p50": unit(re.search(r"^\s+50%\s+(\S+)", text, re.M).group(1)),
                     "p99": unit(re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1)),
                     "errors": (int(bad.group(1)) if bad else 0) + (sum(map(int, sock.groups())) if sock else 0)})
    return runs

rss = dict(line.split() for line in open(f"{out}/rss.txt"))
memory = {"sqlite": f"{int(rss['0']) / 1024:.1f} MB", "pg1": "",
          "pg2": f"{int(rss['1']) / 1024:.1f} + {int(rss['2']) / 1024:.1f} MB (instance A also served the one-instance rounds)"}
server = {}
print(f"| server ({env['CONNECTIONS']} connections per instance) | route | req/s (median) | each round | ratio to /healthz, "
      "median (range) | p50 | p99 | non-2xx + socket errors | peak RSS |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for name, label in [("sqlite", "SQLite"), ("pg1", "PostgreSQL, 1 instance"), ("pg2", "PostgreSQL, 2 instances")]:
    per = {route: [wrk(name, route, r) for r in rounds] for route in ("healthz", "status")}
    totals = {route: [sum(i["ops"] for i in runs) for runs in per[route]] for route in per}
    server[name] = totals
    for route, path in [("healthz", "GET /healthz"), ("status", "GET /v1/auth/2fa")]:
        runs = per[route]
        lat = lambda k: " / ".join(f"{med([run[i][k] for run in runs]):.2f}" for i in range(len(runs[0]))) + " ms"
        shown = "1" if route == "healthz" else show_ratio(ratio(totals["status"], totals["healthz"]))
        print(f"| {label} | {path} | {med(totals[route]):,.0f} | {' / '.join(f'{t:,.0f}' for t in totals[route])} | {shown} "
              f"| {lat('p50')} | {lat('p99')} | {sum(i['errors'] for run in runs for i in run)} "
              f"| {memory[name] if route == 'status' else ''} |")
print()
v_floor, v_store, v_ratio = results["verify"]
s_floor, s_store, s_ratio = results["status"]
print(f"- store verify / pgbench floor: median of per-round ratios {show_ratio(v_ratio)} (target >= 0.70: "
      f"{'met' if v_ratio[0] >= 0.70 else 'NOT met'})")
print(f"- store status reads: **{s_store['ops']:,.0f}/s** median (target >= 25k/s: "
      f"{'met' if s_store['ops'] >= 25000 else 'NOT met'}); {show_ratio(s_ratio)} of pgbench's {s_floor['ops']:,.0f}/s")
pg_sqlite = ratio(server["pg1"]["status"], server["sqlite"]["status"])
pg_sqlite_h = ratio(server["pg1"]["healthz"], server["sqlite"]["healthz"])
two_one = ratio(server["pg2"]["status"], server["pg1"]["status"])
two_one_h = ratio(server["pg2"]["healthz"], server["pg1"]["healthz"])
print(f"- server on PostgreSQL / on SQLite: status {show_ratio(pg_sqlite)}, /healthz {show_ratio(pg_sqlite_h)}")
print(f"- two instances / one: status {show_ratio(two_one)}, /healthz {show_ratio(two_one_h)}")
PY
