# The HTTP API against its own OpenAPI document: schemathesis (PyPI, pinned) in a venv, run by
# scripts/api-test.sh against the real rampart-server with every check on, a fixed seed and a
# bounded number of examples (tests/api/schemathesis.toml, tests/api/rampart_hooks.py).
#
#   make api-test                     what `make test` runs
#   make api-test API_SEED=7 API_MAX_EXAMPLES=200   a longer, different run

API_VENV ?= $(CARGO_TARGET_DIR)/api-venv
API_TOOLS := schemathesis==4.32.5
API_STAMP := $(API_VENV)/.rampart-tools
export API_SEED API_MAX_EXAMPLES

.PHONY: api-test api-venv

api-venv:
	@if [ ! -x "$(API_VENV)/bin/python" ]; then \
	  echo "-- creating $(API_VENV)"; $(PYTHON) -m venv "$(API_VENV)"; fi
	@if [ "$$(cat "$(API_STAMP)" 2>/dev/null)" != "$(API_TOOLS)" ]; then \
	  echo "-- installing $(API_TOOLS)"; \
	  "$(API_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check '$(API_TOOLS)' && \
	  echo "$(API_TOOLS)" > "$(API_STAMP)"; fi

api-test: api-venv
	$(CARGO) build -p rampart-server --locked --bin rampart-server
	scripts/api-test.sh "$(CARGO_TARGET_DIR)/debug/rampart-server" "$(API_VENV)/bin/schemathesis"
