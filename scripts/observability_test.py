"""The audit trail and the metrics with real parts (SPEC 9.1, 9.2), against the real server.

    python observability_test.py SERVER_BINARY PROMTOOL PROMETHEUS

A throwaway sandbox database, partner and clock file; the server listens on free loopback ports
(public and metrics) and is stopped on exit. Then:

1. a scripted sequence over HTTP moves every counter by an exact amount: each sample of the
   scraped text is checked against what the script itself did and counted;
2. `promtool check metrics` passes on the scraped text, and no label holds an id, key or email;
3. a real Prometheus scrapes the metrics listener and its query API returns the series;
4. `audit export` gives JSON lines whose every hash an independent RFC 8785 implementation
   (the `rfc8785` package) recomputes, linked row to row; `--since` filters by time;
5. `audit verify` passes, then fails naming the partner and the first bad seq after an edit, a
   deletion and a reordering of rows (each on a copy of the database).
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pyotp
import rfc8785

SERVER, PROMTOOL, PROMETHEUS = sys.argv[1:4]
T0 = 1_800_000_000  # the test clock's start, on a step boundary
GENESIS = "0" * 64


def step(text: str) -> None:
    print(f"-- {text}", flush=True)


class Failure(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failure(what)


def wait_for(pattern: str, log: str, proc: subprocess.Popen[bytes]) -> str:
    """The value after `pattern` in the log file, once the process wrote it."""
    for _ in range(300):
        with open(log, encoding="utf-8") as f:
            for line in f:
                if pattern in line:
                    return line.split(pattern, 1)[1].split()[0]
        if proc.poll() is not None:
            raise Failure(f"the process ended: {open(log, encoding='utf-8').read()}")
        time.sleep(0.1)
    raise Failure(f"no '{pattern}' in {log}")


class Api:
    """The partner API, counting every answer by (route template, method, status)."""

    def __init__(self, base: str, key: str) -> None:
        self.base, self.key = base, key
        self.tally: collections.Counter[tuple[str, str, int]] = collections.Counter()

    def call(self, method: str, route: str, path: str, body: dict[str, object] | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, text = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        self.tally[(route, method, status)] += 1
        return status, json.loads(text)

    def attempt(self, op: str, contact: str, token: object) -> tuple[int, dict]:
        body = {"contactId": contact} if token is None else {"contactId": contact, "token": token}
        return self.call("POST", f"/v1/auth/{op}", f"/v1/auth/{op}", body)

    def recover(self, op: str, contact: str, code: str) -> tuple[int, dict]:
        return self.call("POST", f"/v1/auth/{op}", f"/v1/auth/{op}", {"contactId": contact, "recoveryCode": code})

    def create(self, contact: str) -> pyotp.TOTP:
        status, body = self.call("GET", "/v1/auth/create2fa", f"/v1/auth/create2fa?contactId={contact}")
        check(status == 200, f"create: {status} {body}")
        return pyotp.TOTP(body["details"]["manual"])


class Clock:
    """The server's `--test-clock-file`: the absolute Unix time, rewritten by rename."""

    def __init__(self, path: str) -> None:
        self.path, self.now = path, T0
        self.set(T0)

    def set(self, now: int) -> None:
        self.now = now
        with open(self.path + ".new", "w", encoding="ascii") as f:
            f.write(f"{now}\n")
        os.replace(self.path + ".new", self.path)

    def advance(self, seconds: int) -> None:
        self.set(self.now + seconds)


def samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            out[series] = float(value)
    return out


