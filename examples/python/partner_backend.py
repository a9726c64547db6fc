"""A small partner backend: SPEC section 3's create / enable / status routes over the Python
binding, with only the standard library (http.server).

    python examples/python/partner_backend.py --db partner.db          # serve on 127.0.0.1:8081
    python examples/python/partner_backend.py --self-test              # serve, call, stop

One `rampart.Service` is shared by every request thread (it is thread-safe and releases the
GIL while it talks to SQLite). Errors are answered as `{"message", "code"}` with the HTTP
status equal to `code`, from the exception's own attributes.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Optional
from urllib.parse import parse_qs, urlsplit

import rampart

MAX_BODY = 64 * 1024


class Handler(BaseHTTPRequestHandler):
    service: rampart.Service  # set on the class by serve()
    server_version = "rampart-python-example"

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self.route("GET")

    def do_POST(self) -> None:  # noqa: N802
        self.route("POST")

    def route(self, method: str) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        try:
            routes = {
                ("GET", "/v1/auth/create2fa"): self.create,
                ("POST", "/v1/auth/enable2fa"): self.enable,
                ("GET", "/v1/auth/2fa"): self.status,
            }
            handler = routes.get((method, url.path))
            if handler is None:
                known = any(path == url.path for _, path in routes)
                self.answer(405 if known else 404, {"message": "Method not allowed" if known else "Not found"})
                return
            partner = self.service.authenticate(self.headers.get("Authorization", "")).partner_id
            handler(partner, query)
        except rampart.RampartError as e:
            headers = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else {}
            self.answer(e.code, {"message": e.message}, headers)
        except ValueError as e:
            self.answer(400, {"message": str(e)})

    def body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise rampart.InvalidInputError("Request body is too large", 413, "payload_too_large")
        try:
            data = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            raise ValueError("body must be JSON") from None
        if not isinstance(data, dict):
            raise ValueError("body must be a JSON object")
        return data

    def create(self, partner: str, query: dict[str, str]) -> None:
        setup = self.service.create_2fa(partner, query.get("contactId"), query.get("twoFactorIssuer"))
        details = {"qrCode": setup.qr_code, "manual": setup.manual}
        self.answer(200, {"message": "Successfully created 2fa!", "details": details}, {"Cache-Control": "no-store"})

    def enable(self, partner: str, _query: dict[str, str]) -> None:
        body = self.body()
        contact = body.get("contactId")
        if contact is not None and not isinstance(contact, str):
            raise ValueError("contactId must be a string")
        # The token goes in as sent (str, int, anything): the binding applies the grammar.
        # Enable hands out the 10 recovery codes: answered once, never cached, stored or logged.
        codes = self.service.enable_2fa(partner, contact, body.get("token"))
        message = {"message": "Successfully enabled 2fa!", "details": {"recoveryCodes": codes}}
        self.answer(200, message, {"Cache-Control": "no-store"})

    def status(self, partner: str, query: dict[str, str]) -> None:
        on = self.service.status_2fa(partner, query.get("contactId"))
        remaining = self.service.recovery_codes_remaining(partner, query.get("contactId"))
        message = f"2FA is {'true' if on else 'false'}."
        self.answer(200, {"message": message, "status": on, "recoveryCodesRemaining": remaining})

    def answer(self, code: int, body: dict[str, Any], headers: Optional[dict[str, str]] = None) -> None:
        payload = json.dumps({"message": body.pop("message"), "code": code, **body}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        # Method, path without the query (it may hold ids), status: never bodies or codes.
        sys.stderr.write(f"{self.command} {urlsplit(self.path).path} {args[1] if len(args) > 1 else ''}\n")


def serve(service: rampart.Service, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"service": service})
    return ThreadingHTTPServer((host, port), handler)


def call(base: str, key: str, method: str, path: str, body: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            answer: dict[str, Any] = json.load(res)
    except urllib.error.HTTPError as e:
        answer = json.load(e)
    return answer


def partner_of(service: rampart.Service, key: str) -> str:
    return service.authenticate(key).partner_id


def self_test() -> None:
    """Start on a free port, walk create -> enable -> status, and stop."""
    with rampart.Service() as service:
        key = service.create_partner("Example").secret_key
        server = serve(service, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        contact = str(uuid.uuid4())
        try:
            created = call(base, key, "GET", f"/v1/auth/create2fa?contactId={contact}")
            assert created["code"] == 200 and created["details"]["qrCode"].startswith("data:image/png;base64,"), created
            wrong = call(base, key, "POST", "/v1/auth/enable2fa", {"contactId": contact, "token": "12345"})
            assert wrong == {"message": "Google 2FA failed", "code": 401}, wrong
            token = rampart.code_at(created["details"]["manual"], int(time.time()))
            enabled = call(base, key, "POST", "/v1/auth/enable2fa", {"contactId": contact, "token": token})
            codes = enabled.pop("details")["recoveryCodes"]
            assert enabled == {"message": "Successfully enabled 2fa!", "code": 200} and len(codes) == 10, enabled
            status = call(base, key, "GET", f"/v1/auth/2fa?contactId={contact}")
            assert status == {"message": "2FA is true.", "code": 200, "status": True, "recoveryCodesRemaining": 10}
            # A lost phone: a recovery code verifies once (the `recovery_code` keyword).
            verified = service.verify_2fa(partner_of(service, key), contact, recovery_code=codes[0])
            assert (verified.method, verified.recovery_codes_remaining) == ("recovery_code", 9), verified
            denied = call(base, "sk_sandbox_wrong", "GET", f"/v1/auth/2fa?contactId={contact}")
            assert denied == {"message": "Unauthorized", "code": 401}, denied
            # json.loads turns the escape "\ud800" into a lone surrogate: the binding answers the
            # field's own 400, as the HTTP API does (never a UnicodeEncodeError, never a 500).
            lone = call(base, key, "POST", "/v1/auth/enable2fa", {"contactId": "\ud800", "token": "123456"})
            assert lone == {"message": "contactId must be a UUID", "code": 400}, lone
            print("self-test passed: create, enable, status, errors")
        finally:
            server.shutdown()
            server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", default="partner.db", help="SQLite file (its master key goes to <db>.key)")
    parser.add_argument("--listen", default="127.0.0.1:8081", help="host:port")
    parser.add_argument("--self-test", action="store_true", help="serve on a free port, run the flow, stop")
    args = parser.parse_args()
    if args.self_test:
        self_test()
        return
    host, port = args.listen.rsplit(":", 1)
    with rampart.Service(args.db) as service:
        if service.partner_count() == 0:
            # Keys are stored only as hashes: they can be printed once, now.
            creds = service.create_partner("Demo partner")
            print(f"demo partner {creds.partner_id}\nKEY={creds.secret_key}")
            print(f'curl -s -H "Authorization: Bearer $KEY" "http://{args.listen}/v1/auth/create2fa?contactId={uuid.uuid4()}"')
        print(f"serving on http://{args.listen} over {args.db}", flush=True)
        server = serve(service, host, int(port))
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


if __name__ == "__main__":
    main()
