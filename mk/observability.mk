# The audit trail and the metrics with real parts (SPEC 9.1, 9.2): scripts/observability_test.py
# against the real rampart-server on a throwaway SQLite file. A scripted sequence moves every
# counter by an exact amount; Debian's `promtool check metrics` lints the scraped text and a real
# `prometheus` (both from the `prometheus` package, installed when missing; started on a
# temporary directory and a loopback port, stopped by pid) scrapes the metrics listener; the
# `audit export` hashes are recomputed with an independent RFC 8785 implementation (PyPI
# `rfc8785`, pinned, in a venv of its own) and `audit verify` must fail after an edit, a
# deletion and a reordering of rows.
#
#   make observability-test           what `make test` runs

OBS_VENV ?= $(CARGO_TARGET_DIR)/observability-venv
OBS_TOOLS := rfc8785==0.1.4 pyotp==2.9.0 standardwebhooks==1.1.0
OBS_STAMP := $(OBS_VENV)/.rampart-tools

.PHONY: observability-test observability-venv prometheus-tools

prometheus-tools:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null \
		|| { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
	@# The package starts a system service; the test runs its own server on its own port.
	@if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then systemctl stop prometheus; fi

observability-venv:
	@if [ ! -x "$(OBS_VENV)/bin/python" ]; then \
	  echo "-- creating $(OBS_VENV)"; $(PYTHON) -m venv "$(OBS_VENV)"; fi
	@if [ "$$(cat "$(OBS_STAMP)" 2>/dev/null)" != "$(OBS_TOOLS)" ]; then \
	  echo "-- installing $(OBS_TOOLS)"; \
	  "$(OBS_VENV)/bin/python" -m pip install --quiet --disable-pip-version-check $(OBS_TOOLS) && \
	  echo "$(OBS_TOOLS)" > "$(OBS_STAMP)"; fi

observability-test: prometheus-tools observability-venv node-deps
	@echo "-- promtool check rules on the alert rules of docs/OPERATIONS.md"
	@rules=$$(mktemp --suffix=.yml) && \
	  "$(OBS_VENV)/bin/python" -c 'import re, sys; part = open("docs/OPERATIONS.md").read().split("## Alerts worth having", 1)[1]; sys.stdout.write(re.search(r"```yaml\n(.*?)```", part, re.S).group(1))' > "$$rules" && \
	  promtool check rules "$$rules"; status=$$?; rm -f "$$rules"; exit $$status
	$(CARGO) build -p rampart-server --locked --bin rampart-server
	"$(OBS_VENV)/bin/python" scripts/observability_test.py "$(CARGO_TARGET_DIR)/debug/rampart-server" \
	  "$$(command -v promtool)" "$$(command -v prometheus)"
	@echo "-- webhooks: every message the server sends verified by the reference standardwebhooks packages (PyPI and npm)"
	"$(OBS_VENV)/bin/python" scripts/webhooks_interop.py "$(CARGO_TARGET_DIR)/debug/rampart-server" "$(CURDIR)/bindings/node/node_modules"
