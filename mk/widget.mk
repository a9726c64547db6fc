# The widget (widget/): the loader (rampart.js), the page (index.html, page.js, page.css) and
# the npm package @rampart/widget (widget/dist/npm: the loader as a module for bundlers).
# npm ci from the committed package-lock.json (typescript and esbuild, pinned; the lock lists
# every esbuild platform package, so npm ci works anywhere), all built by esbuild into a
# scratch directory and compared with the committed widget/dist (drift, every file), then
# node's built-in test runner. Idempotent: npm runs only when the lock file changed.

NPM ?= npm
NODE ?= node
WIDGET_DIR := widget
WIDGET_GEN ?= $(CARGO_TARGET_DIR)/widget-gen
WIDGET_STAMP := $(WIDGET_DIR)/node_modules/.rampart-lock

.PHONY: widget-test widget-deps widget-build widget-drift widget-pack widget-e2e widget-e2e-tools widget-screenshots widget-bench

widget-deps:
	@if ! cmp -s "$(WIDGET_DIR)/package-lock.json" "$(WIDGET_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(WIDGET_DIR)"; \
	  (cd $(WIDGET_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(WIDGET_DIR)/package-lock.json" "$(WIDGET_STAMP)"; fi

# Rewrites the committed widget/dist (rampart.js, rampart.js.sri, rampart.d.ts, index.html,
# page.js, page.css, and npm/: index.js, index.cjs, index.d.ts, index.d.cts, package.json,
# README.md, LICENSE).
widget-build: widget-deps
	$(NODE) $(WIDGET_DIR)/scripts/build.mjs $(WIDGET_DIR)/dist

widget-drift: widget-deps
	@rm -rf "$(WIDGET_GEN)"
	@$(NODE) $(WIDGET_DIR)/scripts/build.mjs "$(WIDGET_GEN)"
	@echo "-- widget/dist drift check"
	@diff -rq $(WIDGET_DIR)/dist "$(WIDGET_GEN)" || \
	  { echo "widget/dist is stale: run 'make widget-build' and commit widget/dist"; exit 1; }

widget-test: widget-drift
	@echo "-- node --test (url vectors, envelope, loader, npm module and page in fake DOMs, origin rule, gzip budgets, contrast, tsc --strict, npm pack and install)"
	cd $(WIDGET_DIR) && RAMPART_WIDGET_DIST="$(WIDGET_GEN)" $(NODE) --test --test-reporter=spec test/*.test.mjs
	@echo "-- widget/v1/rampart.js: $$(wc -c < "$(WIDGET_GEN)/rampart.js") bytes, $$(gzip -9 -n -c "$(WIDGET_GEN)/rampart.js" | wc -c) bytes gzip -9 (budget 4096)"
	@echo "-- npm module @rampart/widget: index.js $$(wc -c < "$(WIDGET_GEN)/npm/index.js") bytes, $$(gzip -9 -n -c "$(WIDGET_GEN)/npm/index.js" | wc -c) bytes gzip -9 (not minified: the partner's bundler minifies)"
	@echo "-- widget page: page.js $$(wc -c < "$(WIDGET_GEN)/page.js") bytes, page.css $$(wc -c < "$(WIDGET_GEN)/page.css") bytes, index.html $$(wc -c < "$(WIDGET_GEN)/index.html") bytes; $$(( $$(gzip -9 -n -c "$(WIDGET_GEN)/page.js" | wc -c) + $$(gzip -9 -n -c "$(WIDGET_GEN)/page.css" | wc -c) + $$(gzip -9 -n -c "$(WIDGET_GEN)/index.html" | wc -c) )) bytes gzip -9 in all (budget 61440)"

# The npm package as a tarball: `npm pack` of the committed widget/dist/npm once the drift check
# has shown it is what the sources build (the package's LICENSE is the repository's, copied by
# the build and so drift-checked too). npm pack writes fixed mtimes, so the same commit and npm
# version give the same bytes. Writes $(WIDGET_PACK_DIR)/rampart-widget-VERSION.tgz.
WIDGET_PACK_DIR ?= dist

widget-pack: widget-drift
	@mkdir -p "$(WIDGET_PACK_DIR)"
	cd $(WIDGET_DIR)/dist/npm && $(NPM) pack --pack-destination "$(abspath $(WIDGET_PACK_DIR))" --loglevel=error --json > /dev/null
	@echo "-- $(WIDGET_PACK_DIR)/rampart-widget-$$(cd $(WIDGET_DIR)/dist/npm && $(NODE) -p 'require("./package.json").version').tgz"

# End to end in a real browser (widget/e2e): Debian's Chromium (installed when missing; no
# browser is ever downloaded) driven by playwright-core, against the real rampart-server binary
# on 127.0.0.1 port 0 with temporary databases, partner pages served by the test from other
# origins (http, and https with a throwaway self-signed certificate from openssl). Loopback
# only; every test bounded (20 s). RAMPART_UPDATE_SCREENSHOTS=1 (make widget-screenshots)
# also writes docs/widget/<screen>-<theme>.png; the normal run writes nothing.
WIDGET_E2E_SERVER := $(CARGO_TARGET_DIR)/debug/rampart-server
WIDGET_E2E_SCREENSHOTS ?= 0

widget-e2e-tools:
	@command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	@command -v openssl >/dev/null || (apt-get update -qq && apt-get install -y -qq openssl)

widget-e2e: widget-deps widget-e2e-tools
	$(CARGO) build -p rampart-server --locked
	@echo "-- node --test e2e/*.test.mjs: $$(chromium --version 2>/dev/null | head -n1) via playwright-core $$(cd $(WIDGET_DIR) && $(NODE) -p 'require("playwright-core/package.json").version'), axe-core $$(cd $(WIDGET_DIR) && $(NODE) -p 'require("axe-core/package.json").version'), rampart-server on 127.0.0.1"
	cd $(WIDGET_DIR) && RAMPART_E2E_SERVER="$(WIDGET_E2E_SERVER)" RAMPART_E2E_CHROMIUM="$$(command -v chromium)" \
	  RAMPART_UPDATE_SCREENSHOTS=$(WIDGET_E2E_SCREENSHOTS) \
	  timeout -k 10 600 $(NODE) --test --test-concurrency=1 --test-timeout=120000 --test-reporter=spec e2e/*.test.mjs

# Rewrites docs/widget/*.png (each screen, light and dark, 420 x 550) from a full e2e run.
widget-screenshots:
	@$(MAKE) --no-print-directory widget-e2e WIDGET_E2E_SCREENSHOTS=1
	@echo "-- docs/widget: $$(ls docs/widget/*.png | wc -l) screenshots"

# Not part of `make test`: render -> ready over 20 cold loads in Chromium against a release
# server, beside a bare iframe of a static page (the floor), and a whole sandbox purchase
# (median of 10, server and page time); results go into docs/BENCHMARKS.md.
WIDGET_BENCH_LOADS ?= 20
widget-bench: widget-deps widget-e2e-tools
	$(CARGO) build -p rampart-server --locked --release
	cd $(WIDGET_DIR) && RAMPART_E2E_SERVER="$(CARGO_TARGET_DIR)/release/rampart-server" \
	  RAMPART_E2E_CHROMIUM="$$(command -v chromium)" timeout -k 10 600 $(NODE) e2e/bench.mjs $(WIDGET_BENCH_LOADS)
