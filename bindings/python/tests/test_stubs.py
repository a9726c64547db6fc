"""The type stubs match the module (mypy.stubtest), and the package ships py.typed."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_py_typed_is_shipped():
    assert resources.files("rampart").joinpath("py.typed").is_file()
    assert resources.files("rampart").joinpath("_rampart.pyi").is_file()


def test_stubtest():
    run = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "rampart"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_example_type_checks_against_the_stubs():
    example = ROOT / "examples" / "python"
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(example)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
