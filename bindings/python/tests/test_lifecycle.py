"""Every row of SPEC section 2's lifecycle table, with its exact message and code, through the
binding; codes come from pyotp."""

from __future__ import annotations

import uuid

import pytest

import rampart
from conftest import START, code


def check(exc: pytest.ExceptionInfo, code_: int, kind: str, message: str) -> None:  # type: ignore[type-arg]
    err = exc.value
    assert (err.code, err.kind, err.message, str(err)) == (code_, kind, message, message)


def enabled(service: rampart.Service, partner: str, contact: str, clock: rampart.ManualClock) -> str:
    setup = service.create_2fa(partner, contact)
    service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    clock.advance(30)  # the enabling step is used up
    return setup.manual


def test_create_when_disabled(service, partner, contact):
    setup = service.create_2fa(partner, contact)
    assert setup.qr_code.startswith("data:image/png;base64,")
    assert len(setup.manual) == 32
    assert setup.uri.startswith(f"otpauth://totp/Rampart2FA:{contact}?secret={setup.manual}&issuer=Rampart2FA")
    assert repr(setup) == "TwoFactorSetup(<redacted>)"
    # A second create replaces the pending secret.
    again = service.create_2fa(partner, contact, "Acme Shop", label="ada@example.com")
    assert again.manual != setup.manual
    assert again.uri.startswith("otpauth://totp/Acme%20Shop:ada%40example.com?")
    assert service.status_2fa(partner, contact) is False


def test_create_when_enabled(service, partner, contact, clock):
    enabled(service, partner, contact, clock)
    with pytest.raises(rampart.ConflictError) as e:
        service.create_2fa(partner, contact)
    check(e, 403, "must_disable_first", "Must disable 2FA before creating a new one")


@pytest.mark.parametrize("token", [None, "", "   ", "\t\n"])
def test_enable_token_missing(service, partner, contact, token):
    service.create_2fa(partner, contact)
    with pytest.raises(rampart.AuthenticationError) as e:
        service.enable_2fa(partner, contact, token)
    check(e, 401, "token_missing", "Google 2FA requires the token to be passed in")


def test_enable_without_create(service, partner, contact):
    with pytest.raises(rampart.ConflictError) as e:
        service.enable_2fa(partner, contact, "123456")
    check(e, 409, "not_created", "Must create 2FA before enabling it")


def test_enable_after_pending_expired(service, partner, contact, clock):
    setup = service.create_2fa(partner, contact)
    clock.advance(600)
    with pytest.raises(rampart.ConflictError) as e:
        service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    check(e, 409, "not_created", "Must create 2FA before enabling it")


@pytest.mark.parametrize("token", ["000000", 12.5, True, [1], {"a": 1}, "+12345", "１２３４５６", "12345", "1234567"])
def test_enable_token_fails(service, partner, contact, clock, token):
    setup = service.create_2fa(partner, contact)
    right = code(setup.manual, clock.now)
    if token == right:
        token = "999999" if right != "999999" else "000001"
    with pytest.raises(rampart.AuthenticationError) as e:
        service.enable_2fa(partner, contact, token)
    check(e, 401, "token_failed", "Google 2FA failed")
    assert service.status_2fa(partner, contact) is False


@pytest.mark.parametrize("form", ["plain", "spaced", "hyphen", "int", "padded"])
def test_enable_succeeds(service, partner, contact, clock, form):
    setup = service.create_2fa(partner, contact)
    c = code(setup.manual, clock.now)
    token = {"plain": c, "spaced": f"{c[:3]} {c[3:]}", "hyphen": f"{c[:3]}-{c[3:]}", "int": int(c), "padded": f" {c}\n"}[form]
    codes = service.enable_2fa(partner, contact, token)
    assert isinstance(codes, list) and len(codes) == 10
    assert service.status_2fa(partner, contact) is True


def test_enable_accepts_neighbour_steps_only(service, partner, contact, clock):
    setup = service.create_2fa(partner, contact)
    with pytest.raises(rampart.AuthenticationError):
        service.enable_2fa(partner, contact, code(setup.manual, clock.now - 60))
    service.enable_2fa(partner, contact, code(setup.manual, clock.now - 30))


