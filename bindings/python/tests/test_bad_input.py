"""SPEC section 5 through the binding: text that is not valid Unicode (lone surrogates) is the
field's own 400, out-of-range numbers are the argument's own 400, an unknown partner is a 404,
and the master key file checks. Never a foreign exception (UnicodeEncodeError, OverflowError),
never U+FFFD."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest

import rampart
from conftest import START, code

LONE = "\ud800"  # a lone high surrogate: a valid Python str, not valid Unicode text
LOW = "\udfff"  # a lone low surrogate
ISSUER_MESSAGE = "twoFactorIssuer must be 1 to 64 characters without ':' or control characters"
WIDGET_TEXT_MESSAGE = "widgetText must be 1 to 64 characters without control characters"
WIDGET_URL_MESSAGE = "widgetButtonURL must be an absolute http(s) URL without credentials, at most 2048 characters"
U64 = "18446744073709551615"
PK = "pk_sandbox_4eC39HqLyjWDarjtT1zdp7dc"
SECRET = b"12345678901234567890"


def raises(cls: type[rampart.RampartError], code_: int, kind: str, message: str, call: Callable[[], Any]) -> None:
    """`call()` raises exactly `cls` with this code, kind and message (and nothing else)."""
    with pytest.raises(rampart.RampartError) as e:
        call()
    err = e.value
    assert type(err) is cls, repr(err)
    assert (err.code, err.kind, err.message, str(err)) == (code_, kind, message, message)
    assert "\ufffd" not in err.message


def invalid(message: str, call: Callable[[], Any], kind: str = "invalid_input") -> None:
    raises(rampart.InvalidInputError, 400, kind, message, call)


# ---- 1. text that is not valid Unicode ----


@pytest.mark.parametrize("bad", [LONE, LOW, f"{uuid.uuid4()}{LONE}", f"6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c1{LOW}"])
def test_contact_id_not_unicode(service, partner, bad):
    """A contact id that is not valid Unicode is "contactId must be a UUID", never "is required"."""
    for call in [
        lambda: service.create_2fa(partner, bad),
        lambda: service.enable_2fa(partner, bad, "123456"),
        lambda: service.disable_2fa(partner, bad, "123456"),
        lambda: service.verify_2fa(partner, bad, "123456"),
        lambda: service.status_2fa(partner, bad),
        lambda: service.set_kyc_passed(partner, bad, True, operator="ops"),
        lambda: service.reset_lock(partner, bad, operator="ops"),
        lambda: service.is_2fa_required(partner, bad),
        lambda: service.may_purchase(partner, bad),
    ]:
        invalid("contactId must be a UUID", call, kind="contact_id_invalid")


@pytest.mark.parametrize("bad", [LONE, f"Acme{LOW}", f"Acme {LONE} Shop"])
def test_issuer_not_unicode(service, partner, contact, bad):
    invalid(ISSUER_MESSAGE, lambda: service.create_2fa(partner, contact, bad), kind="issuer_invalid")
    invalid(ISSUER_MESSAGE, lambda: rampart.new_secret(bad, "ada"), kind="issuer_invalid")
    invalid(ISSUER_MESSAGE, lambda: rampart.key_uri(bad, "ada", SECRET), kind="issuer_invalid")
    # nothing was created
    with pytest.raises(rampart.ConflictError):
        service.enable_2fa(partner, contact, "123456")


def test_widget_settings_not_unicode(service, partner):
    invalid(WIDGET_TEXT_MESSAGE, lambda: service.set_widget_text(partner, f"Done {LONE}"), kind="widget_text_invalid")
    invalid(WIDGET_URL_MESSAGE, lambda: service.set_widget_button_url(partner, f"https://a.example/{LOW}"),
            kind="widget_button_url_invalid")
    assert service.widget_text(partner) is None and service.widget_button_url(partner) is None


def test_other_text_arguments_not_unicode(service, partner, contact, tmp_path):
    invalid("label must be valid Unicode text", lambda: service.create_2fa(partner, contact, label=f"ada{LONE}"))
    invalid("partner_id must be valid Unicode text", lambda: service.status_2fa(LONE, contact))
    invalid("name must be valid Unicode text", lambda: service.create_partner(f"Acme{LONE}"))
    invalid("environment must be valid Unicode text", lambda: service.create_partner("Acme", LONE))  # type: ignore[arg-type]
    invalid("operator must be valid Unicode text", lambda: service.rotate_keys(partner, operator=LONE))
    invalid("operator must be valid Unicode text", lambda: service.set_2fa_waiver(partner, True, operator=LONE))
    invalid("operator must be valid Unicode text", lambda: service.set_kyc_passed(partner, contact, True, operator=LOW))
    invalid("operator must be valid Unicode text", lambda: service.reset_lock(partner, contact, operator=LONE))
    invalid("operator must be valid Unicode text", lambda: service.rewrap_secrets(operator=LONE))
    invalid("service_name must be valid Unicode text", lambda: rampart.Service(service_name=f"Acme{LONE}"))
    invalid("environment must be valid Unicode text", lambda: rampart.Service(environment=LONE))  # type: ignore[arg-type]
    invalid("path must be valid Unicode text", lambda: rampart.Service(tmp_path / f"r{LONE}.db"))
    invalid("account must be valid Unicode text", lambda: rampart.new_secret("Acme", f"ada{LONE}"))
    invalid("account must be valid Unicode text", lambda: rampart.key_uri("Acme", LOW, SECRET))
    invalid("secret must be valid Unicode text", lambda: rampart.code_at(f"GEZDGNBV{LONE}", START))
    invalid("secret must be valid Unicode text", lambda: rampart.verify(LONE, "123456", START))
    # the text of a QR code is any text, not the widget text
    invalid("text must be valid Unicode text", lambda: rampart.qr_png_data_uri(LONE))
    assert list(tmp_path.iterdir()) == []


def test_file_name_escapes_are_file_names(tmp_path):
    """`os.fsdecode` turns the byte 0xff into "\\udcff": that str is a file name, not bad text."""
    name = os.fsdecode(b"r\xff.db")
    with rampart.Service(tmp_path / name) as service:
        assert service.create_partner("Acme").partner_id
    assert (tmp_path / name).exists()


def test_bearer_not_unicode_is_unauthorized(service):
    """A credential that is not valid Unicode cannot be a key: the same 401 as a bad one (as in C)."""
    raises(rampart.AuthenticationError, 401, "unauthorized", "Unauthorized", lambda: service.authenticate(f"sk_sandbox_{LONE}"))
    raises(rampart.AuthenticationError, 401, "unauthorized", "Unauthorized", lambda: service.authenticate(f"Bearer {LOW}"))


@pytest.mark.parametrize("token", [LONE, f"123{LONE}456", f"123456{LOW}", f" {LONE} "])
def test_token_not_unicode_does_not_verify(service, partner, contact, clock, token):
    """A token that is not valid text is a code that does not verify: never a 400."""
    assert rampart.parse_token(token) == ("malformed", None)
    assert rampart.verify(SECRET, token, START) is False
    assert rampart.verify_step(SECRET, token, START) is None
    setup = service.create_2fa(partner, contact)
    raises(rampart.AuthenticationError, 401, "token_failed", "Google 2FA failed", lambda: service.enable_2fa(partner, contact, token))
    service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    clock.advance(30)
    assert service.verify_2fa(partner, contact, token).accepted is False
    raises(rampart.AuthenticationError, 401, "token_failed", "Google 2FA failed", lambda: service.disable_2fa(partner, contact, token))
    assert service.status_2fa(partner, contact) is True


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"publicKey": PK, "receiveAddress": {"btc": f"bc1{LONE}"}}, "receiveAddress.btc must be valid Unicode text"),
        ({"receiveAddress": {f"b{LOW}": "x"}}, "receiveAddress must be valid Unicode text"),
        ({LONE: 1}, "options must be valid Unicode text"),
        ({"tokens": ["btc", f"et{LONE}"]}, "tokens[1] must be valid Unicode text"),
        ({"tokens": ("btc", LONE)}, "tokens[1] must be valid Unicode text"),
        ({"clientName": f"Acme {LOW}"}, "clientName must be valid Unicode text"),
        # an option that happens to be called url or contactId is not that field
        ({"url": LONE}, "url must be valid Unicode text"),
        ({"a": {"contactId": LONE}}, "a.contactId must be valid Unicode text"),
        (LONE, "options must be valid Unicode text"),
        ([LONE], "options[0] must be valid Unicode text"),
    ],
)
def test_widget_options_not_unicode(options, message):
    """Named by the option path, as the C ABI names invalid UTF-8 in options JSON."""
    for target in ["url", "script"]:
        invalid(message, lambda: rampart.validate(options, target=target))  # type: ignore[arg-type]


def test_widget_keyword_options_and_other_arguments_not_unicode():
    invalid("publicKey must be valid Unicode text", lambda: rampart.validate(public_key=LONE))
    invalid("receiveAddress.btc must be valid Unicode text", lambda: rampart.validate(receive_address={"btc": LOW}))
    invalid("options must be valid Unicode text", lambda: rampart.validate(**{LONE: "x"}))
    invalid("target must be valid Unicode text", lambda: rampart.validate({}, target=LONE))  # type: ignore[arg-type]
    invalid("default_environment must be valid Unicode text",
            lambda: rampart.validate({}, default_environment=LONE))  # type: ignore[arg-type]
    invalid("environment must be valid Unicode text", lambda: rampart.csp_directives(LONE))  # type: ignore[arg-type]
    invalid("chain must be valid Unicode text", lambda: rampart.validate_address(LONE, "x"))
    invalid("domain must be valid Unicode text", lambda: rampart.WidgetConfig(domain=f"example{LONE}.com"))
    invalid("brand must be valid Unicode text", lambda: rampart.WidgetConfig(brand=LOW))
    invalid("coins[0].symbol must be valid Unicode text", lambda: rampart.WidgetConfig(coins=[{"symbol": LONE}]))
    invalid("minimums.usd must be valid Unicode text", lambda: rampart.WidgetConfig(minimums={"usd": LONE}))
    invalid("coins[0].symbol must be valid Unicode text", lambda: rampart.WidgetConfig.from_dict({"coins": [{"symbol": LONE}]}))
    invalid("config must be valid Unicode text", lambda: rampart.WidgetConfig.from_dict({LONE: "x"}))
    valid = rampart.validate(public_key=PK, default_environment="sandbox").options
    assert valid is not None
    invalid("secret_key must be valid Unicode text", lambda: rampart.sign_url(valid, f"sk_sandbox_{LONE}"))
    invalid("title must be valid Unicode text", lambda: rampart.iframe_snippet(valid, title=LONE))
    script = rampart.validate(public_key=PK, target_container_id="w", environment="sandbox", target="script").options
    assert script is not None
    invalid("nonce must be valid Unicode text", lambda: rampart.script_snippet(script, nonce=LONE))
    signed = rampart.sign_url(valid, "sk_sandbox_abc", timestamp=START)
    invalid("secret_key must be valid Unicode text", lambda: rampart.verify_signed_url(signed, LONE, now=START))


def test_widget_urls_and_addresses_not_unicode():
    """A URL that is not valid text is not a URL, an address with it a bad character (as in C)."""
    for call in [lambda: rampart.parse_url(f"https://widget-sandbox.rampart.network/?a={LONE}"),
                 lambda: rampart.verify_signed_url(LONE, "sk_sandbox_abc")]:
        with pytest.raises(rampart.WidgetError) as e:
            call()
        assert (e.value.code, e.value.kind) == (400, "url_invalid")
    check = rampart.validate_address("bitcoin", f"bc1{LONE}")
    assert (check.valid, check.error) == (False, "address_bad_character")


# ---- 2. out-of-range numbers ----

NOT_INTEGERS = [-1, 2**64, 2**200, -(2**70), 1.0, 1.5, "1", True, False, [], float("nan")]


@pytest.mark.parametrize("window", [3, 255, 256, *NOT_INTEGERS])
def test_window_out_of_range(window):
    """Negative, too large, or not an int (1.0 and True included): the window's own 400."""
    message = "window must be 0, 1 or 2"
    invalid(message, lambda: rampart.Service(window=window))
    invalid(message, lambda: rampart.verify(SECRET, "123456", START, window))
    invalid(message, lambda: rampart.verify_step(SECRET, "123456", START, window=window))


