"""The widget's purchase flow: sessions, email sign-in, the 2FA step, sandbox orders, and the
partner's reads of orders and contacts, with exact values and errors."""

from __future__ import annotations

import uuid

import pytest

import rampart

from conftest import START, code

EMAIL = "ada@example.com"
ADDRESS = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
NO_PARTNER = "00000000-0000-4000-8000-000000000000"


def key_of(service: rampart.Service, partner: str) -> str:
    return service.partner(partner).publishable_key


def signed_in(service: rampart.Service, partner: str, email: str = EMAIL) -> str:
    token, _ = service.open_session(key_of(service, partner))
    sent = service.request_sign_in_code(token, email)
    service.sign_in(token, email, sent.code)
    return token


def place(service: rampart.Service, token: str, amount: str = "25") -> rampart.Order:
    return service.place_order(token, coin="btc", amount=amount, address=ADDRESS)


def raises(cls, code_, kind, message, call, *args, **kwargs):
    with pytest.raises(cls) as e:
        call(*args, **kwargs)
    assert (type(e.value), e.value.code, e.value.kind, e.value.message) == (cls, code_, kind, message)
    return e.value


def test_session_sign_in_and_state(service, partner):
    token, state = service.open_session(key_of(service, partner))
    assert token.startswith("ws_") and len(token) == 46
    assert (state.partner_id, state.environment, state.origin, state.signed_in) == (partner, "sandbox", "", False)
    assert (state.email, state.contact_id, state.kyc_passed, state.two_factor, state.may_purchase) == (
        None,
        None,
        False,
        None,
        False,
    )
    _, framed = service.open_session(key_of(service, partner), "http://localhost:5173")
    assert framed.origin == "http://localhost:5173"

    sent = service.request_sign_in_code(token, " Ada@Example.COM ")
    assert len(sent.code) == 6 and sent.code.isdigit() and sent.expires_in == 600
    assert sent.code not in repr(sent) and repr(sent) == "SignInCode(<redacted>, expires_in=600)"
    wrong = "000001" if sent.code == "000000" else "000000"
    raises(rampart.AuthenticationError, 401, "sign_in_code_failed", "The sign-in code is wrong",
           service.sign_in, token, EMAIL, wrong)
    state = service.sign_in(token, EMAIL, sent.code)
    contact = service.contact_by_email(partner, "ADA@example.com ")
    assert uuid.UUID(contact)
    assert (state.signed_in, state.email, state.contact_id, state.two_factor, state.may_purchase) == (
        True,
        EMAIL,
        contact,
        "none",
        True,
    )
    assert service.session_state(token) == state
    raises(rampart.AuthenticationError, 401, "sign_in_code_expired",
           "The sign-in code has expired or was tried too often, ask for a new one",
           service.sign_in, token, EMAIL, sent.code)

    service.close_session(token)
    for call in (service.session_state, service.close_session):
        raises(rampart.AuthenticationError, 401, "session_expired", "Widget session expired, sign in again", call, token)


def test_orders_read_back_and_paged(service, partner, clock):
    token = signed_in(service, partner)
    contact = service.contact_by_email(partner, EMAIL)
    first = place(service, token, "25")
    clock.advance(1)
    second = place(service, token, "30")
    clock.advance(1)
    third = place(service, token, "35.50")

    assert (
        first.contact_id, first.coin, first.amount, first.currency, first.address, first.price, first.quantity,
        first.status, first.created_at, first.updated_at,
    ) == (contact, "btc", "25", "usd", ADDRESS, "65000.00", "0.00038461", "completed", START, START)
    assert uuid.UUID(first.order_id)
    assert (second.quantity, second.created_at) == ("0.00046153", START + 1)
    assert (third.amount, third.quantity, third.created_at) == ("35.50", "0.00054615", START + 2)
    assert service.order(partner, first.order_id) == first
    assert service.order(partner, uuid.UUID(third.order_id)) == third
    assert repr(first) == (
        f"Order(order_id='{first.order_id}', contact_id='{contact}', coin='btc', amount='25', currency='usd', "
        f"status='completed', created_at={START})"
    )

    page = service.orders(partner, contact, limit=2)
    assert (page.orders, page.next) == ([third, second], second.order_id)
    page = service.orders(partner, contact, page.next, 2)
    assert (page.orders, page.next) == ([first], None)
    assert service.orders(partner, uuid.UUID(contact)).orders == [third, second, first]
    assert service.orders(partner, contact, after=None, limit=None).next is None
    empty = service.orders(partner, str(uuid.uuid4()))
    assert (empty.orders, empty.next) == ([], None)


