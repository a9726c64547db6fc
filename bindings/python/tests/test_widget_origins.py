"""Who may embed the widget (SPEC section 6.2) through the binding: a partner's embedding
origins (canonical, at most 20, https only in production, errors naming the index), the
operator's approval of a production widget (on the partner, audit-logged), and the pure
helpers check_origins, frame_ancestors and origin_allowed."""

from __future__ import annotations

import uuid
from typing import Any, Callable

import pytest

import rampart

LONE = "\ud800"  # a lone surrogate: a valid Python str, not valid Unicode text
LOCAL = "http://localhost:* http://127.0.0.1:*"


def raises(cls: type[rampart.RampartError], code: int, kind: str, message: str, call: Callable[[], Any]) -> None:
    with pytest.raises(rampart.RampartError) as e:
        call()
    assert type(e.value) is cls, repr(e.value)
    assert (e.value.code, e.value.kind, e.value.message) == (code, kind, message)


def invalid(message: str, call: Callable[[], Any]) -> None:
    raises(rampart.InvalidInputError, 400, "invalid_input", message, call)


def not_found(call: Callable[[], Any]) -> None:
    raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", call)


def test_origins_round_trip_canonical(service, partner):
    assert service.widget_origins(partner) == []
    assert service.partner(partner).widget_origins == []
    stored = service.set_widget_origins(partner, ["HTTPS://Shop.Example:443", "http://localhost:3000/"])
    assert stored == ["https://shop.example", "http://localhost:3000"]
    assert service.widget_origins(partner) == ["https://shop.example", "http://localhost:3000"]
    assert service.partner(partner).widget_origins == ["https://shop.example", "http://localhost:3000"]
    # a tuple is a list too; the list replaces the old one; an empty one removes them all
    assert service.set_widget_origins(partner, ("https://bücher.example",)) == ["https://xn--bcher-kva.example"]
    assert service.widget_origins(partner) == ["https://xn--bcher-kva.example"]
    assert service.set_widget_origins(partner, []) == []
    assert service.widget_origins(partner) == []


def test_production_takes_only_https(service):
    live = service.create_partner("Live", "production").partner_id
    assert service.set_widget_origins(live, ["https://shop.example"]) == ["https://shop.example"]
    invalid(
        "widgetOrigins[1] must be https in production",
        lambda: service.set_widget_origins(live, ["https://a.example", "http://b.example"]),
    )
    invalid(
        "widgetOrigins[0] must be https in production",
        lambda: service.set_widget_origins(live, ["http://localhost:3000"]),
    )
    assert service.widget_origins(live) == ["https://shop.example"]  # unchanged


def test_list_rules(service, partner):
    twenty = [f"https://s{i}.example" for i in range(20)]
    assert service.set_widget_origins(partner, twenty) == twenty
    invalid(
        "widgetOrigins may list at most 20 origins",
        lambda: service.set_widget_origins(partner, twenty + ["https://s20.example"]),
    )
    # the length is the answer before any item's, as for valid text
    invalid(
        "widgetOrigins may list at most 20 origins",
        lambda: service.set_widget_origins(partner, twenty + [LONE]),
    )
    invalid(
        "widgetOrigins[1] is the same origin as widgetOrigins[0]",
        lambda: service.set_widget_origins(partner, ["https://a.example", "HTTPS://A.example:443"]),
    )
    invalid(
        "widgetOrigins[0] must not hold a wildcard: register each origin",
        lambda: service.set_widget_origins(partner, ["https://*.example"]),
    )
    invalid(
        "widgetOrigins[0] must be an origin: http(s)://host[:port], without path, query or credentials",
        lambda: service.set_widget_origins(partner, ["https://a.example/path"]),
    )
    assert service.widget_origins(partner) == twenty
    with pytest.raises(TypeError, match="^origins must be a list of str, got str$"):
        service.set_widget_origins(partner, "https://a.example")
    with pytest.raises(TypeError, match="^widgetOrigins\\[1\\] must be a str, got int$"):
        service.set_widget_origins(partner, ["https://a.example", 7])  # type: ignore[list-item]


def test_unknown_partner(service):
    nobody = str(uuid.uuid4())
    not_found(lambda: service.set_widget_origins(nobody, ["https://a.example"]))
    not_found(lambda: service.widget_origins(nobody))
    not_found(lambda: service.set_widget_approval(nobody, True, operator="ops"))
    not_found(lambda: service.partner(nobody))
    not_found(lambda: service.audit_events(nobody))
    assert service.verify_audit() == []  # no partner, so no chain: nothing was recorded