@pytest.mark.parametrize("window", [0, 1, 2])
def test_window_in_range(window):
    with rampart.Service(window=window) as service:
        assert service.window == window
    assert rampart.verify(SECRET, rampart.code_at(SECRET, START), START, window) is True


@pytest.mark.parametrize("value", [0, *NOT_INTEGERS])
def test_pending_ttl_out_of_range(value):
    invalid(f"pending_ttl_secs must be an integer from 1 to {U64}", lambda: rampart.Service(pending_ttl_secs=value))


@pytest.mark.parametrize("value", [2**32, *NOT_INTEGERS])
def test_master_key_id_out_of_range(value):
    invalid("master_key_id must be an integer from 0 to 4294967295",
            lambda: rampart.Service(master_key=bytes(32), master_key_id=value))


def test_numbers_at_the_edges_are_accepted(tmp_path):
    with rampart.Service(pending_ttl_secs=2**64 - 1, master_key=bytes(32), master_key_id=2**32 - 1) as service:
        assert service.create_partner("Acme").partner_id
    assert rampart.hotp(SECRET, 2**64 - 1) == rampart.hotp(SECRET, 2**64 - 1)
    clock = rampart.ManualClock(2**64 - 2)
    clock.advance(1)
    assert clock.now == 2**64 - 1


