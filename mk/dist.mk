# Artifacts a partner installs without a Rust toolchain, in dist/. So far: the C library and the
# server, as tarballs; stripped (the release profile keeps line tables for profiling, which would
# triple their size); reproducible (sorted, owner 0, mtimes and gzip header from the last commit).
#
#   make dist                       release builds into dist/
#   make dist-test                  what `make test` runs: the same recipes (dev profile, into a
#                                   scratch dir), then each tarball installed and used with no
#                                   cargo on PATH (scripts/dist-test.sh)
#
# dist/rampart-c-VERSION-linux-x86_64.tar.gz: lib/librampart.so.VERSION (SONAME
#   librampart.so.MAJOR), lib/librampart.a, include/rampart.h, lib/pkgconfig/rampart.pc
#   (relocatable: prefix=${pcfiledir}/../..), LICENSE, README.md.
# dist/rampart-server-VERSION-linux-x86_64.tar.gz: bin/rampart-server,
#   share/rampart/rampart-server.service (hardened systemd unit), share/rampart/Dockerfile,
#   LICENSE, README.md.

# dist/rampart-VERSION-cp310-abi3-manylinux_2_34_x86_64.whl (maturin): the Python package for
#   CPython 3.10 and later, stripped, with the .pyi stubs, py.typed and LICENSE; and
#   dist/rampart-VERSION.tar.gz, its sdist (builds with maturin and a Rust toolchain).
# dist/rampart-VERSION.tgz (npm pack): the Node package with the prebuilt, stripped addon
#   rampart.linux-x64-gnu.node beside main.js, index.js and index.d.ts; package.json without
#   the dev-only fields (scripts, devDependencies, private); README.md, LICENSE.
# dist/rampart-widget-VERSION.tgz (npm pack): @rampart/widget, the widget loader as an ES and
#   CommonJS module for bundlers (`import { render } from "@rampart/widget"`), typed, no
#   dependencies; the same code as the served rampart.js (widget/README.md, "From npm").

DIST_DIR ?= dist
DIST_PROFILE ?= release
DIST_PLATFORM := linux-x86_64
DIST_C := rampart-c-$(FFI_VERSION)-$(DIST_PLATFORM)
DIST_SERVER := rampart-server-$(FFI_VERSION)-$(DIST_PLATFORM)
DIST_BIN = $(CARGO_TARGET_DIR)/$(if $(filter dev,$(DIST_PROFILE)),debug,$(DIST_PROFILE))
# Reproducible tarballs: the same inputs give the same bytes.
DIST_EPOCH = $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
DIST_TAR = tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(DIST_EPOCH) \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime

.PHONY: dist dist-c dist-server dist-node dist-python dist-widget dist-test

# The oldest glibc the binaries run on: the newest symbol version they link, which is the build
# machine's (Debian 12). The wheel's tag says it, maturin refuses to build if a symbol needs a
# newer one, and make dist-test checks the Node addon and bindings/node/main.js's message.
DIST_GLIBC := 2.34
DIST_MANYLINUX := manylinux_$(subst .,_,$(DIST_GLIBC))
DIST_WHEEL := rampart-$(FFI_VERSION)-cp310-abi3-$(DIST_MANYLINUX)_x86_64.whl
DIST_SDIST := rampart-$(FFI_VERSION).tar.gz

DIST_NODE := rampart-$(FFI_VERSION).tgz
DIST_NODE_STAGE = $(DIST_DIR)/stage/node
DIST_NODE_MANIFEST = const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); \
  for (const k of ["private", "scripts", "devDependencies"]) delete p[k]; console.log(JSON.stringify(p, null, 2))

DIST_WIDGET := rampart-widget-$(FFI_VERSION).tgz
DIST_PARTS := dist-c dist-server dist-node dist-python dist-widget
DIST_FILES = $(DIST_C).tar.gz $(DIST_SERVER).tar.gz $(DIST_NODE) $(DIST_WHEEL) $(DIST_SDIST) $(DIST_WIDGET)

dist: $(DIST_PARTS)
	@cd $(DIST_DIR) && sha256sum $(DIST_FILES) | tee SHA256SUMS

