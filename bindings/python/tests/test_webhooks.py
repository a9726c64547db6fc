"""Standard Webhooks signatures (SPEC section 10): the shared vectors, and interoperability with
the reference implementation nobody here wrote (PyPI `standardwebhooks`, pinned in mk/python.mk),
which reads the real clock, so those messages are stamped with the current time."""

from __future__ import annotations

import base64
import json
import os
import pickle
import time
from datetime import datetime, timezone

import pytest
import standardwebhooks

import rampart
from conftest import load_vectors

VECTORS = load_vectors("webhooks/standard.json")
SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
BODY = b'{"type":"order.completed","timestamp":"2026-11-26T15:00:00Z","data":{"orderId":"o-1"}}'


def headers(msg_id: str, timestamp: int | str, signature: str) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp), "webhook-signature": signature}


def reason_of(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(rampart.WebhookVerificationError) as caught:
        call()
    return caught.value.reason


@pytest.mark.parametrize("case", VECTORS["sign"], ids=lambda c: c["name"])
def test_sign_vectors(case):
    body = case["body"].encode()
    assert rampart.webhook_sign(case["secret"], case["id"], case["timestamp"], body) == case["signature"]
    # a str body is its UTF-8 bytes; bytearray as bytes
    assert rampart.webhook_sign(case["secret"], case["id"], case["timestamp"], case["body"]) == case["signature"]
    assert rampart.webhook_sign(case["secret"], case["id"], case["timestamp"], bytearray(body)) == case["signature"]


@pytest.mark.parametrize("case", VECTORS["verify"], ids=lambda c: c["name"])
def test_verify_vectors(case):
    h = headers(case["id"], case["timestamp"], case["signature"])
    verify = lambda: rampart.webhook_verify(case["secret"], h, case["body"].encode(), now=case["now"])  # noqa: E731
    if case["valid"]:
        assert verify() is None
    else:
        assert reason_of(verify) == case["error"]


def test_the_vectors_cover_every_reason():
    reasons = {c.get("error") for c in VECTORS["verify"]}
    assert {"too_old", "too_new", "no_match", "bad_timestamp", None} <= reasons
    assert len(VECTORS["sign"]) >= 3 and len(VECTORS["verify"]) >= 11


def test_headers_in_any_case_from_any_mapping():
    now = 1_795_000_000
    sig = rampart.webhook_sign(SECRET, "msg_1", now, BODY)
    rampart.webhook_verify(SECRET, {"Webhook-Id": "msg_1", "WEBHOOK-TIMESTAMP": str(now), "webhook-Signature": sig}, BODY, now=now)

    class Headers:  # a framework's own headers object: only items()
        def items(self):  # type: ignore[no-untyped-def]
            return iter([("Content-Type", "application/json"), ("Webhook-Id", "msg_1"), ("Webhook-Timestamp", str(now)), ("Webhook-Signature", sig)])

    rampart.webhook_verify(SECRET, Headers(), BODY, now=now)
    # the secret without its prefix, a str body
    rampart.webhook_verify(SECRET[len("whsec_") :], headers("msg_1", now, sig), BODY.decode(), now=now)


def test_missing_headers_and_the_error_class():
    now = 1_795_000_000
    sig = rampart.webhook_sign(SECRET, "msg_1", now, BODY)
    full = headers("msg_1", now, sig)
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"]:
        partial = {k: v for k, v in full.items() if k != name}
        with pytest.raises(rampart.WebhookVerificationError) as caught:
            rampart.webhook_verify(SECRET, partial, BODY, now=now)
        e = caught.value
        assert (e.reason, e.message, e.code, e.kind) == ("missing_header", f"{name} is missing", 400, "webhook_verification_failed")
    with pytest.raises(rampart.WebhookVerificationError) as caught:
        rampart.webhook_verify(SECRET, {}, BODY, now=now)
    assert caught.value.message == "webhook-id is missing"
    with pytest.raises(rampart.RampartError) as base:  # one base for every Rampart error
        rampart.webhook_verify(SECRET, full, BODY + b" ", now=now)
    e = base.value
    assert isinstance(e, rampart.WebhookVerificationError)
    assert (e.reason, str(e), repr(e)) == ("no_match", "no signature matches", "WebhookVerificationError(reason='no_match', message='no signature matches')")
    again = pickle.loads(pickle.dumps(e))
    assert (type(again), again.reason, again.message, again.code, again.kind) == (type(e), e.reason, e.message, e.code, e.kind)
    messages = {
        "too_old": ("webhook-timestamp is too old", now + 301),
        "too_new": ("webhook-timestamp is too far in the future", now - 301),
    }
    for reason, (message, at) in messages.items():
        with pytest.raises(rampart.WebhookVerificationError) as caught:
            rampart.webhook_verify(SECRET, full, BODY, now=at)
        assert (caught.value.reason, caught.value.message) == (reason, message)
    with pytest.raises(rampart.WebhookVerificationError) as caught:
        rampart.webhook_verify(SECRET, headers("msg_1", "soon", sig), BODY, now=now)
    assert (caught.value.reason, caught.value.message) == ("bad_timestamp", "webhook-timestamp is not a number")


def test_now_defaults_to_the_system_clock():
    now = int(time.time())
    sig = rampart.webhook_sign(SECRET, "msg_1", now, BODY)
    rampart.webhook_verify(SECRET, headers("msg_1", now, sig), BODY)
    old = now - 3600
    assert reason_of(lambda: rampart.webhook_verify(SECRET, headers("msg_1", old, rampart.webhook_sign(SECRET, "msg_1", old, BODY)), BODY)) == "too_old"
    # float times (time.time()) are rounded down, as every time argument
    assert rampart.webhook_sign(SECRET, "msg_1", now + 0.9, BODY) == sig
    rampart.webhook_verify(SECRET, headers("msg_1", now, sig), BODY, now=time.time())


def test_bad_arguments():
    now = 1_795_000_000
    sig = rampart.webhook_sign(SECRET, "msg_1", now, BODY)
    h = headers("msg_1", now, sig)
    for bad in ["whsec_", "whsec_not base64!", "", "whsec_QUJD*"]:
        with pytest.raises(rampart.InvalidInputError) as caught:
            rampart.webhook_verify(bad, h, BODY, now=now)
        assert (caught.value.kind, caught.value.message) == ("invalid_input", "secret must be whsec_ followed by base64")
        with pytest.raises(rampart.InvalidInputError):
            rampart.webhook_sign(bad, "msg_1", now, BODY)
    with pytest.raises(rampart.InvalidInputError, match="secret must be valid Unicode text"):
        rampart.webhook_sign("whsec_\ud800", "msg_1", now, BODY)
    with pytest.raises(rampart.InvalidInputError, match="timestamp must be a number of seconds"):
        rampart.webhook_sign(SECRET, "msg_1", -1, BODY)
    with pytest.raises(rampart.InvalidInputError, match="now must be a number of seconds"):
        rampart.webhook_verify(SECRET, h, BODY, now=-1)
    with pytest.raises(TypeError, match="body must be bytes, bytearray or str, got int"):
        rampart.webhook_sign(SECRET, "msg_1", now, 5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="msg_id must be a str"):
        rampart.webhook_sign(SECRET, b"msg_1", now, BODY)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="headers must be a mapping"):
        rampart.webhook_verify(SECRET, [("webhook-id", "msg_1")], BODY, now=now)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"headers\['webhook-timestamp'\] must be a str"):
        rampart.webhook_verify(SECRET, {**h, "webhook-timestamp": now}, BODY, now=now)  # type: ignore[dict-item]
    # a header value holding a lone surrogate cannot be valid: it fails, it is not a 400
    assert reason_of(lambda: rampart.webhook_verify(SECRET, {**h, "webhook-timestamp": "17\ud800"}, BODY, now=now)) == "bad_timestamp"
    # ... and a signature list is still read for its valid entries
    rampart.webhook_verify(SECRET, {**h, "webhook-signature": "v1,\ud800 " + sig}, BODY, now=now)


