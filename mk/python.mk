# The Python binding (bindings/python): a venv with the test tools, the extension built into it
# by maturin, then pytest (which also runs mypy.stubtest) beside a throwaway PostgreSQL. Idempotent: the venv and its tools
# are made once (a stamp records the tool list), cargo rebuilds only what changed.

PYTHON ?= python3
PY_DIR := bindings/python
PY_VENV ?= $(CARGO_TARGET_DIR)/python-venv
PY_TOOLS := maturin>=1.5,<2 pytest pyotp mypy qrcode pillow
PY_STAMP := $(PY_VENV)/.rampart-tools

.PHONY: python-test python-venv python-develop python-bench python-example

python-venv:
	@if [ ! -x "$(PY_VENV)/bin/python" ]; then \
	  echo "-- creating $(PY_VENV)"; $(PYTHON) -m venv "$(PY_VENV)"; fi
	@if [ "$$(cat "$(PY_STAMP)" 2>/dev/null)" != "$(PY_TOOLS)" ]; then \
	  echo "-- installing $(PY_TOOLS)"; \
	  "$(PY_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip && \
	  "$(PY_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check $(foreach t,$(PY_TOOLS),'$(t)') && \
	  echo "$(PY_TOOLS)" > "$(PY_STAMP)"; fi

# PY_PROFILE=--release for benchmarks; the tests use the faster-building dev profile.
PY_PROFILE ?=
python-develop: python-venv
	@echo "-- building the extension into $(PY_VENV) (maturin develop $(PY_PROFILE))"
	cd $(PY_DIR) && VIRTUAL_ENV="$(PY_VENV)" PATH="$(PY_VENV)/bin:$$PATH" \
	  "$(PY_VENV)/bin/maturin" develop --locked --quiet $(PY_PROFILE)

# Inside scripts/with-postgres.sh (a throwaway PostgreSQL, or RAMPART_TEST_DATABASE_URL), which
# tests/test_postgres.py needs: it fails, never skips, without one.
python-test: python-develop
	@echo "-- pytest (lifecycle, vectors, errors, threads, stubtest, PostgreSQL) with a throwaway PostgreSQL"
	cd $(PY_DIR) && "$(CURDIR)/scripts/with-postgres.sh" "$(PY_VENV)/bin/python" -m pytest -q -p no:cacheprovider tests

python-bench:
	@$(MAKE) --no-print-directory python-develop PY_PROFILE=--release
	"$(PY_VENV)/bin/python" $(PY_DIR)/bench/bench.py

python-example: python-develop
	"$(PY_VENV)/bin/python" examples/python/partner_backend.py