def scripted_sequence(api: Api, clock: Clock, db: str) -> dict[str, float]:
    """Drive every counter; return the exact value each series must then have."""
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    want: collections.Counter[str] = collections.Counter()

    def attempts(op: str, result: str, n: int = 1, factor: str = "token") -> None:
        want[f'rampart_2fa_attempts_total{{operation="{op}",factor="{factor}",result="{result}"}}'] += n
        want[f'rampart_2fa_attempt_duration_seconds_count{{operation="{op}"}}'] += n

    def transition(name: str) -> None:
        want[f'rampart_2fa_transitions_total{{transition="{name}"}}'] += 1

    def audit(event: str) -> None:
        want[f'rampart_audit_events{{event="{event}"}}'] += 1

    totp = api.create(a)
    transition("created"), audit("2fa.created")
    check(api.attempt("enable2fa", a, None)[0] == 401, "missing token")
    attempts("enable", "missing")
    wrong = next(f"{n:06d}" for n in range(10**6) if f"{n:06d}" not in {totp.at(clock.now + d) for d in (-30, 0, 30)})
    check(api.attempt("enable2fa", a, wrong)[0] == 401, "wrong code")
    attempts("enable", "rejected")
    code = totp.at(clock.now)
    status, body = api.attempt("enable2fa", a, code)
    check(status == 200, "enable")
    attempts("enable", "accepted"), transition("enabled"), audit("2fa.enabled"), audit("recovery_codes.issued")
    codes = body["details"]["recoveryCodes"]
    check(api.attempt("verify2fa", a, code)[0] == 401, "replay")
    attempts("verify", "replayed")
    # Recovery codes: one used, then presented again (a reuse), one wrong; then a new set.
    check(api.recover("verify2fa", a, codes[0])[0] == 200, "verify by recovery code")
    attempts("verify", "accepted", factor="recovery_code"), audit("recovery_code.used")
    check(api.recover("verify2fa", a, codes[0].lower())[0] == 401, "a reused recovery code")
    attempts("verify", "replayed", factor="recovery_code"), audit("recovery_code.reused")
    want["rampart_recovery_code_reuse_total"] += 1
    check(api.recover("verify2fa", a, "0000-0000-0000-0000-0000-0000")[0] == 401, "a wrong recovery code")
    attempts("verify", "rejected", factor="recovery_code")
    clock.advance(30)
    status, _ = api.call("POST", "/v1/auth/recoveryCodes", "/v1/auth/recoveryCodes",
                         {"contactId": a, "token": totp.at(clock.now)})
    check(status == 200, "regenerate")
    attempts("regenerate", "accepted"), audit("recovery_codes.issued")
    for _ in range(5):
        check(api.attempt("verify2fa", a, "abc")[0] == 401, "malformed")
    attempts("verify", "rejected", 5)
    check(api.attempt("verify2fa", a, "abc")[0] == 429, "throttled")
    attempts("verify", "throttled")
    clock.advance(31)
    check(api.attempt("disable2fa", a, totp.at(clock.now))[0] == 200, "disable")
    attempts("disable", "accepted"), transition("disabled"), audit("2fa.disabled")
    check(api.attempt("verify2fa", a, "123456")[0] == 409, "not enabled")
    attempts("verify", "error")

    # 100 failures lock (each after its back-off has passed), then the lock answers.
    totp_b = api.create(b)
    transition("created"), audit("2fa.created")
    status, body = api.attempt("enable2fa", b, totp_b.at(clock.now))
    check(status == 200, "enable b")
    attempts("enable", "accepted"), transition("enabled"), audit("2fa.enabled"), audit("recovery_codes.issued")
    codes_b = body["details"]["recoveryCodes"]
    for _ in range(100):
        clock.advance(3600)
        check(api.attempt("verify2fa", b, "abc")[0] == 401, "failure")
    attempts("verify", "rejected", 100), transition("locked"), audit("2fa.locked")
    check(api.attempt("verify2fa", b, "abc")[0] == 423, "locked")
    attempts("verify", "locked")
    # Locked for authenticator codes only: a recovery code turns 2FA off.
    check(api.recover("disable2fa", b, codes_b[4])[0] == 200, "disable a locked contact by recovery code")
    attempts("disable", "accepted", factor="recovery_code"), transition("disabled")
    audit("recovery_code.used"), audit("2fa.disabled")

    # An audit write that fails inside the store's transaction (a trigger refuses the insert):
    # the enable answers its 500 and is counted as a store error and an audit write failure.
    c = str(uuid.uuid4())
    totp_c = api.create(c)
    transition("created"), audit("2fa.created")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER no_audit BEFORE INSERT ON audit_events BEGIN SELECT RAISE(ABORT, 'read-only'); END"
        )
    status, body = api.attempt("enable2fa", c, totp_c.at(clock.now))
    check((status, body) == (500, {"message": "Error enabling 2FA", "code": 500}), f"audit failure: {body}")
    attempts("enable", "error")
    want['rampart_store_errors_total{operation="update_contact"}'] += 1
    want["rampart_audit_write_failures_total"] += 1
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER no_audit")
    status, _ = api.call("GET", "/v1/audit", "/v1/audit?limit=0")
    check(status == 400, "a bad limit")

    for (route, method, status), n in api.tally.items():
        want[f'rampart_http_requests_total{{route="{route}",method="{method}",status="{status}"}}'] += n
        want[f'rampart_http_request_duration_seconds_count{{route="{route}"}}'] += n
    want['rampart_build_info{version="0.1.0",environment="sandbox",store="sqlite"}'] = 1
    return dict(want)


