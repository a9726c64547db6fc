"""One service shared by 8 threads: the GIL is released in storage calls, and of N concurrent
submissions of the same code exactly one is accepted."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pyotp

import rampart

THREADS = 8


def test_eight_threads_share_one_sqlite_service(tmp_path):
    with rampart.Service(tmp_path / "threads.db") as service:
        partner = service.create_partner("Acme").partner_id
        contacts = [str(uuid.uuid4()) for _ in range(THREADS)]

        def lifecycle(contact: str) -> bool:
            setup = service.create_2fa(partner, contact)
            totp = pyotp.TOTP(setup.manual)
            service.enable_2fa(partner, contact, totp.now())
            ok = service.status_2fa(partner, contact)
            for _ in range(20):
                ok = ok and service.status_2fa(partner, contact)
            return ok

        with ThreadPoolExecutor(THREADS) as pool:
            assert list(pool.map(lifecycle, contacts)) == [True] * THREADS


def test_same_code_concurrently_accepted_once(tmp_path):
    clock = rampart.ManualClock(1_700_000_000)
    with rampart.Service(tmp_path / "race.db", clock=clock) as service:
        partner = service.create_partner("Acme").partner_id
        contact = str(uuid.uuid4())
        setup = service.create_2fa(partner, contact)
        service.enable_2fa(partner, contact, pyotp.TOTP(setup.manual).at(clock.now))
        clock.advance(30)
        code = pyotp.TOTP(setup.manual).at(clock.now)
        barrier = threading.Barrier(THREADS)

        def submit(_: int) -> bool:
            barrier.wait()
            return service.verify_2fa(partner, contact, code).accepted

        with ThreadPoolExecutor(THREADS) as pool:
            results = list(pool.map(submit, range(THREADS)))
        assert results.count(True) == 1


def test_gil_is_released_during_storage_calls(tmp_path):
    # While 8 threads hammer the store, a pure-Python counter keeps running.
    with rampart.Service(tmp_path / "gil.db") as service:
        partner = service.create_partner("Acme").partner_id
        stop = threading.Event()
        ticks = 0

        def spin() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1

        def work(_: int) -> None:
            for _ in range(50):
                service.set_widget_text(partner, "Buy")

        spinner = threading.Thread(target=spin)
        spinner.start()
        with ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(work, range(THREADS)))
        stop.set()
        spinner.join()
        assert ticks > 0
        assert service.widget_text(partner) == "Buy"
