"""The audit trail (SPEC section 9.1) and metrics (9.2) through the binding: exact rows in
order, every hash recomputed here (hashlib over the canonical JSON), paging with `after` and
`next`, the contact filter, argument errors, the chain reports, and each service's own metrics."""

from __future__ import annotations

import uuid
from typing import Any, Callable

import pytest

import rampart
from conftest import GENESIS, START, assert_chain, audit_hash, code

LONE = "\ud800"  # a lone surrogate: a valid Python str, not valid Unicode text
AT = "2023-11-14T22:13:20.000Z"  # START, 1_700_000_000
LIMIT = "limit must be an integer from 1 to 500"
AFTER = "after must be an integer from 0 to 9223372036854775807"


def raises(cls: type[rampart.RampartError], code_: int, kind: str, message: str, call: Callable[[], Any]) -> None:
    with pytest.raises(rampart.RampartError) as e:
        call()
    assert type(e.value) is cls, repr(e.value)
    assert (e.value.code, e.value.kind, e.value.message) == (code_, kind, message)


def invalid(message: str, call: Callable[[], Any]) -> None:
    raises(rampart.InvalidInputError, 400, "invalid_input", message, call)


@pytest.fixture
def history(service: rampart.Service, partner: str, clock: rampart.ManualClock) -> dict[str, str]:
    """Seven rows: the partner's create and enable for contact a (enable writes two: 2FA on and
    the recovery codes issued), an operator's KYC mark for b, the widget approval (no contact),
    the unlock of a (one failure before it), and a's disable 30 s later."""
    a, b = str(uuid.uuid4()), str(uuid.uuid4())
    setup = service.create_2fa(partner, a)
    service.enable_2fa(partner, a, code(setup.manual, clock.now))
    service.set_kyc_passed(partner, b, True, operator="ops@example.com")
    service.set_widget_approval(partner, True, operator="ops@example.com")
    assert service.verify_2fa(partner, a, "junk").accepted is False
    service.reset_lock(partner, a, operator="ops@example.com")
    clock.advance(30)
    service.disable_2fa(partner, a, code(setup.manual, clock.now))
    return {"a": a, "b": b}


def test_rows_in_order_each_hash_recomputed(service, partner, history):
    a, b = history["a"], history["b"]
    page = service.audit_events(partner)
    assert page.next is None
    rows = page.events
    ops = "operator:ops@example.com"
    assert [(r.seq, r.contact_id, r.actor, r.event, r.details, r.at) for r in rows] == [
        (1, a, "partner", "2fa.created", {}, AT),
        (2, a, "partner", "2fa.enabled", {}, AT),
        (3, a, "partner", "recovery_codes.issued", {"reason": "enable"}, AT),
        (4, b, ops, "kyc.marked", {}, AT),
        (5, None, ops, "widget.approved", {}, AT),
        (6, a, ops, "2fa.unlocked", {"failures": 1}, AT),
        (7, a, "partner", "2fa.disabled", {"method": "token"}, "2023-11-14T22:13:50.000Z"),
    ]
    assert all(r.partner_id == partner for r in rows)
    assert all(uuid.UUID(r.id).version == 7 and str(uuid.UUID(r.id)) == r.id for r in rows)
    assert len({r.id for r in rows}) == 7
    assert rows[0].prev == GENESIS
    assert_chain(rows)
    for r in rows:
        assert len(r.hash) == 64 and r.hash == r.hash.lower() and r.hash == audit_hash(r)