def test_read_errors(service, partner):
    token = signed_in(service, partner)
    contact = service.contact_by_email(partner, EMAIL)
    order = place(service, token)
    other = service.create_partner("Other").partner_id

    raises(rampart.NotFoundError, 404, "order_not_found", "Order not found", service.order, partner, str(uuid.uuid4()))
    raises(rampart.NotFoundError, 404, "order_not_found", "Order not found", service.order, other, order.order_id)
    raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", service.order, NO_PARTNER, order.order_id)
    raises(rampart.InvalidInputError, 400, "invalid_input", "orderId must be a UUID", service.order, partner, "42")
    raises(rampart.InvalidInputError, 400, "invalid_input", "order_id must be valid Unicode text",
           service.order, partner, "\ud800")

    raises(rampart.NotFoundError, 404, "contact_not_found", "Contact not found",
           service.contact_by_email, partner, "bob@example.com")
    raises(rampart.NotFoundError, 404, "contact_not_found", "Contact not found", service.contact_by_email, other, EMAIL)
    for bad in ["", "ada", "ada@", "a b@example.com"]:
        raises(rampart.InvalidInputError, 400, "invalid_input",
               "email must be an email address such as name@example.com", service.contact_by_email, partner, bad)
    raises(rampart.InvalidInputError, 400, "invalid_input", "email must be valid Unicode text",
           service.contact_by_email, partner, "\ud800@example.com")

    for limit in [0, 101, -1, True, 1.5, "20"]:
        raises(rampart.InvalidInputError, 400, "invalid_input", "limit must be 1 to 100",
               service.orders, partner, contact, None, limit)
    raises(rampart.InvalidInputError, 400, "invalid_input", "orderId must be a UUID",
           service.orders, partner, contact, "nope")
    # `after` must be an order of this contact: another contact's reads as unknown.
    raises(rampart.NotFoundError, 404, "order_not_found", "Order not found",
           service.orders, partner, contact, str(uuid.uuid4()))
    raises(rampart.NotFoundError, 404, "order_not_found", "Order not found",
           service.orders, partner, str(uuid.uuid4()), order.order_id)
    raises(rampart.InvalidInputError, 400, "contact_id_required", "contactId is required",
           service.orders, partner, None)
    with pytest.raises(TypeError):
        service.order(partner, 42)


def test_purchase_rules(service, partner, clock):
    token, _ = service.open_session(key_of(service, partner))
    raises(rampart.AuthenticationError, 401, "sign_in_required", "Sign in to continue", place, service, token)
    service.request_sign_in_code(token, EMAIL)
    token = signed_in(service, partner)
    contact = service.contact_by_email(partner, EMAIL)

    e = raises(rampart.InvalidInputError, 400, "invalid_input", "address is not valid: The address is empty.",
               service.place_order, token, coin="btc", amount="25", address="")
    assert e.message.startswith("address is not valid")
    with pytest.raises(rampart.InvalidInputError) as bad:
        place(service, token, "1")
    assert bad.value.message.startswith("amount is not valid: ")
    eur = service.place_order(token, coin="btc", amount="25", currency="eur", address=ADDRESS)
    assert (eur.currency, eur.price) == ("eur", "59800.00")
    ether_only = rampart.WidgetConfig.from_dict({"coins": [{"symbol": "eth", "chain": "ethereum", "name": "Ether"}]})
    with pytest.raises(rampart.InvalidInputError) as bad:
        service.place_order(token, coin="btc", amount="25", address=ADDRESS, config=ether_only)
    assert bad.value.message.endswith("is not valid: The coin symbol is not supported.")

    # With 2FA enabled the session passes the 2FA step before buying.
    setup = service.create_2fa(partner, contact)
    service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    raises(rampart.ConflictError, 403, "two_factor_required", "2FA is required before buying", place, service, token)
    assert service.session_state(token).two_factor == "verify"
    clock.advance(30)
    raises(rampart.AuthenticationError, 401, "token_failed", "Google 2FA failed",
           service.session_verify_2fa, token, "000000" if code(setup.manual, clock.now) != "000000" else "000001")
    raises(rampart.AuthenticationError, 401, "token_missing", "Google 2FA requires the token to be passed in",
           service.session_verify_2fa, token, None)
    state = service.session_verify_2fa(token, code(setup.manual, clock.now))
    assert (state.two_factor, state.may_purchase) == ("passed", True)
    assert place(service, token).status == "completed"


def test_recovery_in_the_session(service, partner, clock):
    """SPEC section 8.3: the session shows the codes left; regenerate with an authenticator code;
    a recovery code disables 2FA through the session (actor `contact`), the step becomes setup
    when 2FA is required, and the purchase hold refuses orders with its own kind."""
    token = signed_in(service, partner)
    contact = service.contact_by_email(partner, EMAIL)
    service.set_kyc_passed(partner, contact, True, operator="ops")
    setup = service.create_2fa(partner, contact)
    codes = service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    state = service.session_state(token)
    assert (state.two_factor, state.recovery_codes_remaining, state.purchase_hold_until) == ("verify", 10, None)
    clock.advance(30)
    fresh = service.session_regenerate_recovery_codes(token, code(setup.manual, clock.now))
    assert len(fresh) == 10 and not set(fresh) & set(codes)
    raises(rampart.InvalidInputError, 400, "factor_conflict", "Give token or recoveryCode, not both",
           service.session_verify_2fa, token, "123456", recovery_code=fresh[0])
    raises(rampart.AuthenticationError, 401, "token_failed", "Google 2FA failed",
           service.session_verify_2fa, token, recovery_code=codes[0])
    state = service.session_verify_2fa(token, recovery_code=fresh[0])
    assert (state.two_factor, state.may_purchase, state.recovery_codes_remaining) == ("setup", False, 0)
    assert state.purchase_hold_until == clock.now + 86_400
    assert all(c not in repr(state) for c in fresh)
    assert service.audit_events(partner, contact).events[-1].actor == "contact"
    assert service.status_2fa(partner, contact) is False
    # set up again (the KYC rule, with a later step), then the hold still refuses the order
    clock.advance(30)
    setup = service.create_2fa(partner, contact)
    service.enable_2fa(partner, contact, code(setup.manual, clock.now))
    clock.advance(30)
    service.session_verify_2fa(token, code(setup.manual, clock.now))
    raises(rampart.ConflictError, 403, "purchase_hold",
           "Purchases are on hold until 2023-11-15T22:13:50Z after a 2FA reset", place, service, token)
    clock.advance(86_400)  # the hold has passed (and the idle session with it)
    assert service.purchase_check(partner, contact).allowed is True


