"""`Service("postgres://...")`: a PostgreSQL store shared by several services (SPEC section 7).

Needs the PostgreSQL that RAMPART_TEST_DATABASE_URL names (`make python-test` starts one with
scripts/with-postgres.sh); without it these tests fail rather than skip. Each test works in a
schema of its own, made with psql."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import traceback
import uuid
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

import rampart
from conftest import START, code

KEY = bytes(range(32))
PASSWORD = "Pg-s3cret-9d1f"  # trust authentication ignores it; it must never be shown


def base_url() -> str:
    url = os.environ.get("RAMPART_TEST_DATABASE_URL")
    if not url:
        pytest.fail("RAMPART_TEST_DATABASE_URL is not set: run `make python-test` (scripts/with-postgres.sh starts a PostgreSQL)")
    return url


def psql() -> str:
    found = Path(os.environ.get("RAMPART_TEST_PG_BIN", ""), "psql")
    if found.is_file():
        return str(found)
    on_path = shutil.which("psql")
    if on_path is None:
        pytest.fail("psql not found (RAMPART_TEST_PG_BIN or PATH): it makes each test's schema")
    return on_path


def with_query(url: str, query: list[tuple[str, str]]) -> str:
    """`url` with this query, every value percent-encoded (`-c search_path=x` as `-c%20search_path%3Dx`)."""
    return urlunsplit(urlsplit(url)._replace(query=urlencode(query, quote_via=quote)))


def query_of(url: str) -> list[tuple[str, str]]:
    return parse_qsl(urlsplit(url).query)


@pytest.fixture
def url() -> str:
    """A URL whose connections see only a new, empty schema."""
    base = base_url()
    schema = f"t_{uuid.uuid4().hex}"
    subprocess.run([psql(), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", base, "-c", f"CREATE SCHEMA {schema}"], check=True, timeout=60)
    return with_query(base, [*query_of(base), ("options", f"-c search_path={schema}")])


def with_password(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{PASSWORD}@{parts.hostname}:{parts.port}"))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_services_share_one_database(url):
    clock = rampart.ManualClock(START)
    other_url = url.replace("postgres://", "postgresql://", 1)  # both schemes are accepted
    with rampart.Service(url, master_key=KEY, clock=clock) as a, rampart.Service(other_url, master_key=KEY, clock=clock) as b:
        assert a.path is None and b.path is None
        credentials = a.create_partner("Acme")
        partner = credentials.partner_id
        assert b.partner(partner).name == "Acme" and b.partner_count() == 1
        contact = str(uuid.uuid4())

        setup = a.create_2fa(partner, contact)
        a.enable_2fa(partner, contact, code(setup.manual, clock.now))
        assert b.status_2fa(partner, contact) is True
        clock.advance(30)
        now_code = code(setup.manual, clock.now)
        assert a.verify_2fa(partner, contact, now_code).accepted is True
        # The code is used up everywhere: replayed through either service, it is refused.
        assert b.verify_2fa(partner, contact, now_code).accepted is False
        assert a.verify_2fa(partner, contact, now_code).accepted is False
        clock.advance(30)
        assert b.verify_2fa(partner, contact, code(setup.manual, clock.now)).accepted is True
        assert a.status_2fa(partner, contact) is True

        # Keys rotated through one service are the keys the other accepts.
        assert b.authenticate(credentials.secret_key).partner_id == partner
        rotated = a.rotate_keys(partner, operator="ops@example.com")
        with pytest.raises(rampart.AuthenticationError) as e:
            b.authenticate(credentials.secret_key)
        assert (e.value.code, e.value.kind) == (401, "unauthorized")
        assert b.authenticate(rotated.secret_key).partner_id == partner
        # One chain in the shared database, the same through either service.
        assert b.audit_events(partner) == a.audit_events(partner)
        assert [(r.actor, r.event) for r in a.audit_events(partner).events] == [
            ("partner", "2fa.created"),
            ("partner", "2fa.enabled"),
            ("partner", "recovery_codes.issued"),
            ("operator:ops@example.com", "partner.keys_rotated"),
        ]
        assert b.verify_audit(partner) == a.verify_audit(partner)
        assert [(r.rows, r.first_bad_seq) for r in b.verify_audit(partner)] == [(4, None)]

    # A service opened later sees all of it; disabling through it is seen by a fresh one.
    clock.advance(30)
    with rampart.Service(url, master_key=KEY, clock=clock) as c:
        assert c.status_2fa(partner, contact) is True
        c.disable_2fa(partner, contact, code(setup.manual, clock.now))
    with rampart.Service(url, master_key=KEY, clock=clock) as d:
        assert d.status_2fa(partner, contact) is False


def test_recovery_codes_are_shared_and_used_once(url):
    """A recovery code used through one service is used for the other; of 8 concurrent uses of
    one code across two services exactly one is accepted (SPEC section 8.1)."""
    from concurrent.futures import ThreadPoolExecutor

    clock = rampart.ManualClock(START)
    with rampart.Service(url, master_key=KEY, clock=clock) as a, rampart.Service(url, master_key=KEY, clock=clock) as b:
        partner = a.create_partner("Acme").partner_id
        contact = str(uuid.uuid4())
        setup = a.create_2fa(partner, contact)
        codes = b.enable_2fa(partner, contact, code(setup.manual, clock.now))
        assert a.verify_2fa(partner, contact, recovery_code=codes[0]).recovery_codes_remaining == 9
        assert not b.verify_2fa(partner, contact, recovery_code=codes[0])
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda i: (a, b)[i % 2].verify_2fa(partner, contact, recovery_code=codes[1]), range(8)))
        assert [bool(r) for r in results].count(True) == 1
        assert b.recovery_codes_remaining(partner, contact) == 8
        b.disable_2fa(partner, contact, recovery_code=codes[2])
        assert a.contact_state(partner, contact).purchase_hold_until == START + 86_400


def test_another_master_key_is_refused(url):
    clock = rampart.ManualClock(START)
    with rampart.Service(url, master_key=KEY, clock=clock) as a:
        partner = a.create_partner("Acme").partner_id
        a.create_2fa(partner, str(uuid.uuid4()))
    # The stored secret does not open under another key with the same id: refused at open.
    with pytest.raises(rampart.ConfigError):
        rampart.Service(url, master_key=bytes(32), clock=clock)


def test_a_url_needs_a_master_key(url):
    message = "a PostgreSQL database needs master_key: every service sharing it must seal and open secrets with the same key"
    for environment in ("sandbox", "production"):
        with pytest.raises(rampart.ConfigError) as e:
            rampart.Service(url, environment=environment)
        assert (e.value.code, e.value.kind, e.value.message) == (500, "config", message)


def test_the_password_is_never_shown(url):
    secret_url = with_password(url)
    with rampart.Service(secret_url, master_key=KEY) as service:
        assert service.create_partner("Acme").partner_id
        shown = [repr(service), str(service), repr(service.path)]
        assert repr(service).startswith("Service('postgres://postgres:***@127.0.0.1:"), repr(service)
        assert "?" not in repr(service) and "search_path" not in repr(service)
    shown.append(repr(service))  # closed
    # libpq's other place for it: the query.
    with rampart.Service(with_query(url, [*query_of(url), ("password", PASSWORD)]), master_key=KEY) as service:
        assert service.partner_count() == 1
        shown += [repr(service), repr(service.path)]
    # Refusals (no key; a closed port) quote neither the URL nor its password.
    with pytest.raises(rampart.ConfigError) as no_key:
        rampart.Service(secret_url)
    unreachable = with_password(f"postgres://postgres@127.0.0.1:{closed_port()}/postgres?sslmode=disable")
    with pytest.raises(rampart.StorageError) as down:
        rampart.Service(unreachable, master_key=KEY)
    for e in (no_key, down):
        shown += [str(e.value), repr(e.value), repr(e.value.args), *traceback.format_exception(e.value)]
    for text in shown:
        assert PASSWORD not in text, text


def test_an_unreachable_database_is_a_storage_error():
    url = f"postgres://postgres@127.0.0.1:{closed_port()}/postgres?sslmode=disable"
    started = time.monotonic()
    with pytest.raises(rampart.StorageError) as e:
        rampart.Service(url, master_key=KEY)
    assert (e.value.code, e.value.kind, e.value.message) == (500, "internal", "Internal server error")
    assert time.monotonic() - started < 30
    # An unparsable URL fails the same way, without quoting it.
    with pytest.raises(rampart.StorageError) as e:
        rampart.Service(f"postgres://postgres:{PASSWORD}@127.0.0.1:notaport/postgres", master_key=KEY)
    assert PASSWORD not in repr(e.value)


def test_tcp_without_sslmode_disable_needs_tls(url):
    # The test cluster accepts TLS with a certificate of its own CA: without that CA the server's
    # certificate does not verify, and the store never falls back to plain text.
    tls = with_query(url, [(k, v) for k, v in query_of(url) if k != "sslmode"])
    with pytest.raises(rampart.StorageError):
        rampart.Service(tls, master_key=KEY)


def test_a_closed_service_refuses_calls(url):
    service = rampart.Service(url, master_key=KEY)
    partner = service.create_partner("Acme").partner_id
    service.close()
    assert service.closed
    with pytest.raises(rampart.ConfigError):
        service.partner(partner)