def test_approval_shows_on_the_partner_and_is_audit_logged(service, partner, clock):
    assert service.partner(partner).widget_approved is False
    assert service.set_widget_approval(partner, True, operator="ops@example.com") is None
    p = service.partner(partner)
    assert p.widget_approved is True and p.two_factor_waived is False
    assert repr(p) == (
        f"Partner(id='{partner}', name='Acme', environment='sandbox', two_factor_waived=False, widget_approved=True)"
    )
    service.set_widget_approval(partner, False, operator="ops@example.com")
    assert service.partner(partner).widget_approved is False
    at = "2023-11-14T22:13:20.000Z"  # clock.now, 1_700_000_000
    assert clock.now == 1_700_000_000
    rows = service.audit_events(partner).events
    assert [(r.seq, r.actor, r.event, r.partner_id, r.contact_id, r.at, r.details) for r in rows] == [
        (1, "operator:ops@example.com", "widget.approved", partner, None, at, {}),
        (2, "operator:ops@example.com", "widget.unapproved", partner, None, at, {}),
    ]
    invalid("operator must be valid Unicode text", lambda: service.set_widget_approval(partner, True, operator=LONE))
    assert len(service.audit_events(partner).events) == 2


def test_check_origins():
    assert rampart.check_origins(["HTTPS://Shop.Example:443", "http://localhost:3000"], "sandbox") == [
        "https://shop.example",
        "http://localhost:3000",
    ]
    assert rampart.check_origins([], "production") == []
    invalid(
        "widgetOrigins[1] must be https in production",
        lambda: rampart.check_origins(["https://a.example", "http://b.example"], "production"),
    )
    invalid(
        "widgetOrigins may list at most 20 origins",
        lambda: rampart.check_origins([f"https://s{i}.example" for i in range(21)], "sandbox"),
    )
    invalid("environment must be sandbox or production", lambda: rampart.check_origins([], "staging"))  # type: ignore[arg-type]


def test_frame_ancestors_per_environment():
    origins = ["https://a.example", "HTTPS://B.example:8443"]
    assert rampart.frame_ancestors(origins, "production") == "frame-ancestors https://a.example https://b.example:8443"
    assert (
        rampart.frame_ancestors(origins, "sandbox")
        == f"frame-ancestors https://a.example https://b.example:8443 {LOCAL}"
    )
    assert rampart.frame_ancestors([], "sandbox") == f"frame-ancestors {LOCAL}"
    assert rampart.frame_ancestors([], "production") == "frame-ancestors 'none'"
    # nothing but origins reaches the header
    invalid(
        "widgetOrigins[0] must be an origin: http(s)://host[:port], without path, query or credentials",
        lambda: rampart.frame_ancestors(["https://a.example; script-src *"], "sandbox"),
    )


def test_origin_allowed():
    registered = ["HTTPS://Shop.Example:443"]
    assert rampart.origin_allowed("https://shop.example", registered, "production") is True
    assert rampart.origin_allowed("https://shop.example:444", registered, "production") is False
    assert rampart.origin_allowed("http://localhost:5173", registered, "sandbox") is True
    assert rampart.origin_allowed("http://localhost:5173", registered, "production") is False
    assert rampart.origin_allowed("http://localhost.evil.example", [], "sandbox") is False
    assert rampart.origin_allowed("null", [], "sandbox") is False
    invalid(
        "widgetOrigins[0] must be https in production",
        lambda: rampart.origin_allowed("http://a.example", ["http://a.example"], "production"),
    )
    with pytest.raises(TypeError, match="^registered must be a list of str, got NoneType$"):
        rampart.origin_allowed("https://a.example", None, "sandbox")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [LONE, f"https://b{LONE}.example", f"https://b.example\udfff"])
def test_origins_not_unicode(service, partner, bad):
    """A lone surrogate in an origin is that item's 400, never U+FFFD, never UnicodeEncodeError."""
    message = "widgetOrigins[1] must be valid Unicode text"
    origins = ["https://a.example", bad]
    invalid(message, lambda: service.set_widget_origins(partner, origins))
    invalid(message, lambda: rampart.check_origins(origins, "sandbox"))
    invalid(message, lambda: rampart.frame_ancestors(origins, "production"))
    invalid(message, lambda: rampart.origin_allowed("https://a.example", origins, "sandbox"))
    invalid("origin must be valid Unicode text", lambda: rampart.origin_allowed(bad, [], "sandbox"))
    assert service.widget_origins(partner) == []
