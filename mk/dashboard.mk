# The partner dashboard's page (dashboard/, SPEC 11): npm ci from the committed package-lock.json
# (typescript and esbuild, pinned), tsc --strict, then node's test runner: the unit tests, and
# test/build.test.mjs, which builds into a scratch directory twice and compares both with the
# committed dashboard/dist (drift; deterministic output) and checks the gzip -9 budget (60 KB).
# Idempotent: npm runs only when the lock file changed.

DASHBOARD_DIR := dashboard
DASHBOARD_STAMP := $(DASHBOARD_DIR)/node_modules/.rampart-lock

.PHONY: dashboard-deps dashboard-build dashboard-test

dashboard-deps:
	@if ! cmp -s "$(DASHBOARD_DIR)/package-lock.json" "$(DASHBOARD_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(DASHBOARD_DIR)"; \
	  (cd $(DASHBOARD_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(DASHBOARD_DIR)/package-lock.json" "$(DASHBOARD_STAMP)"; fi

# Rewrites the committed dashboard/dist (index.html, app.js, app.css).
dashboard-build: dashboard-deps
	$(NODE) $(DASHBOARD_DIR)/scripts/build.mjs $(DASHBOARD_DIR)/dist

dashboard-test: dashboard-deps
	@echo "-- dashboard: tsc --strict, node --test (router, formats, API client with a fake fetch, dist drift, gzip -9 budget)"
	cd $(DASHBOARD_DIR) && npx tsc --noEmit -p tsconfig.json && $(NODE) --test --test-reporter=spec test/
	@echo "-- dashboard page: $$(( $$(gzip -9 -n -c $(DASHBOARD_DIR)/dist/app.js | wc -c) + $$(gzip -9 -n -c $(DASHBOARD_DIR)/dist/app.css | wc -c) + $$(gzip -9 -n -c $(DASHBOARD_DIR)/dist/index.html | wc -c) )) bytes gzip -9 in all (budget 61440)"
