"""app.py served by a real uvicorn on a free port, driven over HTTP with codes from pyotp.

    pytest examples/fastapi
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pyotp
import pytest
import uvicorn

import app
import rampart

UNAUTHORIZED = {"message": "Unauthorized", "code": 401}
FAILED = {"message": "Google 2FA failed", "code": 401}
CONFLICT = {"message": "Give token or recoveryCode, not both", "code": 400}
NOT_HERE = {"message": "recoveryCode is not accepted here", "code": 400}
CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(base URL, secret key): the app over a fresh SQLite file, a partner made with the binding."""
    db = tmp_path_factory.mktemp("fastapi") / "partner.db"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAMPART_DB", str(db))
        env.delenv("RAMPART_MASTER_KEY_FILE", raising=False)
        env.delenv("RAMPART_ENVIRONMENT", raising=False)
        # The partner comes from the binding, on the file the app serves (it creates <db>.key).
        with rampart.Service(db) as admin:
            key = admin.create_partner("FastAPI example").secret_key
        # Port 0: the system picks a free port; uvicorn's own listener (it sets TCP_NODELAY).
        uv = uvicorn.Server(uvicorn.Config(app.app, host="127.0.0.1", port=0, log_level="warning"))
        thread = threading.Thread(target=uv.run, daemon=True)  # off the main thread: no signal handlers
        thread.start()
        deadline = time.monotonic() + 10
        while not uv.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        port = uv.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}", key
        finally:
            uv.should_exit = True
            thread.join(10)


@pytest.fixture
def http(server: tuple[str, str]) -> Iterator[httpx.Client]:
    base, key = server
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=10) as client:
        yield client


def body(response: httpx.Response) -> Any:
    data = response.json()
    assert response.status_code == data["code"]  # SPEC: the HTTP status equals `code`
    return data


def step_start() -> float:
    """Now, or the start of the next 30 s step when this one ends within 5 s: the test then
    uses the codes of the previous, current and next step, all inside the server's window."""
    now = time.time()
    if now % 30 > 25:
        time.sleep(30.05 - now % 30)
        now = time.time()
    return now


def test_lifecycle(http: httpx.Client) -> None:
    contact = str(uuid.uuid4())
    created = http.get("/v1/auth/create2fa", params={"contactId": contact})
    assert created.headers["cache-control"] == "no-store"
    created_body = body(created)
    details = created_body.pop("details")
    assert created_body == {"message": "Successfully created 2fa!", "code": 200}
    assert details["qrCode"].startswith("data:image/png;base64,") and len(details["manual"]) == 32

    def post(path: str, token: Any) -> Any:
        return body(http.post(f"/v1/auth/{path}", json={"contactId": contact, "token": token}))

    # What the user's authenticator app shows, from the manual key: one code per 30 s step.
    totp, now = pyotp.TOTP(details["manual"]), step_start()
    previous, current, following = (totp.at(now + d) for d in (-30, 0, 30))
    wrong = next(c for c in ("000000", "111111", "222222") if c not in (previous, current, following))

    assert post("verify2fa", current) == {"message": "2FA is not enabled", "code": 409}
    assert post("enable2fa", wrong) == FAILED
    enabled = http.post("/v1/auth/enable2fa", json={"contactId": contact, "token": previous})
    assert enabled.headers["cache-control"] == "no-store"
    enabled_body = body(enabled)
    codes = enabled_body.pop("details")["recoveryCodes"]
    assert enabled_body == {"message": "Successfully enabled 2fa!", "code": 200}
    assert len(codes) == 10 and all(CODE.match(c) for c in codes)
    assert post("enable2fa", current) == {"message": "Cannot enable 2FA again, it is already set", "code": 409}
    assert post("verify2fa", previous) == FAILED  # enabling consumed its step
    valid = {"message": "2FA token is valid.", "code": 200, "method": "token", "recoveryCodesRemaining": 10}
    assert post("verify2fa", current) == valid
    assert post("verify2fa", current) == FAILED  # a replay
    assert post("verify2fa", wrong) == FAILED
    assert post("verify2fa", None) == {"message": "Google 2FA requires the token to be passed in", "code": 401}
    assert post("verify2fa", "12 34 56") == FAILED  # outside the token grammar: a wrong code, not a 400

    status = body(http.get("/v1/auth/2fa", params={"contactId": contact}))
    assert status == {"message": "2FA is true.", "code": 200, "status": True, "recoveryCodesRemaining": 10}
    assert post("disable2fa", wrong) == FAILED
    assert post("disable2fa", int(following)) == {"message": "Successfully disbaled 2fa!", "code": 200}
    assert post("disable2fa", following) == {"message": "2FA is not enabled", "code": 409}
    status = body(http.get("/v1/auth/2fa", params={"contactId": contact.upper()}))
    assert status == {"message": "2FA is false.", "code": 200, "status": False, "recoveryCodesRemaining": 0}


