"""Every webhook the real server sends, checked by verifiers nobody here wrote (SPEC section 10).

Starts rampart-server on a throwaway SQLite file (with --webhook-allow-private, so it may send to
loopback, and --test-webhook-retry-scale so a retry comes in milliseconds), a receiver on
loopback that answers each message's first attempt 500 and its second 204, then makes the
server emit: a `webhook.test`, a 2FA enable, a verify by recovery code, and a widget purchase
(`order.created`, `order.completed`). Every request the receiver got is verified by the
`standardwebhooks` package from PyPI (in the receiver, as it arrives) and, afterwards, by the
one from npm (a node process over all of them). A retry carries the same `webhook-id` and
body as the first attempt.

    python scripts/webhooks_interop.py SERVER_BINARY NODE_MODULES_DIR
"""

import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import pyotp
import standardwebhooks

SERVER, NODE_MODULES = sys.argv[1], sys.argv[2]
EVENTS = ["order.created", "order.completed", "2fa.enabled", "recovery_code.used"]


def step(text: str) -> None:
    print(f"-- {text}", flush=True)


def fail(text: str) -> None:
    print(f"webhooks-interop: FAILED: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


class Receiver(http.server.BaseHTTPRequestHandler):
    secret = ""
    got: list[dict] = []
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 (the library's name)
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            standardwebhooks.Webhook(self.secret).verify(body, headers)
            verified = True
        except standardwebhooks.WebhookVerificationError:
            verified = False
        with self.lock:
            n = self.seen.get(headers.get("webhook-id", ""), 0)
            self.seen[headers.get("webhook-id", "")] = n + 1
            self.got.append({"headers": headers, "body": body.decode(), "verified": verified, "attempt": n + 1})
        self.send_response(500 if n == 0 else 204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def call(base: str, key: str, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main() -> None:
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "hooks.db")
        made = json.loads(subprocess.run(
            [SERVER, "partner", "create", "--db", db, "--name", "Hooks", "--environment", "sandbox"],
            check=True, capture_output=True, text=True).stdout)
        key, public_key = made["secretKey"], made["publicKey"]
        receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        log = os.path.join(work, "server.log")
        with open(log, "wb") as out:
            server = subprocess.Popen(
                [SERVER, "--db", db, "--listen", "127.0.0.1:0", "--webhook-allow-private",
                 "--test-webhook-retry-scale", "0.001"],
                stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "RUST_LOG": "info"})
        try:
            base = None
            for _ in range(200):
                text = open(log, encoding="utf-8", errors="replace").read()
                if "listening address=" in text:
                    base = "http://" + text.split("listening address=", 1)[1].split()[0]
                    break
                time.sleep(0.05)
            if base is None:
                fail("the server did not start")
            url = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
            status, created = call(base, key, "POST", "/v1/webhooks", {"url": url, "events": EVENTS})
            if status != 201:
                fail(f"create endpoint: {status} {created}")
            Receiver.secret = created["secret"]
            endpoint = created["endpoint"]["id"]
            status, _ = call(base, key, "POST", f"/v1/webhooks/{endpoint}/test")
            if status != 202:
                fail(f"test message: {status}")
            contact = str(uuid.uuid4())
            _, setup = call(base, key, "GET", f"/v1/auth/create2fa?contactId={contact}")
            totp = pyotp.TOTP(setup["details"]["manual"])
            status, enabled = call(base, key, "POST", "/v1/auth/enable2fa", {"contactId": contact, "token": totp.now()})
            if status != 200:
                fail(f"enable: {status} {enabled}")
            code = enabled["details"]["recoveryCodes"][0]
            status, _ = call(base, key, "POST", "/v1/auth/verify2fa", {"contactId": contact, "recoveryCode": code})
            if status != 200:
                fail(f"verify by recovery code: {status}")
            _, opened = call(base, "", "POST", "/v1/widget/session", {"publicKey": public_key})
            session = opened["token"]
            _, sent = call(base, session, "POST", "/v1/widget/session/email", {"email": "hooks@example.com"})
            call(base, session, "POST", "/v1/widget/session/signin", {"email": "hooks@example.com", "code": sent["sandboxCode"]})
            status, order = call(base, session, "POST", "/v1/widget/session/orders", {
                "coin": "btc", "amount": "25", "currency": "usd",
                "address": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"})
            if status != 200:
                fail(f"order: {status} {order}")
            want = {"webhook.test", "2fa.enabled", "recovery_code.used", "order.created", "order.completed"}
            deadline = time.time() + 30
            while time.time() < deadline:
                with Receiver.lock:
                    done = {json.loads(r["body"])["type"] for r in Receiver.got if r["attempt"] == 2}
                if done >= want:
                    break
                time.sleep(0.1)
            else:
                fail(f"delivered: {sorted(done)}, wanted {sorted(want)}")
            got = list(Receiver.got)
            step(f"{len(got)} requests for {len(want)} messages, each refused once (500) and then taken (204)")
            bad = [r["headers"].get("webhook-id") for r in got if not r["verified"]]
            if bad:
                fail(f"the PyPI standardwebhooks verifier refused {bad}")
            step(f"PyPI standardwebhooks verified all {len(got)}")
            by_id: dict[str, list[dict]] = {}
            for r in got:
                by_id.setdefault(r["headers"]["webhook-id"], []).append(r)
            for msg_id, attempts in by_id.items():
                if len(attempts) != 2 or attempts[0]["body"] != attempts[1]["body"]:
                    fail(f"{msg_id}: a retry must carry the same id and body")
            step("each retry kept its webhook-id and body")
            dump = os.path.join(work, "got.json")
            with open(dump, "w", encoding="utf-8") as f:
                json.dump({"secret": Receiver.secret, "got": got}, f)
            checker = (
                "const { Webhook } = require(process.argv[1] + '/standardwebhooks');"
                "const { secret, got } = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));"
                "const wh = new Webhook(secret); let n = 0;"
                "for (const r of got) { wh.verify(r.body, r.headers); n++; }"
                "console.log(n);"
            )
            out = subprocess.run(["node", "-e", checker, NODE_MODULES, dump], capture_output=True, text=True)
            if out.returncode != 0 or out.stdout.strip() != str(len(got)):
                fail(f"the npm standardwebhooks verifier: {out.stdout} {out.stderr}")
            step(f"npm standardwebhooks verified all {len(got)}")
            server_log = open(log, encoding="utf-8", errors="replace").read()
            if Receiver.secret[6:] in server_log or code in server_log:
                fail("a secret or code reached the server log")
        finally:
            server.terminate()
            server.wait(timeout=30)
            receiver.shutdown()


if __name__ == "__main__":
    main()