def prometheus_sees(metrics_address: str, work: str, expected: dict[str, float]) -> None:
    port = free_port()
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w", encoding="utf-8") as f:
        f.write(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
            "scrape_configs:\n  - job_name: rampart\n"
            f"    static_configs:\n      - targets: ['{metrics_address}']\n"
        )
    log = os.path.join(work, "prometheus.log")
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={work}/tsdb",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        queries = {
            'rampart_2fa_attempts_total{operation="verify",factor="token",result="rejected"}':
                expected['rampart_2fa_attempts_total{operation="verify",factor="token",result="rejected"}'],
            "rampart_recovery_code_reuse_total": 1,
            'rampart_audit_events{event="2fa.locked"}': 1,
            'rampart_2fa_transitions_total{transition="locked"}': 1,
            'rampart_build_info{store="sqlite"}': 1,
            "rampart_audit_write_failures_total": 1,
        }
        pending = dict(queries)
        deadline = time.time() + 60
        while pending and time.time() < deadline:
            for query, value in list(pending.items()):
                url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
                try:
                    with urllib.request.urlopen(url, timeout=5) as r:
                        result = json.load(r)["data"]["result"]
                except (urllib.error.URLError, ConnectionError):
                    break  # not up yet
                if len(result) == 1 and float(result[0]["value"][1]) == value:
                    check(result[0]["metric"].get("job") == "rampart", f"{query}: {result}")
                    del pending[query]
            time.sleep(0.5)
        check(not pending, f"Prometheus never saw {pending}; log: {open(log, encoding='utf-8').read()[-2000:]}")
        step(f"Prometheus {PROMETHEUS} scraped the listener; its query API returned {len(queries)} series as expected")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HASHED = ("seq", "id", "at", "partnerId", "contactId", "actor", "event", "details", "prev")


def check_export(lines: list[str], partner: str) -> list[dict]:
    rows = [json.loads(line) for line in lines]
    check(rows, "the export is empty")
    prev: dict[str, str] = {}
    for row in rows:
        check(set(row) == set(HASHED) | {"hash"}, f"members: {sorted(row)}")
        canonical = rfc8785.dumps({k: row[k] for k in HASHED})
        check(hashlib.sha256(canonical).hexdigest() == row["hash"], f"hash of seq {row['seq']}")
        check(row["prev"] == prev.get(row["partnerId"], GENESIS), f"link of seq {row['seq']}")
        prev[row["partnerId"]] = row["hash"]
        check(row["partnerId"] == partner, "one partner")
    check([r["seq"] for r in rows] == list(range(1, len(rows) + 1)), "seq 1, 2, ...")
    return rows


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SERVER, *args], capture_output=True, text=True, timeout=120)


def tampered(db: str, work: str, name: str, sql: str, partner: str, bad_seq: int) -> None:
    copy = os.path.join(work, f"{name}.db")
    # SQLite's backup reads through the write-ahead log, which a plain file copy would miss.
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as conn:
        conn.executescript(sql)
    out = run("audit", "verify", "--db", copy)
    check(out.returncode == 1, f"{name}: exit {out.returncode} {out.stdout} {out.stderr}")
    said = json.loads(out.stdout)
    check(said == {"verified": False, "partnerId": partner, "firstBadSeq": bad_seq}, f"{name}: {said}")
    check(f"partner {partner}" in out.stderr and f"seq {bad_seq}" in out.stderr, f"{name}: {out.stderr}")
    step(f"audit verify after {name}: exit 1, partner and seq {bad_seq} named")