def test_recovery_codes(http: httpx.Client) -> None:
    """SPEC section 8.1 over HTTP: a recovery code in place of the token, once; both refused;
    regenerate with an authenticator code; disable by recovery code."""
    contact = str(uuid.uuid4())
    manual = body(http.get("/v1/auth/create2fa", params={"contactId": contact}))["details"]["manual"]
    totp, now = pyotp.TOTP(manual), step_start()

    def post(path: str, **fields: Any) -> Any:
        return body(http.post(f"/v1/auth/{path}", json={"contactId": contact, **fields}))

    assert post("enable2fa", token=totp.at(now - 30), recoveryCode="7KQ2-M9XD-A1B2-C3D4-E5F6-G7H8") == NOT_HERE
    codes = post("enable2fa", token=totp.at(now - 30), recoveryCode="  ")["details"]["recoveryCodes"]
    assert post("verify2fa", token=totp.at(now), recoveryCode=codes[0]) == CONFLICT
    assert post("disable2fa", token=totp.at(now), recoveryCode=codes[0]) == CONFLICT
    typed = codes[0].lower().replace("-", " ")
    used = {"message": "2FA token is valid.", "code": 200, "method": "recoveryCode", "recoveryCodesRemaining": 9}
    assert post("verify2fa", recoveryCode=typed) == used
    assert post("verify2fa", recoveryCode=codes[0]) == FAILED  # used up
    assert post("verify2fa", recoveryCode=5) == FAILED  # not a string: a code that does not verify
    assert post("verify2fa", token=None, recoveryCode=None) == {
        "message": "Google 2FA requires the token to be passed in",
        "code": 401,
    }

    assert post("recoveryCodes", recoveryCode=codes[1]) == NOT_HERE
    assert post("recoveryCodes", token="000000x") == FAILED
    regenerated = http.post("/v1/auth/recoveryCodes", json={"contactId": contact, "token": totp.at(now)})
    assert regenerated.headers["cache-control"] == "no-store"
    fresh_body = body(regenerated)
    fresh = fresh_body.pop("details")["recoveryCodes"]
    assert fresh_body == {"message": "Recovery codes regenerated.", "code": 200}
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    assert post("verify2fa", recoveryCode=codes[1]) == FAILED  # the old set is gone
    status = body(http.get("/v1/auth/2fa", params={"contactId": contact}))
    assert status == {"message": "2FA is true.", "code": 200, "status": True, "recoveryCodesRemaining": 10}

    assert post("disable2fa", recoveryCode=fresh[0]) == {"message": "Successfully disbaled 2fa!", "code": 200}
    status = body(http.get("/v1/auth/2fa", params={"contactId": contact}))
    assert status == {"message": "2FA is false.", "code": 200, "status": False, "recoveryCodesRemaining": 0}
    assert post("recoveryCodes", token=totp.at(now + 30)) == {"message": "2FA is not enabled", "code": 409}
    assert post("disable2fa", recoveryCode=fresh[1]) == {"message": "2FA is not enabled", "code": 409}
    # the contactId answers come before the recoveryCode one, as in the Rust server
    assert body(http.post("/v1/auth/enable2fa", json={"recoveryCode": "x"})) == {
        "message": "contactId is required",
        "code": 400,
    }
    assert body(http.post("/v1/auth/recoveryCodes", json={"contactId": "nope", "recoveryCode": "x"})) == {
        "message": "contactId must be a UUID",
        "code": 400,
    }


def test_enable_before_create_then_throttled(http: httpx.Client) -> None:
    contact = str(uuid.uuid4())
    early = body(http.post("/v1/auth/enable2fa", json={"contactId": contact, "token": "123456"}))
    assert early == {"message": "Must create 2FA before enabling it", "code": 409}
    body(http.get("/v1/auth/create2fa", params={"contactId": contact}))
    for _ in range(5):  # malformed codes count as failures too
        assert body(http.post("/v1/auth/enable2fa", json={"contactId": contact, "token": "12345"})) == FAILED
    refused = http.post("/v1/auth/enable2fa", json={"contactId": contact, "token": "123456"})
    seconds = refused.headers["retry-after"]
    assert seconds in ("29", "30")
    assert body(refused) == {"message": f"Too many failed 2FA attempts, try again in {seconds} seconds", "code": 429}


