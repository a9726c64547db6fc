"""A FastAPI partner backend over the Rampart binding: the 2FA routes of SPEC section 3 (with the
recovery codes of section 8) and one widget route. Copy it, then change what README.md lists.

    pip install -r requirements.txt ./bindings/python     # the binding from the repository root
    RAMPART_DB=partner.db uvicorn app:app --port 8081

Settings (environment variables): RAMPART_DB, a SQLite path or a postgres:// URL (default
./rampart-fastapi.db); RAMPART_MASTER_KEY_FILE, a 0600 file with one `ID:HEX` key line (needed
for PostgreSQL and production; without it sandbox keeps its key in <db>.key); RAMPART_ENVIRONMENT,
sandbox (default) or production.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, Optional

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

import rampart

log = logging.getLogger("rampart.example")
MAX_BODY = 64 * 1024
# A 5xx (store down, a bug) is answered with the route's fixed message; detail only goes to the log.
FAILURE = {
    "/v1/auth/create2fa": "Error enabling 2FA",
    "/v1/auth/enable2fa": "Error enabling 2FA",
    "/v1/auth/disable2fa": "Error disabling 2FA",
    "/v1/auth/2fa": "Error getting 2FA",
    "/v1/auth/verify2fa": "Error verifying 2FA",
    "/v1/auth/recoveryCodes": "Error enabling 2FA",
}
# The binding's names for a verify's factor, as the HTTP API spells them.
METHOD = {"token": "token", "recovery_code": "recoveryCode"}
Environment = Literal["sandbox", "production"]


def reply(code: int, message: str, headers: Optional[dict[str, str]] = None, **extra: Any) -> Response:
    """`{"message", "code", ...extra}` with the HTTP status equal to `code`. The JSON is
    ASCII-escaped, so a lone surrogate echoed from a request cannot fail to encode."""
    body = json.dumps({"message": message, "code": code, **extra})
    return Response(body, status_code=code, headers=headers, media_type="application/json")


def bad_input(message: str, code: int = 400) -> rampart.InvalidInputError:
    return rampart.InvalidInputError(message, code, "payload_too_large" if code == 413 else "invalid_input")


def read_master_key(path: str) -> tuple[bytes, int]:
    """The key of a file holding one `ID:HEX` line (or a bare HEX line: id 1), owner-only.
    rampart.Service takes one key, so a file listing several (a rotation) is refused."""
    with open(path, encoding="ascii") as f:
        if os.fstat(f.fileno()).st_mode & 0o077:
            raise SystemExit(f"master key file {path}: must be readable by its owner only (chmod 600 {path})")
        lines = [line.strip() for line in f if line.strip() and not line.strip().startswith("#")]
    if len(lines) != 1:
        raise SystemExit(f"master key file {path}: needs exactly one ID:HEX line, found {len(lines)}")
    key_id, _, key = lines[0].rpartition(":")
    return bytes.fromhex(key), int(key_id or 1)  # a bad line is a ValueError that shows no key


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    # One Service for the process: it is thread-safe and releases the GIL in every call.
    environment: Environment = "production" if os.environ.get("RAMPART_ENVIRONMENT") == "production" else "sandbox"
    key_file = os.environ.get("RAMPART_MASTER_KEY_FILE")
    key, key_id = read_master_key(key_file) if key_file else (None, 1)
    db = os.environ.get("RAMPART_DB", "./rampart-fastapi.db")
    with rampart.Service(db, environment=environment, master_key=key, master_key_id=key_id) as service:
        app.state.service = service
        yield


app = FastAPI(title="Rampart partner backend (example)", lifespan=lifespan)


@app.exception_handler(rampart.RampartError)
def rampart_error(request: Request, e: rampart.RampartError) -> Response:
    # Binding errors carry SPEC's answer: `.code` and `.message` (401 "Google 2FA failed").
    if e.code >= 500:
        return server_error(request, e)
    headers = {"Retry-After": str(e.retry_after)} if e.retry_after is not None else None
    return reply(e.code, e.message, headers)


@app.exception_handler(Exception)
def server_error(request: Request, e: Exception) -> Response:
    log.error("%s failed: %r", request.url.path, e)  # reprs never hold secrets, keys or codes
    return reply(500, FAILURE.get(request.url.path, "Internal server error"))


@app.exception_handler(HTTPException)  # unknown paths and methods, as JSON too
def http_error(_: Request, e: HTTPException) -> Response:
    return reply(e.status_code, {404: "Not found", 405: "Method not allowed"}.get(e.status_code, str(e.detail)))


@app.exception_handler(RequestValidationError)  # FastAPI's own checks: 400, not 422
def invalid(_: Request, e: RequestValidationError) -> Response:
    return reply(400, "Invalid input")


# Dependencies run in the order a route lists them: service, partner (401 first), then input.
# Sync `def` dependencies and routes run in FastAPI's threadpool, so the blocking binding calls
# never stall the event loop.
def get_service(request: Request) -> rampart.Service:
    service = request.app.state.service
    assert isinstance(service, rampart.Service)
    return service


Svc = Annotated[rampart.Service, Depends(get_service)]


def partner_id(service: Svc, authorization: Annotated[str, Header()] = "") -> str:
    """The partner whose secret key is the bearer credential; else 401 "Unauthorized"."""
    return service.authenticate(authorization if authorization[:7].lower() == "bearer " else "").partner_id


PartnerId = Annotated[str, Depends(partner_id)]
Issuer = Annotated[Optional[str], Query(alias="twoFactorIssuer")]
ContactIdQuery = Annotated[Optional[str], Query(alias="contactId")]


def contact_query(request: Request, contact_id: ContactIdQuery = None) -> Optional[str]:
    if len(request.query_params.getlist("contactId")) > 1:
        raise bad_input("duplicate field: contactId")
    return contact_id  # None or "": the binding answers 400 "contactId is required"


ContactId = Annotated[Optional[str], Depends(contact_query)]


def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON field given twice is refused (a proxy reading the first must not disagree with us)."""
    fields: dict[str, Any] = {}
    for name, value in pairs:
        if name in fields:
            raise bad_input(f"duplicate field: {name}")
        fields[name] = value
    return fields


