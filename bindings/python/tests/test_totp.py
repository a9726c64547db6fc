"""The pure TOTP helpers against pyotp and the shared RFC vectors."""

from __future__ import annotations

import base64

import pyotp
import pytest

import rampart
from conftest import START, load_vectors


def test_rfc4226():
    v = load_vectors("totp/rfc4226.json")
    secret = v.get("secret_ascii", "12345678901234567890").encode()
    for case in v["cases"]:
        assert rampart.hotp(secret, case["counter"]) == case.get("code", case.get("hotp"))


def test_rfc6238():
    v = load_vectors("totp/rfc6238.json")
    secret = v["secret_ascii"].encode()
    b32 = base64.b32encode(secret).decode()
    for case in v["cases"]:
        assert rampart.code_at(secret, case["time"]) == case["code"]
        assert rampart.code_at(b32, case["time"]) == case["code"]
        assert rampart.verify_step(secret, case["code"], case["time"], 0) == case["step"]


def test_token_grammar():
    for case in load_vectors("tokens.json")["cases"]:
        kind, value = rampart.parse_token(case["input"])
        assert kind == case["expect"], case
        if kind == "code":
            assert value == case["value"], case
    assert rampart.parse_token("1" * (1 << 20)) == ("malformed", None)
    assert rampart.parse_token(" " * (1 << 20) + "123456") == ("malformed", None)
    assert rampart.parse_token(None) == ("missing", None)
    assert rampart.parse_token(True) == ("malformed", None)
    assert rampart.parse_token(2**200) == ("malformed", None)


def test_new_secret_and_pyotp_agree():
    e = rampart.new_secret("Acme", "ada@example.com")
    assert e.secret == e.manual and len(e.manual) == 32
    assert e.uri == rampart.key_uri("Acme", "ada@example.com", e.manual)
    assert e.qr_code.startswith("data:image/png;base64,")
    assert rampart.qr_png_data_uri(e.uri) == e.qr_code
    parsed = pyotp.parse_uri(e.uri)
    assert parsed.secret == e.manual and parsed.issuer == "Acme"
    totp = pyotp.TOTP(e.manual)
    for t in range(START, START + 3000, 7):
        theirs = totp.at(t)
        assert rampart.code_at(e.manual, t) == theirs
        assert rampart.verify(e.manual, theirs, t)
        assert rampart.verify(e.manual, theirs, t + 30)
        assert rampart.verify(e.manual, theirs, t - 30)


def test_verify_window_and_errors():
    secret = b"12345678901234567890"
    c = rampart.code_at(secret, 59)
    assert rampart.verify(secret, c, 59 + 60, window=2)
    assert not rampart.verify(secret, c, 59 + 60, window=1)
    assert rampart.verify_step(secret, int(c), 59, 0) == 1
    assert not rampart.verify(secret, None, 59)
    with pytest.raises(rampart.InvalidInputError):
        rampart.verify(secret, c, 59, window=3)
    with pytest.raises(rampart.InvalidInputError):
        rampart.code_at("not base32!", 0)
    with pytest.raises(rampart.InvalidInputError):
        rampart.code_at(b"short", 0)
    with pytest.raises(TypeError):
        rampart.code_at(42, 0)  # type: ignore[arg-type]
