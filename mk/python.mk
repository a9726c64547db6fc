# The Python binding (bindings/python): a venv with the test tools, the extension built into it
# by maturin, then pytest (which also runs mypy.stubtest) beside a throwaway PostgreSQL, then the
# FastAPI example (examples/fastapi: its pytest over real HTTP and mypy --strict on app.py). Idempotent: the venv and its tools
# are made once (a stamp records the tool list; another the example's requirements.txt), cargo rebuilds only what changed.

PYTHON ?= python3
PY_DIR := bindings/python
PY_VENV ?= $(CARGO_TARGET_DIR)/python-venv
# standardwebhooks: the Standard Webhooks reference verifier, pinned (tests/test_webhooks.py).
PY_TOOLS := maturin>=1.5,<2 pytest pyotp mypy qrcode pillow standardwebhooks==1.1.0
PY_STAMP := $(PY_VENV)/.rampart-tools
FASTAPI_DIR := examples/fastapi
FASTAPI_STAMP := $(PY_VENV)/.rampart-fastapi-requirements

.PHONY: python-test python-venv python-develop python-bench python-example fastapi-deps fastapi-test

python-venv:
	@if [ ! -x "$(PY_VENV)/bin/python" ]; then \
	  echo "-- creating $(PY_VENV)"; $(PYTHON) -m venv "$(PY_VENV)"; fi
	@if [ "$$(cat "$(PY_STAMP)" 2>/dev/null)" != "$(PY_TOOLS)" ]; then \
	  echo "-- installing $(PY_TOOLS)"; \
	  "$(PY_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip && \
	  "$(PY_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check $(foreach t,$(PY_TOOLS),'$(t)') && \
	  echo "$(PY_TOOLS)" > "$(PY_STAMP)"; fi

# The FastAPI example's pinned packages, into the same venv, again only when requirements.txt changed
# (after python-develop, so two pip runs never share the venv under make -j).
fastapi-deps: python-develop
	@if ! cmp -s "$(FASTAPI_DIR)/requirements.txt" "$(FASTAPI_STAMP)"; then \
	  echo "-- installing $(FASTAPI_DIR)/requirements.txt"; \
	  "$(PY_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check -r "$(FASTAPI_DIR)/requirements.txt" && \
	  cp "$(FASTAPI_DIR)/requirements.txt" "$(FASTAPI_STAMP)"; fi

# PY_PROFILE=--release for benchmarks; the tests use the faster-building dev profile.
PY_PROFILE ?=
python-develop: python-venv
	@echo "-- building the extension into $(PY_VENV) (maturin develop $(PY_PROFILE))"
	cd $(PY_DIR) && VIRTUAL_ENV="$(PY_VENV)" PATH="$(PY_VENV)/bin:$$PATH" \
	  "$(PY_VENV)/bin/maturin" develop --locked --quiet $(PY_PROFILE)

# Inside scripts/with-postgres.sh (a throwaway PostgreSQL, or RAMPART_TEST_DATABASE_URL), which
# tests/test_postgres.py needs: it fails, never skips, without one.
python-test: fastapi-deps
	@echo "-- pytest (lifecycle, vectors, errors, threads, stubtest, PostgreSQL) with a throwaway PostgreSQL"
	cd $(PY_DIR) && "$(CURDIR)/scripts/with-postgres.sh" "$(PY_VENV)/bin/python" -m pytest -q -p no:cacheprovider tests
	@echo "-- pytest examples/fastapi (2FA routes over HTTP with pyotp codes, widget URL) and mypy --strict app.py"
	$(FASTAPI_TEST)

# The FastAPI example alone: uvicorn on a free port over a temporary SQLite file (no PostgreSQL).
FASTAPI_TEST = "$(PY_VENV)/bin/python" -m pytest -q -p no:cacheprovider $(FASTAPI_DIR) && \
  "$(PY_VENV)/bin/python" -m mypy --strict --cache-dir "$(PY_VENV)/.mypy-cache" $(FASTAPI_DIR)/app.py
fastapi-test: fastapi-deps
	$(FASTAPI_TEST)

python-bench:
	@$(MAKE) --no-print-directory python-develop PY_PROFILE=--release
	"$(PY_VENV)/bin/python" $(PY_DIR)/bench/bench.py

python-example: python-develop
	"$(PY_VENV)/bin/python" examples/python/partner_backend.py
