"""The partner backend in examples/python serves create / enable / status through the binding."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python" / "partner_backend.py"


def test_partner_backend_self_test():
    run = subprocess.run([sys.executable, str(EXAMPLE), "--self-test"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "self-test passed" in run.stdout