def test_enable_when_enabled(service, partner, contact, clock):
    manual = enabled(service, partner, contact, clock)
    for token in [code(manual, clock.now), "000000", None]:
        with pytest.raises(rampart.ConflictError) as e:
            service.enable_2fa(partner, contact, token)
        check(e, 409, "already_enabled", "Cannot enable 2FA again, it is already set")


def test_disable_token_missing(service, partner, contact, clock):
    enabled(service, partner, contact, clock)
    with pytest.raises(rampart.AuthenticationError) as e:
        service.disable_2fa(partner, contact, None)
    check(e, 401, "token_missing", "Google 2FA requires the token to be passed in")
    assert service.status_2fa(partner, contact) is True


def test_disable_token_fails(service, partner, contact, clock):
    manual = enabled(service, partner, contact, clock)
    wrong = "111111" if code(manual, clock.now) != "111111" else "222222"
    with pytest.raises(rampart.AuthenticationError) as e:
        service.disable_2fa(partner, contact, wrong)
    check(e, 401, "token_failed", "Google 2FA failed")
    assert service.status_2fa(partner, contact) is True


def test_disable_succeeds_and_erases(service, partner, contact, clock):
    manual = enabled(service, partner, contact, clock)
    service.disable_2fa(partner, contact, code(manual, clock.now))
    assert service.status_2fa(partner, contact) is False
    with pytest.raises(rampart.ConflictError) as e:
        service.enable_2fa(partner, contact, code(manual, clock.now + 30))
    check(e, 409, "not_created", "Must create 2FA before enabling it")


def test_enabling_code_cannot_disable(service, partner, contact, clock):
    setup = service.create_2fa(partner, contact)
    c = code(setup.manual, clock.now)
    service.enable_2fa(partner, contact, c)
    with pytest.raises(rampart.AuthenticationError) as e:
        service.disable_2fa(partner, contact, c)
    check(e, 401, "token_failed", "Google 2FA failed")


def test_disable_when_disabled(service, partner, contact):
    for token in ["123456", None]:
        with pytest.raises(rampart.ConflictError) as e:
            service.disable_2fa(partner, contact, token)
        check(e, 409, "not_enabled", "2FA is not enabled")


def test_status(service, partner, contact, clock):
    assert service.status_2fa(partner, contact) is False
    enabled(service, partner, contact, clock)
    assert service.status_2fa(partner, contact) is True
    assert service.status_2fa(partner, uuid.UUID(contact)) is True


def test_verify_is_an_outcome(service, partner, contact, clock):
    manual = enabled(service, partner, contact, clock)
    c = code(manual, clock.now)
    assert service.verify_2fa(partner, contact, "000000" if c != "000000" else "000001").accepted is False
    assert service.verify_2fa(partner, contact, "junk").accepted is False
    assert service.verify_2fa(partner, contact, c).accepted is True
    assert service.verify_2fa(partner, contact, c).accepted is False  # replayed
    with pytest.raises(rampart.AuthenticationError) as e:
        service.verify_2fa(partner, contact, None)
    check(e, 401, "token_missing", "Google 2FA requires the token to be passed in")


def test_verify_when_disabled(service, partner, contact):
    with pytest.raises(rampart.ConflictError) as e:
        service.verify_2fa(partner, contact, "123456")
    check(e, 409, "not_enabled", "2FA is not enabled")


def test_throttle_and_lock(service, partner, contact, clock):
    manual = enabled(service, partner, contact, clock)
    right = code(manual, clock.now)
    wrong = "000000" if right != "000000" else "000001"
    for _ in range(5):
        assert service.verify_2fa(partner, contact, wrong).accepted is False
    with pytest.raises(rampart.ThrottledError) as e:
        service.verify_2fa(partner, contact, right)  # refused unevaluated, even when right
    check(e, 429, "throttled", "Too many failed 2FA attempts, try again in 30 seconds")
    assert e.value.retry_after == 30
    with pytest.raises(rampart.ThrottledError):
        service.disable_2fa(partner, contact, wrong)
    clock.advance(30)
    assert service.verify_2fa(partner, contact, code(manual, clock.now)).accepted is True  # success resets
    service.reset_lock(partner, contact, operator="ops")


