"""Recovery (SPEC section 8) through the binding: enable's 10 codes, verify and disable by
recovery code (the `recovery_code` keyword), both factors refused, regenerate, the lock that
spares recovery codes, the purchase hold, the operator's four-eyes reset and the support view;
codes never in a repr."""

from __future__ import annotations

import re
import uuid

import pytest

import rampart
from conftest import START, code

CODE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$")  # Crockford base32, 6 groups
CONFLICT = "Give token or recoveryCode, not both"
HOLD = 86_400


def enabled(service: rampart.Service, partner: str, contact: str, clock: rampart.ManualClock) -> tuple[str, list[str]]:
    setup = service.create_2fa(partner, contact)
    codes = service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    clock.advance(30)  # the enabling step is used up
    return setup.manual, codes


def test_enable_returns_ten_codes_once(service, partner, contact, clock):
    assert service.recovery_codes_remaining(partner, contact) == 0
    _, codes = enabled(service, partner, contact, clock)
    assert type(codes) is list and len(codes) == 10 and len(set(codes)) == 10
    assert all(type(c) is str and CODE.match(c) for c in codes), codes
    assert service.recovery_codes_remaining(partner, contact) == 10
    assert service.contact_state(partner, contact).recovery_codes_remaining == 10


def test_verify_by_recovery_code(service, partner, contact, clock):
    manual, codes = enabled(service, partner, contact, clock)
    typed = " " + codes[0].lower().replace("-", " ") + "\n"  # case, spaces and hyphens do not matter
    v = service.verify_2fa(partner, contact, recovery_code=typed)
    assert v and (v.accepted, v.method, v.recovery_codes_remaining) == (True, "recovery_code", 9)
    assert repr(v) == "Verification(accepted=True, method='recovery_code', recovery_codes_remaining=9)"
    assert service.status_2fa(partner, contact) is True  # 2FA stays on
    # used up: the same code again is rejected, an outcome (falsy), not an exception
    again = service.verify_2fa(partner, contact, None, recovery_code=codes[0])
    assert not again and (again.accepted, again.method, again.recovery_codes_remaining) == (False, None, None)
    assert repr(again) == "Verification(accepted=False, method=None, recovery_codes_remaining=None)"
    assert [r.event for r in service.audit_events(partner, contact).events][-2:] == [
        "recovery_code.used",
        "recovery_code.reused",
    ]
    # wrong, malformed, not a str, not valid Unicode: rejected alike
    for wrong in ["0000-0000-0000-0000-0000-0000", codes[1][:-1], 12345, b"x", "\ud800"]:
        assert not service.verify_2fa(partner, contact, recovery_code=wrong)
    # an authenticator code says so, with the same count
    t = service.verify_2fa(partner, contact, code(manual, clock.now))
    assert (t.accepted, t.method, t.recovery_codes_remaining) == (True, "token", 9)
    assert service.recovery_codes_remaining(partner, contact) == 9


def test_both_factors_are_refused(service, partner, contact, clock):
    manual, codes = enabled(service, partner, contact, clock)
    token = code(manual, clock.now)
    calls = [
        lambda: service.verify_2fa(partner, contact, token, recovery_code=codes[0]),
        lambda: service.verify_2fa(partner, contact, 123456, recovery_code=7),
        lambda: service.disable_2fa(partner, contact, token, recovery_code=codes[0]),
        lambda: service.disable_2fa(partner, contact, "junk", recovery_code="\ud800"),
    ]
    for call in calls:
        with pytest.raises(rampart.InvalidInputError) as e:
            call()
        assert (e.value.code, e.value.kind, e.value.message) == (400, "factor_conflict", CONFLICT)
    # nothing was evaluated: the code and the token still work
    assert service.recovery_codes_remaining(partner, contact) == 10
    # a blank recovery code or a missing token is "not given"
    assert service.verify_2fa(partner, contact, token, recovery_code="  ").method == "token"
    assert service.verify_2fa(partner, contact, None, recovery_code=codes[0]).method == "recovery_code"
    with pytest.raises(rampart.AuthenticationError) as e:
        service.verify_2fa(partner, contact, recovery_code=" \t")
    assert e.value.kind == "token_missing"
    with pytest.raises(rampart.AuthenticationError) as e:
        service.verify_2fa(partner, contact)
    assert e.value.kind == "token_missing"


