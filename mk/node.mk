# The Node binding (bindings/node): npm install from the committed package-lock.json (the
# napi-rs CLI, otplib and the bench's comparison packages; not `npm ci`, which rejects this lock
# because of npm's optional-platform-package bug, npm/cli#4828), the addon built by the napi CLI into a scratch
# directory, the generated index.d.ts / index.js compared with the committed ones (drift),
# then node's built-in test runner beside a throwaway PostgreSQL, then the Express example's test
# (examples/express, its own `npm ci`) and the TypeScript example (examples/typescript: tsc
# --strict, then run). Idempotent: npm runs only when a lock file changed.

NPM ?= npm
NODE ?= node
NODE_DIR := bindings/node
NODE_GEN ?= $(CARGO_TARGET_DIR)/node-gen
NODE_STAMP := $(NODE_DIR)/node_modules/.rampart-lock
EXPRESS_DIR := examples/express
EXPRESS_STAMP := $(EXPRESS_DIR)/node_modules/.rampart-lock
TS_EXAMPLE_DIR := examples/typescript
TS_EXAMPLE_STAMP := $(TS_EXAMPLE_DIR)/node_modules/.rampart-lock
# NODE_PROFILE=--release for benchmarks; the tests use the faster-building dev profile.
NODE_PROFILE ?=

.PHONY: node-test node-deps node-build node-drift node-bench node-example express-deps express-test typescript-example-deps typescript-example-test

node-deps:
	@if ! cmp -s "$(NODE_DIR)/package-lock.json" "$(NODE_STAMP)"; then \
	  echo "-- npm install (package-lock.json) in $(NODE_DIR)"; \
	  (cd $(NODE_DIR) && $(NPM) install --no-audit --no-fund --loglevel=error) && \
	  cp "$(NODE_DIR)/package-lock.json" "$(NODE_STAMP)"; fi

# The Express example has no optional platform packages, so `npm ci` takes its lock as it is.
express-deps:
	@if ! cmp -s "$(EXPRESS_DIR)/package-lock.json" "$(EXPRESS_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(EXPRESS_DIR)"; \
	  (cd $(EXPRESS_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(EXPRESS_DIR)/package-lock.json" "$(EXPRESS_STAMP)"; fi

# The TypeScript example (typescript and @types/node, pinned; rampart linked to bindings/node).
typescript-example-deps:
	@if ! cmp -s "$(TS_EXAMPLE_DIR)/package-lock.json" "$(TS_EXAMPLE_STAMP)"; then \
	  echo "-- npm ci (package-lock.json) in $(TS_EXAMPLE_DIR)"; \
	  (cd $(TS_EXAMPLE_DIR) && $(NPM) ci --no-audit --no-fund --loglevel=error) && \
	  cp "$(TS_EXAMPLE_DIR)/package-lock.json" "$(TS_EXAMPLE_STAMP)"; fi

# The CLI writes index.js, index.d.ts and the .node file to NODE_GEN, so a build never rewrites
# the committed files; only the addon is copied beside them.
node-build: node-deps
	@echo "-- napi build $(NODE_PROFILE) (into $(NODE_GEN))"
	@mkdir -p "$(NODE_GEN)"
	cd $(NODE_DIR) && npx --no-install napi build --platform $(NODE_PROFILE) \
	  --target-dir "$(CARGO_TARGET_DIR)" -o "$(NODE_GEN)"
	cp "$(NODE_GEN)"/*.node $(NODE_DIR)/

node-drift: node-build
	@echo "-- index.d.ts / index.js drift check"
	@diff -u $(NODE_DIR)/index.d.ts "$(NODE_GEN)/index.d.ts" || \
	  { echo "index.d.ts is stale: run 'make node-build' and copy $(NODE_GEN)/index.d.ts"; exit 1; }
	@diff -u $(NODE_DIR)/index.js "$(NODE_GEN)/index.js" || \
	  { echo "index.js is stale: copy $(NODE_GEN)/index.js"; exit 1; }

# Inside scripts/with-postgres.sh (a throwaway PostgreSQL, or RAMPART_TEST_DATABASE_URL), which
# __test__/postgres.test.js needs: it fails, never skips, without one.
node-test: node-drift express-deps typescript-example-deps
	@echo "-- node --test (lifecycle, otplib, vectors, widget, errors, concurrency, d.ts, example, PostgreSQL) with a throwaway PostgreSQL"
	cd $(NODE_DIR) && RAMPART_NODE_GEN="$(NODE_GEN)" "$(CURDIR)/scripts/with-postgres.sh" \
	  $(NODE) --test --test-reporter=spec __test__/
	@echo "-- node --test examples/express (2FA routes over HTTP with otplib codes, widget snippet, key file)"
	$(EXPRESS_TEST)
	@echo "-- examples/typescript: tsc --strict against index.d.ts, then the lifecycle it compiles to"
	scripts/typescript-example.sh $(TS_EXAMPLE_DIR)

# The Express example over HTTP alone (SQLite in a temporary directory, no PostgreSQL needed).
EXPRESS_TEST = $(NODE) --test --test-reporter=spec $(EXPRESS_DIR)/
express-test: node-build express-deps
	$(EXPRESS_TEST)

typescript-example-test: node-build typescript-example-deps
	scripts/typescript-example.sh $(TS_EXAMPLE_DIR)

node-bench: node-deps
	@$(MAKE) --no-print-directory node-build NODE_PROFILE=--release
	cd $(NODE_DIR) && $(NODE) bench/bench.js

node-example: node-build
	$(NODE) examples/node/partner_backend.js
