# Rampart: `make run` serves the example server on an embedded SQLite file (./rampart.db);
# `make test` installs what it needs and runs every test. Both are idempotent.

SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/rampart-target
export CARGO_TERM_COLOR ?= never
# Whole builds only: incremental state would grow the cache by gigabytes per clone path.
export CARGO_INCREMENTAL ?= 0
CARGO ?= cargo

.PHONY: test lint unit pg c-abi python node api observability widget e2e dist-step bench run fmt

test: lint unit pg c-abi python node api observability widget e2e dist-step
	@echo "== make test: all steps passed"

lint:
	@echo "== [1/11] format and lint (cargo fmt --check, clippy -D warnings, cargo doc -D warnings, one version, core layers)"
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked --features rampart-core/postgres-tests,rampart-server/postgres-tests -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --workspace --locked --features rampart-core/postgres -q
	scripts/check-version.sh
	scripts/check-layers.sh

unit:
	@echo "== [2/11] unit, integration and doc tests (cargo test)"
	$(CARGO) test --workspace --locked

pg:
	@echo "== [3/11] PostgreSQL store: a throwaway cluster (initdb, pg_ctl, its own TLS CA); conformance and checkout suites, TLS, 50x200 threads, memory/SQLite/PostgreSQL equivalence, at rest; servers racing, killed, stopped, cut off, migrating together"
	@$(MAKE) --no-print-directory pg-test

c-abi:
	@echo "== [4/11] C ABI: header drift, C tests (plain, valgrind, ASan+UBSan; beside a throwaway PostgreSQL), C/C++ examples via pkg-config"
	@$(MAKE) --no-print-directory c-test

python:
	@echo "== [5/11] Python binding: venv, maturin build, pytest (lifecycle, vectors, threads, PostgreSQL), mypy.stubtest, the FastAPI example over HTTP"
	@$(MAKE) --no-print-directory python-test

node:
	@echo "== [6/11] Node binding: npm install, napi build, index.d.ts drift, node --test (lifecycle, otplib, vectors, concurrency, PostgreSQL), the Express example over HTTP"
	@$(MAKE) --no-print-directory node-test

api:
	@echo "== [7/11] HTTP API: schemathesis against the running server's /openapi.json (every check, fixed seed)"
	@$(MAKE) --no-print-directory api-test

observability:
	@echo "== [8/11] Audit and metrics with real parts: a scripted sequence moves every counter exactly, promtool check metrics, a real Prometheus scraping the metrics listener, audit export hashes recomputed with PyPI rfc8785, audit verify after an edit, a deletion and a reordering"
	@$(MAKE) --no-print-directory observability-test

widget:
	@echo "== [9/11] Widget loader and dashboard page: npm ci, esbuild build, widget/dist and dashboard/dist drift, node --test (URL vectors, envelope, loader and the @rampart/widget module in a fake DOM, the dashboard's API client, gzip -9 budgets, tsc --strict, npm pack and install)"
	@$(MAKE) --no-print-directory widget-test
	@$(MAKE) --no-print-directory dashboard-test

e2e:
	@echo "== [10/11] Widget and dashboard in Chromium: the real server, partner pages on other origins, playwright-core (loader errors, iframe vs /v1/widget/url, the bundled npm module, origins and approval, messages, escaping, secret keys; the dashboard's invitation, roles, CSRF, session expiry, key roll; 320 px, axe-core light and dark, keyboard only)"
	@$(MAKE) --no-print-directory widget-e2e
	@$(MAKE) --no-print-directory dashboard-e2e

dist-step:
	@echo "== [11/11] Distribution: every artifact packed twice (byte-identical), then installed as a partner would: the sdist in a fresh venv; then with no cargo on PATH the C tarball (C/C++ examples via pkg-config, valgrind), the server (curl walkthrough, SIGTERM), the wheel (FastAPI example, mypy --strict, pyotp lifecycle), the npm package (Express and TypeScript examples), the widget module"
	@$(MAKE) --no-print-directory dist-test

bench:
	$(CARGO) bench -p rampart-core --bench core

fmt:
	$(CARGO) fmt --all

run:
	$(CARGO) run --release --locked -p rampart-server -- --db ./rampart.db --metrics-listen 127.0.0.1:9464 --webhook-allow-private

include mk/c.mk
include mk/postgres.mk
include mk/python.mk
include mk/node.mk
include mk/widget.mk
include mk/dashboard.mk
include mk/api.mk
include mk/fuzz.mk
include mk/dist.mk
include mk/observability.mk
