"""Shared fixtures: a service on a manual clock, a partner and a contact."""

from __future__ import annotations

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
