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

.PHONY: dist dist-c dist-server dist-test

dist: dist-c dist-server
	@cd $(DIST_DIR) && sha256sum $(DIST_C).tar.gz $(DIST_SERVER).tar.gz | tee SHA256SUMS

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

dist-test:
	@rm -rf $(CARGO_TARGET_DIR)/dist-test $(CARGO_TARGET_DIR)/dist-test-again
	@$(MAKE) --no-print-directory dist-c dist-server DIST_PROFILE=dev DIST_DIR=$(CARGO_TARGET_DIR)/dist-test >/dev/null
	@echo "   - reproducible: packed twice, byte for byte the same"
	@$(MAKE) --no-print-directory dist-c dist-server DIST_PROFILE=dev DIST_DIR=$(CARGO_TARGET_DIR)/dist-test-again >/dev/null
	cmp $(CARGO_TARGET_DIR)/dist-test/$(DIST_C).tar.gz $(CARGO_TARGET_DIR)/dist-test-again/$(DIST_C).tar.gz
	cmp $(CARGO_TARGET_DIR)/dist-test/$(DIST_SERVER).tar.gz $(CARGO_TARGET_DIR)/dist-test-again/$(DIST_SERVER).tar.gz
	scripts/dist-test.sh $(CARGO_TARGET_DIR)/dist-test $(FFI_VERSION)