# Interoperability with the reference library, on the real clock.


def reference_signed(secret: str, msg_id: str, at: int, body: bytes) -> dict[str, str]:
    wh = standardwebhooks.Webhook(secret)
    signature = wh.sign(msg_id, datetime.fromtimestamp(at, tz=timezone.utc), body.decode())
    return headers(msg_id, at, signature)


def test_the_reference_library_accepts_rampart_signatures():
    secret = SECRET
    now = int(time.time())
    msg_id = "msg_" + os.urandom(8).hex()
    h = headers(msg_id, now, rampart.webhook_sign(secret, msg_id, now, BODY))
    wh = standardwebhooks.Webhook(secret)
    assert wh.verify(BODY, h) == json.loads(BODY)
    # rotation: Rampart's signature beside another secret's, either order
    other = rampart.webhook_sign("whsec_" + base64.b64encode(os.urandom(32)).decode(), msg_id, now, BODY)
    wh.verify(BODY, {**h, "webhook-signature": other + " " + h["webhook-signature"]})
    # one changed body byte, and a timestamp 301 s off either way, fail there too (302 ahead:
    # the reference reads its own clock, which may have moved into the next second since `now`)
    changed = BODY.replace(b"o-1", b"o-2")
    with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError, match="No matching signature"):
        wh.verify(changed, h)
    for at, words in [(now - 301, "too old"), (now + 302, "too new")]:
        stale = headers(msg_id, at, rampart.webhook_sign(secret, msg_id, at, BODY))
        with pytest.raises(standardwebhooks.webhooks.WebhookVerificationError, match=words):
            wh.verify(BODY, stale)


def test_rampart_accepts_the_reference_library_s_signatures():
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    now = int(time.time())
    msg_id = "msg_" + os.urandom(8).hex()
    h = reference_signed(secret, msg_id, now, BODY)
    rampart.webhook_verify(secret, h, BODY)
    rampart.webhook_verify(secret, h, BODY, now=now)
    assert h["webhook-signature"] == rampart.webhook_sign(secret, msg_id, now, BODY)
    changed = bytearray(BODY)
    changed[-3] ^= 0x01
    assert reason_of(lambda: rampart.webhook_verify(secret, h, bytes(changed))) == "no_match"
    for at, reason in [(now - 301, "too_old"), (now + 301, "too_new")]:
        stale = reference_signed(secret, msg_id, at, BODY)
        assert reason_of(lambda: rampart.webhook_verify(secret, stale, BODY, now=now)) == reason
        rampart.webhook_verify(secret, stale, BODY, now=at)  # the signature itself is good


def test_the_reference_vector_through_the_reference_library():
    case = VECTORS["sign"][0]
    wh = standardwebhooks.Webhook(case["secret"])
    at = datetime.fromtimestamp(case["timestamp"], tz=timezone.utc)
    assert wh.sign(case["id"], at, case["body"]) == case["signature"] == rampart.webhook_sign(
        case["secret"], case["id"], case["timestamp"], case["body"].encode()
    )