async def json_body(request: Request) -> dict[str, Any]:
    """The JSON object body, at most 64 KiB (async: reading must not hold a pool thread)."""
    too_large = bad_input("Request body is too large", 413)
    if int(request.headers.get("content-length") or 0) > MAX_BODY:
        raise too_large  # answered without reading the body
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise too_large
    try:
        body = json.loads(raw, object_pairs_hook=no_duplicates)
    except ValueError:  # not UTF-8, not JSON
        raise bad_input("body must be valid JSON") from None
    if not isinstance(body, dict):
        raise bad_input("body must be a JSON object")
    return body


JsonBody = Annotated[dict[str, Any], Depends(json_body)]


def contact_of(body: dict[str, Any]) -> Optional[str]:
    contact = body.get("contactId")
    if contact is not None and not isinstance(contact, str):
        raise bad_input("contactId must be a string")
    return contact


def only_token(service: rampart.Service, partner: str, body: dict[str, Any]) -> Optional[str]:
    """The contact of enable and regenerate, which take only `token`: a given `recoveryCode`
    (present, not null, not only white space) is 400 "recoveryCode is not accepted here", after
    the contactId answers (the binding gives those, here from a read that changes nothing)."""
    contact, code = contact_of(body), body.get("recoveryCode")
    if code is not None and (not isinstance(code, str) or code.strip(" \t\n\r\f")):
        service.recovery_codes_remaining(partner, contact)
        raise bad_input("recoveryCode is not accepted here")
    return contact