def test_disable_by_recovery_code_starts_the_hold(service, partner, contact, clock):
    _, codes = enabled(service, partner, contact, clock)
    assert service.purchase_check(partner, contact) and service.may_purchase(partner, contact)
    with pytest.raises(rampart.AuthenticationError) as e:
        service.disable_2fa(partner, contact, recovery_code="0000-0000-0000-0000-0000-0000")
    assert (e.value.kind, e.value.message) == ("token_failed", "Google 2FA failed")
    assert service.disable_2fa(partner, contact, recovery_code=codes[3]) is None
    assert service.status_2fa(partner, contact) is False
    assert service.recovery_codes_remaining(partner, contact) == 0
    check = service.purchase_check(partner, contact)
    assert not check and (check.allowed, check.reason, check.until) == (False, "purchase_hold", clock.now + HOLD)
    assert repr(check) == f"PurchaseCheck(allowed=False, reason='purchase_hold', until={clock.now + HOLD})"
    assert service.may_purchase(partner, contact) is False
    with pytest.raises(rampart.ConflictError) as e:
        service.disable_2fa(partner, contact, recovery_code=codes[4])
    assert (e.value.code, e.value.kind) == (409, "not_enabled")
    clock.advance(HOLD)
    assert service.purchase_check(partner, contact).allowed is True
    assert service.contact_state(partner, contact).purchase_hold_until is None
    # the KYC rule comes first: a KYC-passed contact without 2FA must set it up again
    service.set_kyc_passed(partner, contact, True, operator="ops")
    check = service.purchase_check(partner, contact)
    assert (check.allowed, check.reason, check.until) == (False, "two_factor_required", None)


def test_purchase_hold_setting(clock, contact):
    with rampart.Service(clock=clock, purchase_hold_secs=0) as service:
        partner = service.create_partner("Acme").partner_id
        _, codes = enabled(service, partner, contact, clock)
        service.disable_2fa(partner, contact, recovery_code=codes[0])
        assert service.purchase_check(partner, contact).allowed
    for bad in (604_801, -1, True, 1.5, "60"):
        with pytest.raises(rampart.InvalidInputError) as e:
            rampart.Service(purchase_hold_secs=bad)
        assert e.value.message == "purchase_hold_secs must be 0 to 604800"


def test_regenerate_replaces_the_set(service, partner, contact, clock):
    manual, old = enabled(service, partner, contact, clock)
    service.verify_2fa(partner, contact, recovery_code=old[0])
    with pytest.raises(rampart.AuthenticationError) as e:
        service.regenerate_recovery_codes(partner, contact, None)
    assert e.value.kind == "token_missing"
    new = service.regenerate_recovery_codes(partner, contact, code(manual, clock.now))
    assert len(new) == 10 and not set(new) & set(old) and all(CODE.match(c) for c in new)
    assert service.recovery_codes_remaining(partner, contact) == 10
    assert not service.verify_2fa(partner, contact, recovery_code=old[1])  # the old set is dead
    assert service.verify_2fa(partner, contact, recovery_code=new[1]).recovery_codes_remaining == 9
    clock.advance(30)
    service.disable_2fa(partner, contact, code(manual, clock.now))
    with pytest.raises(rampart.ConflictError) as e:
        service.regenerate_recovery_codes(partner, contact, "123456")
    assert (e.value.code, e.value.kind, e.value.message) == (409, "not_enabled", "2FA is not enabled")


def test_a_locked_contact_still_recovers(service, partner, contact, clock):
    manual, codes = enabled(service, partner, contact, clock)
    for _ in range(100):
        clock.advance(3601)
        assert not service.verify_2fa(partner, contact, "000000x")
    with pytest.raises(rampart.LockedError):
        service.verify_2fa(partner, contact, code(manual, clock.now))
    state = service.contact_state(partner, contact)
    assert (state.locked, state.failures, state.recovery_failures) == (True, 100, 0)
    assert service.verify_2fa(partner, contact, recovery_code=codes[0])
    service.disable_2fa(partner, contact, recovery_code=codes[1])  # clears the lock
    state = service.contact_state(partner, contact)
    assert (state.enabled, state.locked, state.failures) == (False, False, 0)


