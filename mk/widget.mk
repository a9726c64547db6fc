# The widget (widget/): the loader (rampart.js) and the page (index.html, page.js, page.css).
# npm ci from the committed package-lock.json (typescript and esbuild, pinned; the lock lists
# every esbuild platform package, so npm ci works anywhere), both built by esbuild into a
# scratch directory and compared with the committed widget/dist (drift, every file), then
# node's built-in test runner. Idempotent: npm runs only when the lock file changed.

NPM ?= npm
NODE ?= node
WIDGET_DIR := widget
WIDGET_GEN ?= $(CARGO_TARGET_DIR)/widget-gen
WIDGET_STAMP := $(WIDGET_DIR)/node_modules/.rampart-lock

.PHONY: widget-test widget-deps widget-build widget-drift

widget-deps:
	@if ! cmp -s "$(WIDGET_DIR)/package-lock.json" "$(WIDGET_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(WIDGET_DIR)"; \
	  (cd $(WIDGET_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(WIDGET_DIR)/package-lock.json" "$(WIDGET_STAMP)"; fi

# Rewrites the committed widget/dist (rampart.js, rampart.js.sri, rampart.d.ts, index.html,
# page.js, page.css).
widget-build: widget-deps
	$(NODE) $(WIDGET_DIR)/scripts/build.mjs $(WIDGET_DIR)/dist

widget-drift: widget-deps
	@rm -rf "$(WIDGET_GEN)"
	@$(NODE) $(WIDGET_DIR)/scripts/build.mjs "$(WIDGET_GEN)"
	@echo "-- widget/dist drift check"
	@diff -rq $(WIDGET_DIR)/dist "$(WIDGET_GEN)" || \
	  { echo "widget/dist is stale: run 'make widget-build' and commit widget/dist"; exit 1; }

widget-test: widget-drift
	@echo "-- node --test (url vectors, envelope, loader and page in fake DOMs, origin rule, gzip budgets, contrast, tsc --strict)"
	cd $(WIDGET_DIR) && RAMPART_WIDGET_DIST="$(WIDGET_GEN)" $(NODE) --test --test-reporter=spec test/*.test.mjs
	@echo "-- widget/v1/rampart.js: $$(wc -c < "$(WIDGET_GEN)/rampart.js") bytes, $$(gzip -9 -n -c "$(WIDGET_GEN)/rampart.js" | wc -c) bytes gzip -9 (budget 4096)"
	@echo "-- widget page: page.js $$(wc -c < "$(WIDGET_GEN)/page.js") bytes, page.css $$(wc -c < "$(WIDGET_GEN)/page.css") bytes, index.html $$(wc -c < "$(WIDGET_GEN)/index.html") bytes; $$(( $$(gzip -9 -n -c "$(WIDGET_GEN)/page.js" | wc -c) + $$(gzip -9 -n -c "$(WIDGET_GEN)/page.css" | wc -c) + $$(gzip -9 -n -c "$(WIDGET_GEN)/index.html" | wc -c) )) bytes gzip -9 in all (budget 61440)"