def test_rows_are_values(service, partner, history):
    first = service.audit_events(partner, limit=1).events[0]
    again = service.audit_events(partner, limit=1).events[0]
    assert first == again and first is not again
    assert first != service.audit_events(partner, after=1, limit=1).events[0]
    assert repr(first) == (
        f"AuditRow(seq=1, at='{AT}', actor='partner', event='2fa.created', contact_id='{history['a']}', details={{}})"
    )
    unlocked = service.audit_events(partner, after=5, limit=1).events[0]
    assert repr(unlocked).endswith(f"contact_id='{history['a']}', details={{'failures': 1}})")
    # details is a new dict each time: changing it changes nothing
    unlocked.details["failures"] = 7
    assert unlocked.details == {"failures": 1}
    assert unlocked.hash == audit_hash(unlocked)
    with pytest.raises(AttributeError):
        unlocked.event = "2fa.enabled"  # type: ignore[misc]
    page = service.audit_events(partner, limit=2)
    assert repr(page) == "AuditPage(events=<2 rows>, next=2)"
    assert page == service.audit_events(partner, None, 0, 2)
    assert page != service.audit_events(partner, limit=3)


def test_paging_with_after_and_next(service, partner, history):
    everything = service.audit_events(partner, limit=500).events
    seen: list[rampart.AuditRow] = []
    after, pages = 0, []
    while True:
        page = service.audit_events(partner, after=after, limit=2)
        pages.append(([r.seq for r in page.events], page.next))
        seen += page.events
        if page.next is None:
            break
        after = page.next
    assert pages == [([1, 2], 2), ([3, 4], 4), ([5, 6], 6), ([7], None)]
    assert seen == everything
    assert [r.seq for r in service.audit_events(partner, after=4).events] == [5, 6, 7]
    assert service.audit_events(partner, after=7).events == []
    assert service.audit_events(partner, after=2**63 - 1).events == []
    page = service.audit_events(partner, after=6, limit=1)
    assert ([r.seq for r in page.events], page.next) == ([7], None)  # exactly the last row: no next
    assert service.audit_events(partner, None, None, None) == service.audit_events(partner)


def test_contact_filter(service, partner, history):
    a, b = history["a"], history["b"]
    page = service.audit_events(partner, a, limit=3)
    assert ([r.seq for r in page.events], page.next) == ([1, 2, 3], 3)
    page = service.audit_events(partner, a.upper(), after=3, limit=3)  # any case is the same contact
    assert ([r.seq for r in page.events], page.next) == ([6, 7], None)
    only_b = service.audit_events(partner, contact_id=uuid.UUID(b)).events
    assert [(r.seq, r.event, r.contact_id) for r in only_b] == [(4, "kyc.marked", b)]
    assert only_b[0] == service.audit_events(partner).events[3]
    assert service.audit_events(partner, str(uuid.uuid4())).events == []
    # another partner's chain is its own
    other = service.create_partner("Other").partner_id
    assert service.audit_events(other).events == []
    assert service.audit_events(other, a).events == []


def test_limit_and_after_out_of_range(service, partner, history):
    for limit in (0, 501, -1, 2**64, True, 1.5, "10"):
        invalid(LIMIT, lambda limit=limit: service.audit_events(partner, limit=limit))
    for after in (-1, 2**63, True, 0.0, "1"):
        invalid(AFTER, lambda after=after: service.audit_events(partner, after=after))
    assert len(service.audit_events(partner, limit=1).events) == 1
    assert len(service.audit_events(partner, limit=500).events) == 7


def test_bad_ids_and_unknown_partner(service, partner):
    nobody = str(uuid.uuid4())
    raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", lambda: service.audit_events(nobody))
    raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", lambda: service.verify_audit(nobody))
    for contact in ("", "nope", LONE, "6f1c2a4e93b14c558f1e0b9b6a0d2c11"):
        raises(
            rampart.InvalidInputError,
            400,
            "contact_id_invalid",
            "contactId must be a UUID",
            lambda contact=contact: service.audit_events(partner, contact),
        )
    invalid("partnerId must be a UUID", lambda: service.audit_events("acme"))
    invalid("partnerId must be a UUID", lambda: service.verify_audit("acme"))
    invalid("partner_id must be valid Unicode text", lambda: service.audit_events(LONE))
    with pytest.raises(TypeError):
        service.audit_events(partner, 7)  # type: ignore[arg-type]
    invalid("partner_id is required", lambda: service.audit_events(None))  # type: ignore[arg-type]