def test_sessions_expire_and_sign_in_is_throttled(service, partner, clock):
    key = key_of(service, partner)
    idle, _ = service.open_session(key)
    clock.advance(1800)
    raises(rampart.AuthenticationError, 401, "session_expired", "Widget session expired, sign in again",
           service.request_sign_in_code, idle, EMAIL)

    token, _ = service.open_session(key)
    for _ in range(3):
        service.request_sign_in_code(token, EMAIL)
    clock.advance(100)
    e = raises(rampart.ThrottledError, 429, "sign_in_throttled",
               "Too many sign-in codes for this email, try again in 500 seconds",
               service.request_sign_in_code, token, EMAIL)
    assert e.retry_after == 500
    service.request_sign_in_code(token, "bob@example.com")
    clock.advance(500)
    service.request_sign_in_code(token, EMAIL)


def test_embedding_rules(service, partner, clock):
    key = key_of(service, partner)
    raises(rampart.ForbiddenError, 403, "origin_not_allowed", "This site may not embed the widget",
           service.open_session, key, "https://evil.example")
    service.set_widget_origins(partner, ["https://shop.example"])
    assert service.open_session(key, "https://shop.example")[1].origin == "https://shop.example"
    for bad in ["pk_sandbox_nope", "", "pk_\ud800"]:
        raises(rampart.NotFoundError, 404, "partner_not_found", "Partner not found", service.open_session, bad)

    master_key = bytes(range(32))
    with rampart.Service(environment="production", master_key=master_key, clock=clock) as live:
        creds = live.create_partner("Live")
        raises(rampart.ForbiddenError, 403, "widget_not_approved", "This widget is not approved for production yet.",
               live.open_session, creds.publishable_key)
        live.set_widget_approval(creds.partner_id, True, operator="ops@example.com")
        token = signed_in(live, creds.partner_id)
        raises(rampart.UnavailableError, 503, "purchases_unavailable", "Purchases are unavailable on this server",
               place, live, token)
        contact = live.contact_by_email(creds.partner_id, EMAIL)
        assert live.orders(creds.partner_id, contact).orders == []


def test_text_that_is_not_unicode(service, partner):
    token = signed_in(service, partner)
    # Credentials and codes: the wrong one's answer, never a 400.
    raises(rampart.AuthenticationError, 401, "session_expired", "Widget session expired, sign in again",
           service.session_state, "ws_\ud800")
    fresh, _ = service.open_session(key_of(service, partner))
    service.request_sign_in_code(fresh, EMAIL)
    raises(rampart.AuthenticationError, 401, "sign_in_code_failed", "The sign-in code is wrong",
           service.sign_in, fresh, EMAIL, "\ud800")
    # Other text: the argument's own 400.
    for field, call in [
        ("email", lambda: service.request_sign_in_code(token, "\ud800@example.com")),
        ("origin", lambda: service.open_session(key_of(service, partner), "https://\ud800")),
        ("coin", lambda: service.place_order(token, coin="\ud800", amount="25", address=ADDRESS)),
        ("currency", lambda: service.place_order(token, coin="btc", amount="25", currency="\ud800", address=ADDRESS)),
        ("after", lambda: service.orders(partner, service.contact_by_email(partner, EMAIL), "\ud800")),
    ]:
        raises(rampart.InvalidInputError, 400, "invalid_input", f"{field} must be valid Unicode text", call)
    with pytest.raises(TypeError):
        service.session_state(42)
    with pytest.raises(TypeError):
        service.sign_in(token, EMAIL, 123456)


def test_orders_persist(tmp_path, clock):
    with rampart.Service(tmp_path / "r.db", clock=clock) as s:
        partner = s.create_partner("Acme").partner_id
        order = place(s, signed_in(s, partner))
    with rampart.Service(tmp_path / "r.db", clock=clock) as s:
        assert s.order(partner, order.order_id) == order
        assert s.orders(partner, s.contact_by_email(partner, EMAIL)).orders == [order]


def test_error_families():
    for cls in (rampart.ForbiddenError, rampart.UnavailableError):
        assert issubclass(cls, rampart.RampartError)