def with_codes(message: str, codes: list[str]) -> Response:
    """The one answer that shows recovery codes: `details.recoveryCodes`, never cached."""
    return reply(200, message, {"Cache-Control": "no-store"}, details={"recoveryCodes": codes})


@app.get("/v1/auth/create2fa")
def create_2fa(service: Svc, partner: PartnerId, contact: ContactId, issuer: Issuer = None) -> Response:
    setup = service.create_2fa(partner, contact, issuer or None)  # "" means the default issuer
    details = {"qrCode": setup.qr_code, "manual": setup.manual}  # show qrCode in an <img>
    return reply(200, "Successfully created 2fa!", {"Cache-Control": "no-store"}, details=details)


# The token goes to the binding as sent (str, int, anything): it applies SPEC's token grammar.
# Enable answers the 10 recovery codes, once.
@app.post("/v1/auth/enable2fa")
def enable_2fa(service: Svc, partner: PartnerId, body: JsonBody) -> Response:
    codes = service.enable_2fa(partner, only_token(service, partner, body), body.get("token"))
    return with_codes("Successfully enabled 2fa!", codes)


@app.post("/v1/auth/recoveryCodes")
def regenerate_recovery_codes(service: Svc, partner: PartnerId, body: JsonBody) -> Response:
    codes = service.regenerate_recovery_codes(partner, only_token(service, partner, body), body.get("token"))
    return with_codes("Recovery codes regenerated.", codes)


# Disable and verify take `token` or `recoveryCode` (both: 400 "Give token or recoveryCode, not
# both", from the binding), each as sent.
@app.post("/v1/auth/disable2fa")
def disable_2fa(service: Svc, partner: PartnerId, body: JsonBody) -> Response:
    service.disable_2fa(partner, contact_of(body), body.get("token"), recovery_code=body.get("recoveryCode"))
    return reply(200, "Successfully disbaled 2fa!")  # sic: the original service's spelling


@app.post("/v1/auth/verify2fa")
def verify_2fa(service: Svc, partner: PartnerId, body: JsonBody) -> Response:
    # A wrong or replayed code is a falsy Verification (its method None), not an exception;
    # throttling and locks raise.
    verified = service.verify_2fa(partner, contact_of(body), body.get("token"), recovery_code=body.get("recoveryCode"))
    if not verified or verified.method is None:
        return reply(401, "Google 2FA failed")
    return reply(
        200,
        "2FA token is valid.",
        method=METHOD[verified.method],
        recoveryCodesRemaining=verified.recovery_codes_remaining,
    )


@app.get("/v1/auth/2fa")
def status_2fa(service: Svc, partner: PartnerId, contact: ContactId) -> Response:
    on = service.status_2fa(partner, contact)
    remaining = service.recovery_codes_remaining(partner, contact)
    return reply(200, f"2FA is {'true' if on else 'false'}.", status=on, recoveryCodesRemaining=remaining)


@app.post("/v1/widget/url")
def widget_url(service: Svc, partner: PartnerId, options: JsonBody) -> Response:
    """The widget URL and an iframe snippet for the options (SPEC section 4's names), with the
    partner's publishable key filled in when the options name none."""
    if "publicKey" not in options and "apiKey" not in options:
        options["publicKey"] = service.partner(partner).publishable_key
    env: Environment = "production" if service.environment == "production" else "sandbox"
    checked = rampart.validate(options, default_environment=env)
    warnings, mode = [w.to_dict() for w in checked.warnings], checked.mode.to_dict()
    if checked.options is None:  # problems in options are results, answered as a 400
        errors = [e.to_dict() for e in checked.errors]
        paths = ", ".join(dict.fromkeys(e.path or "options" for e in checked.errors))
        return reply(400, f"Invalid widget options: {paths}", errors=errors, warnings=warnings, mode=mode)
    url, iframe = rampart.build_url(checked.options), rampart.iframe_snippet(checked.options)
    return reply(200, "Widget URL built.", url=url, iframe=iframe, warnings=warnings, mode=mode)