def test_verify_audit(service, partner, history):
    quiet = service.create_partner("Quiet").partner_id
    [report] = service.verify_audit(partner)
    assert (report.partner_id, report.rows, report.first_bad_seq) == (partner, 7, None)
    assert repr(report) == f"ChainReport(partner_id='{partner}', rows=7, first_bad_seq=None)"
    everyone = service.verify_audit()
    assert [(r.partner_id, r.rows, r.first_bad_seq) for r in everyone] == sorted(
        [(partner, 7, None), (quiet, 0, None)]
    )
    assert service.verify_audit(uuid.UUID(partner)) == [report]
    assert service.verify_audit(None) == everyone


def test_partner_api_changes_are_recorded(service, partner, clock):
    service.set_widget_text(partner, "Back to Acme")
    service.set_widget_button_url(partner, "https://acme.example/done")
    service.set_widget_origins(partner, ["https://acme.example"])
    service.set_2fa_waiver(partner, True, operator="ops")
    service.set_2fa_waiver(partner, False, operator="ops")
    rows = service.audit_events(partner).events
    assert [(r.actor, r.event, r.contact_id, r.details) for r in rows] == [
        ("partner", "widget.settings_changed", None, {"field": "widgetText"}),
        ("partner", "widget.settings_changed", None, {"field": "widgetButtonURL"}),
        ("partner", "widget.settings_changed", None, {"field": "widgetOrigins"}),
        ("operator:ops", "partner.waiver_set", None, {}),
        ("operator:ops", "partner.waiver_cleared", None, {}),
    ]
    assert_chain(rows)
    # a refused change records nothing
    with pytest.raises(rampart.InvalidInputError):
        service.set_widget_text(partner, "")
    assert len(service.audit_events(partner).events) == 5


def test_rows_survive_reopening_a_file(tmp_path, contact):
    clock = rampart.ManualClock(START)
    with rampart.Service(tmp_path / "a.db", clock=clock) as service:
        p = service.create_partner("Acme").partner_id
        setup = service.create_2fa(p, contact)
        service.enable_2fa(p, contact, code(setup.manual, clock.now))
        before = service.audit_events(p)
    with rampart.Service(tmp_path / "a.db", clock=clock) as service:
        assert service.audit_events(p) == before
        assert_chain(service.audit_events(p).events)
        assert [(r.rows, r.first_bad_seq) for r in service.verify_audit(p)] == [(3, None)]


ENABLED = 'rampart_2fa_attempts_total{operation="enable",factor="token",result="accepted"} 1'


def test_metrics_text_counts_this_service_only(clock, contact):
    with rampart.Service(clock=clock) as a, rampart.Service(clock=clock) as b:
        p = a.create_partner("Acme").partner_id
        setup = a.create_2fa(p, contact)
        a.enable_2fa(p, contact, code(setup.manual, clock.now))
        text = a.metrics_text()
        assert ENABLED in text.splitlines()
        assert 'rampart_2fa_transitions_total{transition="enabled"} 1' in text.splitlines()
        assert "# TYPE rampart_2fa_attempts_total counter" in text.splitlines()
        assert 'rampart_audit_events{event="2fa.enabled"} 1' in text.splitlines()
        other = b.metrics_text()
        assert "rampart_2fa_attempts_total{" not in other
        assert "rampart_2fa_transitions_total{" not in other
        assert 'rampart_build_info{version="' in other
        # a second contact enabled on a: 2 there, still nothing on b
        second = str(uuid.uuid4())
        setup = a.create_2fa(p, second)
        a.enable_2fa(p, second, code(setup.manual, clock.now))
        assert ENABLED[:-1] + "2" in a.metrics_text().splitlines()
        assert 'operation="enable"' not in b.metrics_text()


def test_closed_service(clock):
    service = rampart.Service(clock=clock)
    service.close()
    for call in (service.metrics_text, service.verify_audit, lambda: service.audit_events(str(uuid.uuid4()))):
        raises(rampart.ConfigError, 500, "config", "the service is closed", call)
