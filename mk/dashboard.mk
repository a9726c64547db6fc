# The partner dashboard's page (dashboard/, SPEC 11): npm ci from the committed package-lock.json
# (typescript and esbuild, pinned), tsc --strict, then node's test runner: the unit tests, and
# test/build.test.mjs, which builds into a scratch directory twice and compares both with the
# committed dashboard/dist (drift; deterministic output), checks the CSP hashes of the inline
# script and style, and the gzip -9 budget (60 KB).
# Idempotent: npm runs only when the lock file changed.

DASHBOARD_DIR := dashboard
DASHBOARD_STAMP := $(DASHBOARD_DIR)/node_modules/.rampart-lock

.PHONY: dashboard-deps dashboard-build dashboard-test dashboard-e2e dashboard-screenshots dashboard-bench

dashboard-deps:
	@if ! cmp -s "$(DASHBOARD_DIR)/package-lock.json" "$(DASHBOARD_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(DASHBOARD_DIR)"; \
	  (cd $(DASHBOARD_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(DASHBOARD_DIR)/package-lock.json" "$(DASHBOARD_STAMP)"; fi

# Rewrites the committed dashboard/dist (index.html, csp.txt).
dashboard-build: dashboard-deps
	$(NODE) $(DASHBOARD_DIR)/scripts/build.mjs $(DASHBOARD_DIR)/dist

dashboard-test: dashboard-deps
	@echo "-- dashboard: tsc --strict, node --test (router, formats, API client with a fake fetch, dist drift, gzip -9 budget)"
	cd $(DASHBOARD_DIR) && npx tsc --noEmit -p tsconfig.json && $(NODE) --test --test-reporter=spec test/
	@echo "-- dashboard page: $$(gzip -9 -n -c $(DASHBOARD_DIR)/dist/index.html | wc -c) bytes gzip -9 (budget 61440)"

# The dashboard in Debian's Chromium against the real server (dashboard/e2e), on the widget's
# harness (widget/e2e/harness.mjs, hence the widget's npm packages): an invitation to the
# Overview, every page in every role with axe-core in both themes and at 320 px, refused
# changes, CSRF, session expiry, the key roll by keyboard. RAMPART_UPDATE_SCREENSHOTS=1 (make
# dashboard-screenshots) also writes docs/dashboard/*.png.
DASHBOARD_E2E_SCREENSHOTS ?= 0

dashboard-e2e: widget-deps widget-e2e-tools
	$(CARGO) build -p rampart-server --locked
	@echo "-- node --test dashboard/e2e: $$(chromium --version 2>/dev/null | head -n1), rampart-server on 127.0.0.1"
	cd $(DASHBOARD_DIR) && RAMPART_E2E_SERVER="$(WIDGET_E2E_SERVER)" RAMPART_E2E_CHROMIUM="$$(command -v chromium)" \
	  RAMPART_UPDATE_SCREENSHOTS=$(DASHBOARD_E2E_SCREENSHOTS) \
	  timeout -k 10 600 $(NODE) --test --test-concurrency=1 --test-timeout=180000 --test-reporter=spec e2e/*.test.mjs

dashboard-screenshots:
	@$(MAKE) --no-print-directory dashboard-e2e DASHBOARD_E2E_SCREENSHOTS=1
	@echo "-- docs/dashboard: $$(ls docs/dashboard/*.png | wc -l) screenshots"

# Not part of `make test`: the first page's time to usable in Chromium against a release server,
# idle, loaded on shared cores, and loaded with the server on its own core (dashboard/e2e/bench.mjs), and the orders list and CSV export of 100,000 orders
# with the server's memory (examples/server/benches/dashboard.rs); results in docs/BENCHMARKS.md.
dashboard-bench: widget-deps widget-e2e-tools
	$(CARGO) build -p rampart-server --locked --release
	cd $(DASHBOARD_DIR) && RAMPART_E2E_SERVER="$(CARGO_TARGET_DIR)/release/rampart-server" \
	  RAMPART_E2E_CHROMIUM="$$(command -v chromium)" timeout -k 10 600 $(NODE) e2e/bench.mjs 10
	$(CARGO) bench -p rampart-server --bench dashboard