@pytest.mark.parametrize("value", [-1, -0.5, 2**64, 2.0**64, float("nan"), float("inf"), "0", True, None, []])
def test_times_out_of_range(value):
    message = f"must be a number of seconds from 0 to {U64}"
    if value is not None:  # None is "now" where a time is optional
        invalid(f"unix_time {message}", lambda: rampart.code_at(SECRET, value))
        invalid(f"unix_time {message}", lambda: rampart.verify(SECRET, "123456", value))
        invalid(f"unix_time {message}", lambda: rampart.verify_step(SECRET, "123456", value))
        valid = rampart.validate(public_key=PK, default_environment="sandbox").options
        assert valid is not None
        invalid(f"timestamp {message}", lambda: rampart.sign_url(valid, "sk_sandbox_abc", timestamp=value))
        signed = rampart.sign_url(valid, "sk_sandbox_abc", timestamp=START)
        invalid(f"now {message}", lambda: rampart.verify_signed_url(signed, "sk_sandbox_abc", now=value))
        invalid(f"max_age {message}", lambda: rampart.verify_signed_url(signed, "sk_sandbox_abc", max_age=value))
        invalid(f"now {message}", lambda: rampart.ManualClock(value))
    clock = rampart.ManualClock(START)
    invalid(f"now {message}", lambda: clock.set(value))
    invalid(f"seconds {message}", lambda: clock.advance(value))
    assert clock.now == START