def main() -> None:
    work = tempfile.mkdtemp()
    server = None
    try:
        db = os.path.join(work, "rampart.db")
        made = json.loads(run("partner", "create", "--db", db, "--name", "Observability", "--environment",
                              "sandbox").stdout)
        partner, key = made["superuserId"], made["secretKey"]
        clock = Clock(os.path.join(work, "clock"))
        log = os.path.join(work, "server.log")
        with open(log, "wb") as out:
            server = subprocess.Popen(
                [SERVER, "--db", db, "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                 "--test-clock-file", clock.path],
                stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "RUST_LOG": "info"},
            )
        base = "http://" + wait_for("listening address=", log, server)
        metrics_address = wait_for("metrics listening address=", log, server)
        api = Api(base, key)

        expected = scripted_sequence(api, clock, db)
        with urllib.request.urlopen(f"http://{metrics_address}/metrics", timeout=10) as r:
            check(r.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8", "content type")
            text = r.read().decode()
        got = samples(text)
        for series, value in expected.items():
            check(got.get(series) == value, f"{series}: want {value}, got {got.get(series)}")
        counted = {s for s in got if s.split("{")[0].endswith("_total")}
        check(counted <= set(expected), f"counters the script did not expect: {counted - set(expected)}")
        step(f"{len(expected)} series moved by exactly what the script did")
        for secret in (partner, key, made["publicKey"], "@"):
            check(secret not in text, f"{secret[:6]}... appears in /metrics")
        scraped = os.path.join(work, "metrics.txt")
        with open(scraped, "w", encoding="utf-8") as f:
            f.write(text)
        with open(scraped, "rb") as f:
            lint = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f, capture_output=True, text=True)
        check(lint.returncode == 0, f"promtool: {lint.stdout} {lint.stderr}")
        step("promtool check metrics: clean; no label holds a partner id, key or email")
        try:
            urllib.request.urlopen(f"{base}/metrics", timeout=10)
            raise Failure("the public listener serves /metrics")
        except urllib.error.HTTPError as e:
            check(e.code == 404, "the public listener answers 404 for /metrics")
        prometheus_sees(metrics_address, work, expected)

        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        server = None

        out = run("audit", "export", "--db", db)
        check(out.returncode == 0, f"export: {out.stderr}")
        rows = check_export(out.stdout.splitlines(), partner)
        step(f"audit export: {len(rows)} JSON lines, every hash recomputed with rfc8785 {rfc8785.__version__}")
        since = rows[3]["at"]
        later = run("audit", "export", "--db", db, "--partner", partner, "--since", since).stdout.splitlines()
        check([json.loads(r)["seq"] for r in later] == [r["seq"] for r in rows if r["at"] >= since], "--since")
        out = run("audit", "verify", "--db", db)
        check(out.returncode == 0, f"verify: {out.stdout} {out.stderr}")
        check(json.loads(out.stdout) == {"verified": True, "partners": 1, "rows": len(rows)}, out.stdout)
        step(f"audit verify: exit 0, {len(rows)} rows")
        tampered(db, work, "an edit", "UPDATE audit_events SET details = '{\"method\":\"recoveryCode\"}' "
                 "WHERE seq = 5", partner, 5)
        tampered(db, work, "a deletion", "DELETE FROM audit_events WHERE seq = 3", partner, 3)
        tampered(db, work, "a deletion of the newest rows",
                 f"DELETE FROM audit_events WHERE seq >= {len(rows) - 1}", partner, len(rows) - 1)
        tampered(db, work, "a reordering", "UPDATE audit_events SET seq = -1 WHERE seq = 2; "
                 "UPDATE audit_events SET seq = 2 WHERE seq = 4; UPDATE audit_events SET seq = 4 WHERE seq = -1",
                 partner, 2)
        print("observability: 5 checks passed, 0 failed")
    except Failure as e:
        print(f"observability: FAILED: {e}", file=sys.stderr)
        if server is not None and os.path.exists(os.path.join(work, "server.log")):
            print(open(os.path.join(work, "server.log"), encoding="utf-8").read()[-3000:], file=sys.stderr)
        sys.exit(1)
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