def test_wrong_recovery_codes_have_their_own_back_off(service, partner, contact, clock):
    manual, codes = enabled(service, partner, contact, clock)
    for _ in range(5):
        assert not service.verify_2fa(partner, contact, recovery_code="0000-0000-0000-0000-0000-0000")
    with pytest.raises(rampart.ThrottledError) as e:
        service.verify_2fa(partner, contact, recovery_code=codes[0])
    assert (e.value.code, e.value.retry_after) == (429, 30)
    assert service.contact_state(partner, contact).recovery_failures == 5
    # the authenticator's throttle is another counter
    assert service.verify_2fa(partner, contact, code(manual, clock.now)).method == "token"


def test_reset_2fa_four_eyes_in_production(service, contact, clock):
    live = service.create_partner("Live", "production").partner_id
    _, codes = enabled(service, live, contact, clock)
    assert not service.verify_2fa(live, contact, "000000x")
    for approved_by, message in [
        (None, "approvedBy is required in production: a second operator must approve the reset"),
        ("  ", "approvedBy is required in production: a second operator must approve the reset"),
        ("ops@example.com", "approvedBy must name another operator than the one resetting"),
    ]:
        with pytest.raises(rampart.InvalidInputError) as e:
            service.reset_2fa(live, contact, operator="ops@example.com", reason="lost phone", approved_by=approved_by)
        assert (e.value.code, e.value.kind, e.value.message) == (400, "invalid_input", message)
    with pytest.raises(rampart.InvalidInputError) as e:
        service.reset_2fa(live, contact, operator="ops", reason="", approved_by="lead")
    assert e.value.message == "reason must be 1 to 500 characters without control characters"
    assert service.status_2fa(live, contact) is True  # nothing changed

    before = service.reset_2fa(live, contact, operator="ops@example.com", reason="lost phone", approved_by="lead@example.com")
    assert type(before) is rampart.ContactState
    assert (before.enabled, before.locked, before.failures, before.recovery_failures) == (True, False, 1, 0)
    assert (before.recovery_codes_remaining, before.kyc_passed, before.purchase_hold_until) == (10, False, None)
    after = service.contact_state(live, contact)
    assert (after.enabled, after.failures, after.recovery_codes_remaining) == (False, 0, 0)
    assert after.purchase_hold_until == clock.now + HOLD
    assert repr(after) == (
        "ContactState(enabled=False, locked=False, failures=0, recovery_failures=0, recovery_codes_remaining=0, "
        f"kyc_passed=False, purchase_hold_until={clock.now + HOLD})"
    )
    row = service.audit_events(live, contact).events[-1]
    assert (row.actor, row.event, row.details) == (
        "operator:ops@example.com",
        "2fa.reset",
        {"reason": "lost phone", "approvedBy": "lead@example.com"},
    )


def test_reset_2fa_in_sandbox_and_of_a_contact_without_2fa(service, partner, contact, clock):
    before = service.reset_2fa(partner, contact, operator="ops", reason="support ticket 12")
    assert (before.enabled, before.purchase_hold_until) == (False, None)
    assert service.contact_state(partner, contact).purchase_hold_until == clock.now + HOLD
    with pytest.raises(rampart.NotFoundError):
        service.reset_2fa(str(uuid.uuid4()), contact, operator="ops", reason="x")
    with pytest.raises(rampart.NotFoundError):
        service.contact_state(str(uuid.uuid4()), contact)


def test_codes_never_in_a_repr(service, partner, contact, clock):
    _, codes = enabled(service, partner, contact, clock)
    shown = [
        service.verify_2fa(partner, contact, recovery_code=codes[0]),
        service.verify_2fa(partner, contact, recovery_code=codes[0]),
        service.contact_state(partner, contact),
        service.purchase_check(partner, contact),
        service.reset_2fa(partner, contact, operator="ops", reason="test"),
    ]
    for obj in shown:
        for text in (repr(obj), str(obj)):
            assert not any(c in text or c.replace("-", "") in text for c in codes), text


def test_the_new_kinds_map_to_their_families():
    conflict = rampart.InvalidInputError(CONFLICT, 400, "factor_conflict")
    assert isinstance(conflict, rampart.RampartError) and conflict.kind == "factor_conflict"
    assert issubclass(rampart.ConflictError, rampart.RampartError)


def test_verification_is_falsy_when_rejected_in_an_if(service, partner, contact, clock):
    """The old `if service.verify_2fa(...)` keeps its meaning: only an accepted code passes."""
    manual, _ = enabled(service, partner, contact, clock)
    passed = []
    for token in ["000000x", code(manual, clock.now), code(manual, clock.now)]:
        if service.verify_2fa(partner, contact, token):
            passed.append(token)
    assert passed == [code(manual, START + 30)]