def test_times_may_be_floats():
    """`time.time()` is a float: rounded down, as a Unix time in seconds."""
    step = START - START % 30
    assert rampart.code_at(SECRET, step + 29.9) == rampart.code_at(SECRET, step)
    assert rampart.code_at(SECRET, step + 30.0) != rampart.code_at(SECRET, step)
    assert rampart.ManualClock(START + 0.7).now == START
    clock = rampart.ManualClock(START)
    clock.advance(1.5)
    assert clock.now == START + 1


def test_clock_cannot_wrap():
    clock = rampart.ManualClock(2**64 - 1)
    invalid(f"seconds must not move the clock past {U64}", lambda: clock.advance(1))
    assert clock.now == 2**64 - 1


@pytest.mark.parametrize("value", [-1, 2**64, 1.0, "7", True])
def test_counter_out_of_range(value):
    invalid(f"counter must be an integer from 0 to {U64}", lambda: rampart.hotp(SECRET, value))


@pytest.mark.parametrize("value", [-1, 2**32, 1.0, "420", True])
def test_iframe_size_out_of_range(value):
    valid = rampart.validate(public_key=PK, default_environment="sandbox").options
    assert valid is not None
    invalid("width must be an integer from 0 to 4294967295", lambda: rampart.iframe_snippet(valid, width=value))
    invalid("height must be an integer from 0 to 4294967295", lambda: rampart.iframe_snippet(valid, height=value))


