# The C ABI (crate rampart-ffi): include/rampart.h drift check, the C test programs (plain,
# under valgrind, with AddressSanitizer + UndefinedBehaviorSanitizer; beside a throwaway
# PostgreSQL, which test_postgres opens through postgres:// URLs), the C and C++ examples
# built against an installed copy through pkg-config, and `make install PREFIX=...`.
#
#   make c-test                       what `make test` runs for the C ABI
#   make c-header                     regenerate include/rampart.h after changing ffi/src
#   make install PREFIX=/usr/local    librampart.a, librampart.so, rampart.h, rampart.pc
#   make c-bench                      verify through the C ABI beside liboath (and the Rust
#                                     side: cargo bench -p rampart-ffi --bench abi)

CBINDGEN_VERSION := 0.29.4
CBINDGEN_ROOT := $(or $(CARGO_HOME),$(HOME)/.cargo)
CBINDGEN := $(CBINDGEN_ROOT)/bin/cbindgen
C_BUILD := $(CARGO_TARGET_DIR)/c
C_WORK := $(C_BUILD)/work
C_LIB := $(CARGO_TARGET_DIR)/debug/librampart.a
# What Rust's std needs when linking the static library (`--print native-static-libs`).
C_NATIVE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl
C_WARN := -Wall -Wextra -Wpedantic -Werror
C_TEST_FLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(C_WARN) -g -Iinclude -Itests/c
C_SANITIZE := -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
C_TESTS := test_lifecycle test_vectors test_threads test_widget test_checkout test_postgres
VALGRIND := valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99
C_SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

PREFIX ?= /usr/local
# Cargo profile for `make install`: release, or dev (output dir debug) for a quick local copy.
FFI_PROFILE ?= release
# The prefix rampart.pc names: PREFIX, or `${pcfiledir}/../..` in the relocatable C tarball.
PC_PREFIX ?= $(PREFIX)
FFI_OUT = $(CARGO_TARGET_DIR)/$(if $(filter dev,$(FFI_PROFILE)),debug,$(FFI_PROFILE))
FFI_VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
FFI_MAJOR := $(firstword $(subst ., ,$(FFI_VERSION)))

.PHONY: c-test c-tools c-header c-header-check c-lib c-test-build c-test-run c-test-runs c-examples c-bench install

c-test: c-header-check c-test-run c-examples

# Debian packages and the pinned cbindgen, installed only when missing.
c-tools:
	@command -v $(CC) >/dev/null && command -v $(CXX) >/dev/null && command -v valgrind >/dev/null \
		&& command -v pkg-config >/dev/null \
		|| { apt-get update -qq && apt-get install -y -qq gcc g++ valgrind pkg-config; }
	@$(CBINDGEN) --version 2>/dev/null | grep -qx "cbindgen $(CBINDGEN_VERSION)" \
		|| CARGO_TARGET_DIR=$(CARGO_TARGET_DIR)/cbindgen-install \
			$(CARGO) install cbindgen --version $(CBINDGEN_VERSION) --locked --root $(CBINDGEN_ROOT)

c-header: c-tools
	$(CBINDGEN) --quiet --config ffi/cbindgen.toml --crate rampart-ffi --output include/rampart.h ffi

c-header-check: c-tools
	@echo "   - include/rampart.h: regenerated with cbindgen $(CBINDGEN_VERSION) and compared; compiles alone as C99 and C++17"
	@mkdir -p $(C_BUILD)
	@$(CBINDGEN) --quiet --config ffi/cbindgen.toml --crate rampart-ffi --output $(C_BUILD)/rampart.h ffi
	@diff -u include/rampart.h $(C_BUILD)/rampart.h \
		|| { echo "include/rampart.h differs from ffi/src: run 'make c-header' and commit it" >&2; exit 1; }
	$(CC) -std=c99 $(C_WARN) -fsyntax-only -x c include/rampart.h
	$(CXX) -std=c++17 $(C_WARN) -fsyntax-only -x c++ include/rampart.h

# The static library the tests link, and the vectors in the line format the C side reads.
c-lib:
	$(CARGO) build -p rampart-ffi --locked --lib --example c_vectors
	@mkdir -p $(C_BUILD)
	RAMPART_VECTORS=$(CURDIR)/tests/vectors $(CARGO_TARGET_DIR)/debug/examples/c_vectors > $(C_BUILD)/vectors.txt
	RAMPART_VECTORS=$(CURDIR)/tests/vectors $(CARGO_TARGET_DIR)/debug/examples/c_vectors widget > $(C_BUILD)/widget_vectors.txt

