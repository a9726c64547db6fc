"""Side-by-side timings in one Python process (results in docs/BENCHMARKS.md).

1. Pure verify: `rampart.verify(secret, code, t, window=1)` vs pyotp's
   `TOTP.verify(code, for_time=t, valid_window=1)` (target: at least 20x faster).
2. New secret with QR: `rampart.new_secret(issuer, account)` vs pyotp (secret, URI) +
   qrcode + Pillow making the same `data:image/png;base64,...` (target: at least 25x faster).
3. The service's store-backed verify on a SQLite file, in ops/s (each call one transaction).

    make python-bench            # builds the extension with --release first
    python bindings/python/bench/bench.py [--quick]
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import platform
import statistics
import tempfile
import time
import uuid
from importlib.metadata import version
from typing import Callable

import pyotp
import qrcode  # type: ignore[import-untyped]

import rampart

T0 = 1_700_000_000


def rate(fn: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return number / (time.perf_counter() - start)


def side_by_side(
    ours: Callable[[], object], theirs: Callable[[], object], n_ours: int, n_theirs: int, rounds: int
) -> tuple[float, float, float]:
    """Median rates and the median of per-round ratios; the two run alternately, so a change in
    the machine's load hits both sides of each ratio alike."""
    a, b, r = [], [], []
    for _ in range(rounds):
        x, y = rate(ours, n_ours), rate(theirs, n_theirs)
        a.append(x)
        b.append(y)
        r.append(x / y)
    return statistics.median(a), statistics.median(b), statistics.median(r)


def pyotp_new_secret(issuer: str, account: str) -> str:
    secret = pyotp.random_base32()
    uri = pyotp.TOTP(secret).provisioning_uri(name=account, issuer_name=issuer)
    image = qrcode.make(uri)  # a PIL image
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args()
    scale = 10 if args.quick else 1

    secret = pyotp.random_base32()
    totp = pyotp.TOTP(secret)
    code = totp.at(T0)
    assert rampart.verify(secret, code, T0, 1) and totp.verify(code, for_time=T0, valid_window=1)
    n = 20_000 // scale
    right = side_by_side(
        lambda: rampart.verify(secret, code, T0, 1), lambda: totp.verify(code, for_time=T0, valid_window=1), n, n // 10, 15
    )
    wrong = "000000" if code != "000000" else "000001"
    wrong_rates = side_by_side(
        lambda: rampart.verify(secret, wrong, T0, 1), lambda: totp.verify(wrong, for_time=T0, valid_window=1), n, n // 10, 15
    )

    assert pyotp_new_secret("Acme", "ada@example.com").startswith("data:image/png;base64,")
    m = 200 // scale
    qr = side_by_side(
        lambda: rampart.new_secret("Acme", "ada@example.com"), lambda: pyotp_new_secret("Acme", "ada@example.com"), m, m // 10, 9
    )

    with tempfile.TemporaryDirectory() as tmp:
        clock = rampart.ManualClock(T0)
        with rampart.Service(os.path.join(tmp, "bench.db"), clock=clock, throttling=False) as service:
            partner = service.create_partner("Bench").partner_id
            contact = str(uuid.uuid4())
            setup = service.create_2fa(partner, contact)
            service.enable_2fa(partner, contact, rampart.code_at(setup.manual, T0))
            k = 2_000 // scale
            codes = [rampart.code_at(setup.manual, T0 + 30 * (i + 1)) for i in range(k)]
            start = time.perf_counter()
            for c in codes:
                clock.advance(30)
                assert service.verify_2fa(partner, contact, c)
            accepted = k / (time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(k):
                service.verify_2fa(partner, contact, "junk")
            rejected = k / (time.perf_counter() - start)
            status = statistics.median(rate(lambda: service.status_2fa(partner, contact), k) for _ in range(3))

    print(f"python {platform.python_version()} on {platform.machine()}, rampart {rampart.__version__}, "
          f"pyotp {version('pyotp')}, qrcode {version('qrcode')}, pillow {version('pillow')}, "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print()
    print("| measurement | rampart | peer | ratio (median of rounds) |")
    print("|---|---:|---:|---:|")
    for label, (x, y, r), peer in [
        ("verify, right code, window 1", right, "pyotp `TOTP.verify(valid_window=1)`"),
        ("verify, wrong code, window 1", wrong_rates, "pyotp `TOTP.verify(valid_window=1)`"),
        ("new secret + Key URI + QR PNG data URI", qr, "pyotp + qrcode + Pillow"),
    ]:
        print(f"| {label} | {x:,.0f}/s | {y:,.0f}/s ({peer}) | **{r:.1f}x** |")
    print(f"| Service.verify_2fa, SQLite file, accepted (one write each) | {accepted:,.0f} ops/s | | |")
    print(f"| Service.verify_2fa, SQLite file, rejected (failure counted) | {rejected:,.0f} ops/s | | |")
    print(f"| Service.status_2fa, SQLite file | {status:,.0f} ops/s | | |")


if __name__ == "__main__":
    main()