# ---- 4. an unknown partner ----


def test_unknown_partner_is_not_found(service, contact):
    missing = str(uuid.uuid4())
    for call in [
        lambda: service.create_2fa(missing, contact),
        lambda: service.create_2fa(uuid.UUID(missing), contact, "Acme"),
        lambda: service.enable_2fa(missing, contact, "123456"),
        lambda: service.disable_2fa(missing, contact, "123456"),
        lambda: service.verify_2fa(missing, contact, "123456"),
        lambda: service.status_2fa(missing, contact),
    ]:
        raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", call)
    assert service.partner_count() == 0


# ---- 4. the master key file ----


def enable_contact(db: Path) -> tuple[str, str, str]:
    clock = rampart.ManualClock(START)
    with rampart.Service(db, clock=clock) as service:
        partner = service.create_partner("Acme").partner_id
        contact = str(uuid.uuid4())
        setup = service.create_2fa(partner, contact)
        service.enable_2fa(partner, contact, code(setup.manual, START))
    return partner, contact, setup.manual


def test_key_file_readable_by_others_is_refused(tmp_path):
    db = tmp_path / "rampart.db"
    key = tmp_path / "rampart.db.key"
    enable_contact(db)
    for mode in [0o644, 0o640, 0o604]:
        key.chmod(mode)
        message = (
            f"master key file {key}: has mode {mode:04o}; it must be readable by its owner only (chmod 600 {key})"
        )
        raises(rampart.ConfigError, 500, "config", message, lambda: rampart.Service(db))
    key.chmod(0o600)
    with rampart.Service(db) as service:
        assert service.partner_count() == 1


def test_key_file_missing_with_enabled_contact_is_refused(tmp_path):
    db = tmp_path / "rampart.db"
    key = tmp_path / "rampart.db.key"
    partner, contact, manual = enable_contact(db)
    saved = key.read_bytes()
    key.unlink()
    message = (
        f"master key file {key} is missing, but the database holds 2FA secrets sealed under it: "
        "restore the file (a new key would lock out every contact with 2FA)"
    )
    raises(rampart.ConfigError, 500, "config", message, lambda: rampart.Service(db))
    assert not key.exists()  # no new key was written
    # restored, everything works again
    key.write_bytes(saved)
    key.chmod(0o600)
    with rampart.Service(db, clock=rampart.ManualClock(START + 30)) as service:
        assert service.status_2fa(partner, contact) is True
        assert service.verify_2fa(partner, contact, code(manual, START + 30)).accepted is True


def test_key_file_with_an_id_twice_is_refused(tmp_path):
    db = tmp_path / "rampart.db"
    key = tmp_path / "rampart.db.key"
    enable_contact(db)
    line = key.read_text().strip()
    key.write_text(f"{line}\n\n{line}\n")
    message = f"master key file {key}: line 3: key id 1 is given twice (first on line 1)"
    raises(rampart.ConfigError, 500, "config", message, lambda: rampart.Service(db))
    assert line.split(":")[1] not in message


def test_another_master_key_is_refused_at_open(tmp_path):
    db = tmp_path / "rampart.db"
    enable_contact(db)
    message = "master key ring: key id 1 opens none of the stored 2FA secrets sealed under it"
    raises(rampart.ConfigError, 500, "config", message, lambda: rampart.Service(db, master_key=bytes(32)))
