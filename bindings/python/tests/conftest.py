"""Shared fixtures: a service on a manual clock, a partner and a contact; and the audit chain
rule (SPEC section 9.1) computed independently of the library."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any, Iterator

import pyotp
import pytest

import rampart

VECTORS = Path(__file__).resolve().parents[3] / "tests" / "vectors"
START = 1_700_000_000  # 20 s into its 30 s time step (1_700_000_000 % 30 == 20)


def load_vectors(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@pytest.fixture
def clock() -> rampart.ManualClock:
    return rampart.ManualClock(START)


@pytest.fixture
def service(clock: rampart.ManualClock) -> Iterator[rampart.Service]:
    with rampart.Service(clock=clock) as s:
        yield s


@pytest.fixture
def partner(service: rampart.Service) -> str:
    return service.create_partner("Acme").partner_id


@pytest.fixture
def contact() -> str:
    return str(uuid.uuid4())


def code(manual: str, at: int) -> str:
    """The code an authenticator app shows, computed by pyotp (an independent implementation)."""
    return pyotp.TOTP(manual).at(at)


GENESIS = "0" * 64  # `prev` of a partner's first audit row


def audit_hash(row: rampart.AuditRow) -> str:
    """What `row.hash` must be: hex SHA-256 of the RFC 8785 canonical JSON of exactly nine members.
    For these values (strings, integers, null, objects of them) sorted keys, no white space and
    UTF-8 output are JCS."""
    members = {
        "seq": row.seq,
        "id": row.id,
        "at": row.at,
        "partnerId": row.partner_id,
        "contactId": row.contact_id,
        "actor": row.actor,
        "event": row.event,
        "details": row.details,
        "prev": row.prev,
    }
    canonical = json.dumps(members, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def assert_chain(rows: list[rampart.AuditRow]) -> None:
    """A whole chain from its start: seq 1, 2, ...; each hash recomputed; each prev the hash before."""
    prev = GENESIS
    for i, row in enumerate(rows):
        assert row.seq == i + 1
        assert row.prev == prev, f"row {row.seq}: prev {row.prev} != {prev}"
        assert row.hash == audit_hash(row), f"row {row.seq}: hash {row.hash} != {audit_hash(row)}"
        prev = row.hash