def test_lock_after_100_failures(partner, contact):
    clock = rampart.ManualClock(START)
    with rampart.Service(clock=clock) as service:
        p = service.create_partner("Acme").partner_id
        manual = enabled(service, p, contact, clock)
        for i in range(100):
            assert service.verify_2fa(p, contact, "junk").accepted is False
            clock.advance(3600)
        with pytest.raises(rampart.LockedError) as e:
            service.verify_2fa(p, contact, code(manual, clock.now))
        check(e, 423, "locked", "2FA is locked after too many failed attempts")
        service.reset_lock(p, contact, operator="ops")
        assert service.verify_2fa(p, contact, code(manual, clock.now)).accepted is True
        # The partner's own create and enable, the lock at the 100th failure, the operator's reset.
        rows = service.audit_events(p).events
        assert [(r.actor, r.event, r.contact_id, r.details) for r in rows] == [
            ("partner", "2fa.created", contact, {}),
            ("partner", "2fa.enabled", contact, {}),
            ("partner", "recovery_codes.issued", contact, {"reason": "enable"}),
            ("partner", "2fa.locked", contact, {"failures": 100}),
            ("operator:ops", "2fa.unlocked", contact, {"failures": 100}),
        ]


def test_rewrap_secrets_after_a_key_is_added(tmp_path, contact):
    db = tmp_path / "r.db"
    key_file = tmp_path / "r.db.key"  # generated beside the database on first open
    clock = rampart.ManualClock(START)
    with rampart.Service(db, clock=clock) as service:
        p = service.create_partner("Acme").partner_id
        manual = enabled(service, p, contact, clock)
    old = key_file.read_text().strip()
    key_file.write_text(f"{old}\n9:{'ab' * 32}\n")
    with rampart.Service(db, clock=clock) as service:
        report = service.rewrap_secrets(operator="ops")
        assert (report.key_id, report.examined, report.rewrapped, report.unopenable) == (9, 1, 1, 0)
        assert repr(report) == "RewrapReport(key_id=9, examined=1, rewrapped=1, unopenable=0)"
        assert service.rewrap_secrets(operator="ops").rewrapped == 0
        # One row for the partner whose secret moved; the second run changed nothing.
        rows = service.audit_events(p).events
        assert [(r.actor, r.event, r.contact_id, r.details) for r in rows] == [
            ("partner", "2fa.created", contact, {}),
            ("partner", "2fa.enabled", contact, {}),
            ("partner", "recovery_codes.issued", contact, {"reason": "enable"}),
            ("operator:ops", "keys.rewrapped", None, {"keyId": 9}),
        ]
        with pytest.raises(rampart.InvalidInputError) as e:
            service.rewrap_secrets(operator="")
        check(e, 400, "invalid_input", "operator must name who acts, without control characters")
    key_file.write_text(f"9:{'ab' * 32}\n")  # the old key removed
    with rampart.Service(db, clock=clock) as service:
        assert service.verify_2fa(p, contact, code(manual, clock.now)).accepted is True


def test_contact_scoped_to_partner(service, partner, contact, clock):
    enabled(service, partner, contact, clock)
    other = service.create_partner("Other").partner_id
    assert service.status_2fa(other, contact) is False


def test_bad_ids(service, partner):
    with pytest.raises(rampart.InvalidInputError) as e:
        service.status_2fa(partner, "not-a-uuid")
    check(e, 400, "contact_id_invalid", "contactId must be a UUID")
    with pytest.raises(rampart.InvalidInputError) as e:
        service.status_2fa(partner, "")
    check(e, 400, "contact_id_required", "contactId is required")
    with pytest.raises(rampart.InvalidInputError) as e:
        service.create_2fa(partner, str(uuid.uuid4()), "a:b")
    assert e.value.kind == "issuer_invalid"
    with pytest.raises(TypeError):
        service.status_2fa(partner, 42)  # type: ignore[arg-type]


def test_kyc_rule(service, partner, contact, clock):
    assert service.is_2fa_required(partner, contact) is False
    service.set_kyc_passed(partner, contact, True, operator="ops")
    assert service.is_2fa_required(partner, contact) is True
    assert service.may_purchase(partner, contact) is False
    assert service.contacts_requiring_2fa(partner) == [contact]
    enabled(service, partner, contact, clock)
    assert service.may_purchase(partner, contact) is True
    assert service.contacts_requiring_2fa(partner) == []
    other = str(uuid.uuid4())
    service.set_kyc_passed(partner, other, True, operator="ops")
    service.set_2fa_waiver(partner, True, operator="ops")
    assert service.may_purchase(partner, other) is True
    assert service.partner(partner).two_factor_waived is True
