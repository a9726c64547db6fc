#!/usr/bin/env bash
# One version for every artifact, taken from one place: `version` in the workspace Cargo.toml.
# Every crate inherits it (`version.workspace = true`), the Python package reads it through
# maturin (`dynamic = ["version"]`), the C library's SONAME and rampart.pc are made from it
# (mk/c.mk), the server prints it (`--version`); the npm packages' own files must say it too.
# Run by `make test` (step 1); prints each mismatch and fails on any.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^version = "\(.*\)"/\1/p;T;q' Cargo.toml)
python3 - "$version" <<'PY'
import json, pathlib, re, sys

version = sys.argv[1]
problems = []
for toml in sorted(pathlib.Path(".").glob("**/Cargo.toml")):
    if toml.parts[0] in ("target", "fuzz") or "node_modules" in toml.parts or str(toml) == "Cargo.toml":
        continue
    if not re.search(r"^version\.workspace = true$", toml.read_text(), re.M):
        problems.append(f"{toml}: the crate must take the workspace version (version.workspace = true)")
if not re.search(r'^dynamic = \["version"\]$', pathlib.Path("bindings/python/pyproject.toml").read_text(), re.M):
    problems.append('bindings/python/pyproject.toml: the version must come from Cargo.toml (dynamic = ["version"])')
for package in ("bindings/node", "widget"):
    manifest = json.loads(pathlib.Path(package, "package.json").read_text())
    lock = json.loads(pathlib.Path(package, "package-lock.json").read_text())
    for where, found in (
        (f"{package}/package.json", manifest.get("version")),
        (f"{package}/package-lock.json", lock.get("version")),
        (f'{package}/package-lock.json packages[""]', lock.get("packages", {}).get("", {}).get("version")),
    ):
        if found != version:
            problems.append(f"{where}: version {found!r}, Cargo.toml says {version!r}")
found = json.loads(pathlib.Path("widget/npm/package.json").read_text()).get("version")
if found != version:
    problems.append(f"widget/npm/package.json: version {found!r}, Cargo.toml says {version!r}")
for line in problems:
    print(f"version: {line}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"   - one version everywhere: {version}")
PY