def test_server_failure_shows_no_detail(http: httpx.Client) -> None:
    served, closed = app.app.state.service, rampart.Service()
    closed.close()
    app.app.state.service = closed  # every call now fails: ConfigError, a 500 whose detail is logged
    try:
        contact = str(uuid.uuid4())
        status = http.get("/v1/auth/2fa", params={"contactId": contact})
        assert body(status) == {"message": "Error getting 2FA", "code": 500}
        verified = http.post("/v1/auth/verify2fa", json={"contactId": contact, "token": "123456"})
        assert body(verified) == {"message": "Error verifying 2FA", "code": 500}
        assert body(http.post("/v1/widget/url", json={})) == {"message": "Internal server error", "code": 500}
    finally:
        app.app.state.service = served


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer sk_sandbox_wrong", "Bearer pk_sandbox_x", "Basic dXNlcjpwYXNz", "secret-key-no-scheme"],
)
def test_bad_bearer_is_401(server: tuple[str, str], authorization: str | None) -> None:
    base, key = server
    headers = {} if authorization is None else {"Authorization": authorization.replace("secret-key-no-scheme", key)}
    contact = str(uuid.uuid4())
    with httpx.Client(base_url=base, headers=headers) as anonymous:
        for method, path in [("GET", "/v1/auth/2fa"), ("GET", "/v1/auth/create2fa"), ("POST", "/v1/widget/url")]:
            response = anonymous.request(method, path, params={"contactId": contact}, json={"contactId": contact})
            assert body(response) == UNAUTHORIZED, (method, path)
        # Authentication comes first (SPEC's order of answers): not 413 nor 400.
        assert body(anonymous.post("/v1/auth/verify2fa", content=b"{")) == UNAUTHORIZED


@pytest.mark.parametrize(
    ("contact", "message"),
    [
        (None, "contactId is required"),
        ("", "contactId is required"),
        ("not-a-uuid", "contactId must be a UUID"),
        ("6f1c2a4e93b14c558f1e0b9b6a0d2c11", "contactId must be a UUID"),  # not hyphenated
    ],
)
def test_bad_contact_id_is_400(http: httpx.Client, contact: str | None, message: str) -> None:
    params = {} if contact is None else {"contactId": contact}
    assert body(http.get("/v1/auth/2fa", params=params)) == {"message": message, "code": 400}
    assert body(http.get("/v1/auth/create2fa", params=params)) == {"message": message, "code": 400}
    posted = http.post("/v1/auth/enable2fa", json={"token": "123456", **params})
    assert body(posted) == {"message": message, "code": 400}


def test_contact_id_given_twice_is_400(http: httpx.Client) -> None:
    contacts = [("contactId", str(uuid.uuid4())), ("contactId", str(uuid.uuid4()))]
    assert body(http.get("/v1/auth/2fa", params=contacts)) == {"message": "duplicate field: contactId", "code": 400}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{", "body must be valid JSON"),
        (b"[1]", "body must be a JSON object"),
        (b'{"contactId": 5, "token": "123456"}', "contactId must be a string"),
        (b'{"contactId": "\\ud800", "token": "123456"}', "contactId must be a UUID"),
        (b'{"token": "111111", "token": "222222"}', "duplicate field: token"),
    ],
)
def test_bad_body_is_400(http: httpx.Client, content: bytes, message: str) -> None:
    answer = http.post("/v1/auth/verify2fa", content=content, headers={"Content-Type": "application/json"})
    assert body(answer) == {"message": message, "code": 400}


def test_large_body_unknown_path_and_method(http: httpx.Client) -> None:
    big = http.post("/v1/auth/verify2fa", content=b" " * (64 * 1024 + 1))
    assert body(big) == {"message": "Request body is too large", "code": 413}
    assert body(http.get("/v1/nowhere")) == {"message": "Not found", "code": 404}
    assert body(http.get("/v1/auth/verify2fa")) == {"message": "Method not allowed", "code": 405}


def test_widget_url(http: httpx.Client) -> None:
    built = body(http.post("/v1/widget/url", json={"swapAsset": "BTC"}))
    assert built["message"] == "Widget URL built." and built["code"] == 200
    assert built["url"].startswith("https://widget-sandbox.rampart.network/?publicKey=pk_sandbox_")
    assert built["iframe"].startswith(f'<iframe src="{built["url"]}"')
    bad = body(http.post("/v1/widget/url", json={"publicKey": 5}))
    assert (bad["message"], bad["code"], [e["path"] for e in bad["errors"]]) == (
        "Invalid widget options: publicKey",
        400,
        ["publicKey"],
    )