c-test-build: c-tools c-lib
	@mkdir -p $(C_BUILD)/bin
	@for t in $(C_TESTS); do \
		echo "   - build tests/c/$$t.c (plain, and with -fsanitize=address,undefined)"; \
		$(CC) $(C_TEST_FLAGS) tests/c/$$t.c $(C_LIB) $(C_NATIVE_LIBS) -o $(C_BUILD)/bin/$$t || exit 1; \
		$(CC) $(C_TEST_FLAGS) $(C_SANITIZE) tests/c/$$t.c $(C_LIB) $(C_NATIVE_LIBS) -o $(C_BUILD)/bin/$$t.san || exit 1; \
	done

# $(1): a command prefix (valgrind, sanitizer options), $(2): a binary suffix (.san)
define c_run_tests
	@rm -rf $(C_WORK) && mkdir -p $(C_WORK)
	$(1)$(C_BUILD)/bin/test_lifecycle$(2) $(C_WORK)
	$(1)$(C_BUILD)/bin/test_vectors$(2) $(C_BUILD)/vectors.txt
	$(1)$(C_BUILD)/bin/test_threads$(2) $(C_WORK)
	$(1)$(C_BUILD)/bin/test_widget$(2) $(C_BUILD)/widget_vectors.txt
	$(1)$(C_BUILD)/bin/test_checkout$(2) $(C_WORK)
	$(1)$(C_BUILD)/bin/test_postgres$(2)
endef

# One throwaway PostgreSQL (scripts/with-postgres.sh, or RAMPART_TEST_DATABASE_URL) for all
# three runs: test_postgres needs it, and fails without it.
c-test-run: c-test-build
	"$(CURDIR)/scripts/with-postgres.sh" $(MAKE) --no-print-directory c-test-runs

c-test-runs:
	@echo "   - run the C tests"
	$(call c_run_tests,,)
	@echo "   - the same under valgrind (fails on any error or definitely/indirectly lost byte)"
	$(call c_run_tests,$(VALGRIND) ,)
	@echo "   - the same built with AddressSanitizer + UndefinedBehaviorSanitizer (fails on any report)"
	$(call c_run_tests,$(C_SAN_ENV) ,.san)

# The examples, built as a partner would: against an installed copy, through pkg-config.
c-examples: c-tools
	@echo "   - make install into $(C_BUILD)/prefix; build examples/c and examples/cpp with pkg-config; run them"
	@rm -rf $(C_BUILD)/prefix $(C_BUILD)/examples && mkdir -p $(C_BUILD)/examples
	@$(MAKE) --no-print-directory install PREFIX=$(C_BUILD)/prefix FFI_PROFILE=dev >/dev/null
	PKG_CONFIG_PATH=$(C_BUILD)/prefix/lib/pkgconfig; export PKG_CONFIG_PATH; \
	flags="$$(pkg-config --cflags --libs rampart)" && \
	$(CC) -std=c99 $(C_WARN) examples/c/partner_backend.c $$flags -Wl,-rpath,$(C_BUILD)/prefix/lib \
		-o $(C_BUILD)/examples/partner_backend_c && \
	$(CXX) -std=c++17 $(C_WARN) examples/cpp/partner_backend.cpp $$flags -Wl,-rpath,$(C_BUILD)/prefix/lib \
		-o $(C_BUILD)/examples/partner_backend_cpp && \
	$(C_BUILD)/examples/partner_backend_c $(C_BUILD)/examples/c.db && \
	$(C_BUILD)/examples/partner_backend_cpp $(C_BUILD)/examples/cpp.db

install:
	$(CARGO) build -p rampart-ffi --locked --lib --profile $(FFI_PROFILE)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include
	install -m 644 $(FFI_OUT)/librampart.a $(DESTDIR)$(PREFIX)/lib/librampart.a
	install -m 755 $(FFI_OUT)/librampart.so $(DESTDIR)$(PREFIX)/lib/librampart.so.$(FFI_VERSION)
	ln -sf librampart.so.$(FFI_VERSION) $(DESTDIR)$(PREFIX)/lib/librampart.so.$(FFI_MAJOR)
	ln -sf librampart.so.$(FFI_MAJOR) $(DESTDIR)$(PREFIX)/lib/librampart.so
	install -m 644 include/rampart.h $(DESTDIR)$(PREFIX)/include/rampart.h
	sed -e 's|@PREFIX@|$(PC_PREFIX)|' -e 's|@VERSION@|$(FFI_VERSION)|' ffi/rampart.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/rampart.pc

# Not part of `make test`: a release build and a timing run.
c-bench: c-tools
	@dpkg -s liboath-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq liboath-dev; }
	$(CARGO) build -p rampart-ffi --locked --lib --release
	@mkdir -p $(C_BUILD)/bin
	$(CC) -std=c99 -O2 $(C_WARN) -Iinclude $$(pkg-config --cflags liboath) ffi/bench/verify.c \
		$(CARGO_TARGET_DIR)/release/librampart.a $$(pkg-config --libs liboath) $(C_NATIVE_LIBS) \
		-o $(C_BUILD)/bin/verify_bench
	$(C_BUILD)/bin/verify_bench