dist-c:
	@rm -rf $(DIST_DIR)/stage/$(DIST_C) && mkdir -p $(DIST_DIR)/stage
	@$(MAKE) --no-print-directory install FFI_PROFILE=$(DIST_PROFILE) PREFIX= \
	  DESTDIR=$(abspath $(DIST_DIR))/stage/$(DIST_C) PC_PREFIX='$$$${pcfiledir}/../..' >/dev/null
	strip --strip-unneeded $(DIST_DIR)/stage/$(DIST_C)/lib/librampart.so.$(FFI_VERSION)
	strip --strip-debug $(DIST_DIR)/stage/$(DIST_C)/lib/librampart.a
	install -m 644 LICENSE $(DIST_DIR)/stage/$(DIST_C)/LICENSE
	install -m 644 ffi/README.md $(DIST_DIR)/stage/$(DIST_C)/README.md
	$(DIST_TAR) -C $(DIST_DIR)/stage -cf - $(DIST_C) | gzip -9n > $(DIST_DIR)/$(DIST_C).tar.gz

dist-server:
	$(CARGO) build -p rampart-server --bin rampart-server --locked --profile $(DIST_PROFILE)
	@rm -rf $(DIST_DIR)/stage/$(DIST_SERVER) && mkdir -p $(DIST_DIR)/stage/$(DIST_SERVER)/share/rampart
	install -D -m 755 $(DIST_BIN)/rampart-server $(DIST_DIR)/stage/$(DIST_SERVER)/bin/rampart-server
	strip $(DIST_DIR)/stage/$(DIST_SERVER)/bin/rampart-server
	install -m 644 examples/server/deploy/rampart-server.service examples/server/deploy/Dockerfile \
	  $(DIST_DIR)/stage/$(DIST_SERVER)/share/rampart/
	install -m 644 LICENSE $(DIST_DIR)/stage/$(DIST_SERVER)/LICENSE
	install -m 644 examples/server/deploy/README.md $(DIST_DIR)/stage/$(DIST_SERVER)/README.md
	$(DIST_TAR) -C $(DIST_DIR)/stage -cf - $(DIST_SERVER) | gzip -9n > $(DIST_DIR)/$(DIST_SERVER).tar.gz

dist-node: node-deps
	@rm -rf $(DIST_NODE_STAGE) && mkdir -p $(DIST_NODE_STAGE)/gen $(DIST_NODE_STAGE)/package
	cd $(NODE_DIR) && npx --no-install napi build --platform $(if $(filter dev,$(DIST_PROFILE)),,--profile $(DIST_PROFILE)) \
	  --target-dir "$(CARGO_TARGET_DIR)" -o "$(abspath $(DIST_NODE_STAGE))/gen" >/dev/null
	strip --strip-unneeded -o $(DIST_NODE_STAGE)/package/rampart.linux-x64-gnu.node \
	  $(DIST_NODE_STAGE)/gen/rampart.linux-x64-gnu.node
	install -m 644 $(NODE_DIR)/main.js $(NODE_DIR)/index.js $(NODE_DIR)/index.d.ts $(NODE_DIR)/README.md LICENSE \
	  $(DIST_NODE_STAGE)/package/
	$(NODE) -e '$(DIST_NODE_MANIFEST)' $(NODE_DIR)/package.json > $(DIST_NODE_STAGE)/package/package.json
	cd $(DIST_NODE_STAGE)/package && $(NPM) pack --silent --pack-destination "$(abspath $(DIST_DIR))" >/dev/null

dist-python: python-venv
	cd $(PY_DIR) && "$(PY_VENV)/bin/maturin" build --locked --quiet --strip --profile $(DIST_PROFILE) \
	  --compatibility $(DIST_MANYLINUX) --out "$(abspath $(DIST_DIR))"
	cd $(PY_DIR) && "$(PY_VENV)/bin/maturin" sdist --out "$(abspath $(DIST_DIR))"

# The widget loader's npm package (@rampart/widget): widget/dist/npm, drift-checked, packed.
dist-widget:
	@$(MAKE) --no-print-directory widget-pack WIDGET_PACK_DIR=$(DIST_DIR)

dist-test:
	@rm -rf $(CARGO_TARGET_DIR)/dist-test $(CARGO_TARGET_DIR)/dist-test-again
	@$(MAKE) --no-print-directory $(DIST_PARTS) DIST_PROFILE=dev DIST_DIR=$(CARGO_TARGET_DIR)/dist-test >/dev/null
	@echo "   - reproducible: every artifact packed twice, byte for byte the same"
	@$(MAKE) --no-print-directory $(DIST_PARTS) DIST_PROFILE=dev DIST_DIR=$(CARGO_TARGET_DIR)/dist-test-again >/dev/null
	@for f in $(DIST_FILES); do cmp $(CARGO_TARGET_DIR)/dist-test/$$f $(CARGO_TARGET_DIR)/dist-test-again/$$f || exit 1; done
	scripts/dist-test.sh $(CARGO_TARGET_DIR)/dist-test $(FFI_VERSION) $(DIST_GLIBC)
