# Rampart: `make run` serves the example server on an embedded SQLite file (./rampart.db);
# `make test` installs what it needs and runs every test. Both are idempotent.

SHELL := /bin/bash
export CARGO_TARGET_DIR ?= $(HOME)/.cache/rampart-target
export CARGO_TERM_COLOR ?= never
CARGO ?= cargo

.PHONY: test lint unit c-abi python node api widget bench run fmt

test: lint unit c-abi python node api widget
	@echo "== make test: all steps passed"

lint:
	@echo "== [1/7] format and lint (cargo fmt --check, clippy -D warnings)"
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings

unit:
	@echo "== [2/7] unit, integration and doc tests (cargo test)"
	$(CARGO) test --workspace --locked

c-abi:
	@echo "== [3/7] C ABI: header drift, C tests (plain, valgrind, ASan+UBSan), C/C++ examples via pkg-config"
	@$(MAKE) --no-print-directory c-test

python:
	@echo "== [4/7] Python binding: venv, maturin build, pytest (lifecycle, vectors, threads), mypy.stubtest"
	@$(MAKE) --no-print-directory python-test

node:
	@echo "== [5/7] Node binding: npm install, napi build, index.d.ts drift, node --test (lifecycle, otplib, vectors, concurrency)"
	@$(MAKE) --no-print-directory node-test

api:
	@echo "== [6/7] HTTP API: schemathesis against the running server's /openapi.json (every check, fixed seed)"
	@$(MAKE) --no-print-directory api-test

widget:
	@echo "== [7/7] Widget loader: npm ci, esbuild build, widget/dist drift, node --test (URL vectors, envelope, loader in a fake DOM, gzip -9 budget, tsc --strict)"
	@$(MAKE) --no-print-directory widget-test

bench:
	$(CARGO) bench -p rampart-core --bench core

fmt:
	$(CARGO) fmt --all

run:
	$(CARGO) run --release --locked -p rampart-server -- --db ./rampart.db

include mk/c.mk
include mk/python.mk
include mk/node.mk
include mk/widget.mk
include mk/api.mk
include mk/fuzz.mk
