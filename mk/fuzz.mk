# Fuzzing with cargo-fuzz (libFuzzer, nightly Rust): the parsers of untrusted input, one target
# each (fuzz/fuzz_targets/), the bodies shared with the stable corpus replay that `make test`
# runs (fuzz/targets-lib). Not part of `make test`. See fuzz/README.md.
#
#   make fuzz                                  every target for FUZZ_SECONDS (60) each
#   make fuzz FUZZ_TARGETS=token FUZZ_SECONDS=600
#   make fuzz-merge                            fold what `make fuzz` found into the committed
#                                              corpus, minimised (cargo fuzz cmin); keeps crash-*
#
# `make fuzz` starts from the committed corpus (fuzz/corpus/<target>, read only) and writes new
# inputs to a scratch corpus under FUZZ_TARGET_DIR, so a run never changes tracked files; a
# crash is saved under fuzz/artifacts/<target>/ and fails the run (after the other targets).
# The build has its own target directory (fuzz/target by default, ignored by git), apart from
# CARGO_TARGET_DIR: its flags (sanitizer, coverage) differ from every other build's.

CARGO_FUZZ_VERSION := 0.13.2
FUZZ_TOOLCHAIN ?= nightly
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= token widget_options widget_url address key_file http_body
FUZZ_TARGET_DIR ?= $(CURDIR)/fuzz/target
FUZZ_SCRATCH := $(FUZZ_TARGET_DIR)/new-corpus
FUZZ_LOGS := $(FUZZ_TARGET_DIR)/logs
CARGO_FUZZ_ROOT := $(or $(CARGO_HOME),$(HOME)/.cargo)
CARGO_FUZZ := env -u CARGO_TARGET_DIR $(CARGO) +$(FUZZ_TOOLCHAIN) fuzz
CARGO_FUZZ_BUILD := --release --debug-assertions --target-dir $(FUZZ_TARGET_DIR)

# The longest input per target: past the parser's own cap where that is small (a token is
# malformed over 64 bytes, an address over 128, a key file has 64-digit lines), else
# libFuzzer's usual 4096 (URLs may reach 16 KiB and bodies 64 KiB, but no check needs that).
FUZZ_MAX_LEN_token := 256
FUZZ_MAX_LEN_widget_options := 4096
FUZZ_MAX_LEN_widget_url := 4096
FUZZ_MAX_LEN_address := 256
FUZZ_MAX_LEN_key_file := 1024
FUZZ_MAX_LEN_http_body := 4096
# libFuzzer options for target $(1): its length limit and dictionary; 10 s per input at most.
fuzz_flags = -max_len=$(FUZZ_MAX_LEN_$(1)) -dict=$(CURDIR)/fuzz/dicts/$(1).dict -timeout=10 -rss_limit_mb=2048
# cmin keeps a smallest set of inputs covering every edge (not every hit-count bucket).
FUZZ_CMIN_FLAGS := -use_counters=0 -set_cover_merge=1

# One target's run, as one shell command ($(1): the target); a failure is noted in $failed.
fuzz_run = echo "== fuzz $(1) for $(FUZZ_SECONDS) s (-max_len=$(FUZZ_MAX_LEN_$(1)))"; \
	mkdir -p $(FUZZ_SCRATCH)/$(1) $(CURDIR)/fuzz/artifacts/$(1); \
	$(CARGO_FUZZ) run $(CARGO_FUZZ_BUILD) $(1) $(FUZZ_SCRATCH)/$(1) $(CURDIR)/fuzz/corpus/$(1) -- \
	  $(call fuzz_flags,$(1)) -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -artifact_prefix=$(CURDIR)/fuzz/artifacts/$(1)/ > $(FUZZ_LOGS)/$(1).log 2>&1 \
	  || { failed="$$failed $(1)"; tail -n 40 $(FUZZ_LOGS)/$(1).log; };

# One target's line of the summary, from libFuzzer's final stats.
fuzz_summary = execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_LOGS)/$(1).log | tail -n 1); \
	speed=$$(sed -n 's/^stat::average_exec_per_sec: *//p' $(FUZZ_LOGS)/$(1).log | tail -n 1); \
	cov=$$(grep -o 'cov: [0-9]*' $(FUZZ_LOGS)/$(1).log | tail -n 1); \
	printf '   %-15s %12s execs %8s exec/s  %-10s %5s in the scratch corpus\n' $(1) "$${execs:-?}" "$${speed:-?}" \
	  "$$cov" "$$(ls $(FUZZ_SCRATCH)/$(1) | wc -l)";

# Fold one target's scratch corpus into the committed one and minimise it; crash-* inputs
# (inputs that once failed a target, kept as regressions) are set aside and put back whatever coverage they add.
fuzz_merge = keep=$(FUZZ_TARGET_DIR)/keep/$(1); rm -rf $$keep && mkdir -p $$keep $(FUZZ_SCRATCH)/$(1) && \
	find fuzz/corpus/$(1) -maxdepth 1 -name 'crash-*' -exec mv {} $$keep/ \; && \
	{ cp -n $(FUZZ_SCRATCH)/$(1)/* fuzz/corpus/$(1)/ 2>/dev/null; true; } && \
	$(CARGO_FUZZ) cmin $(CARGO_FUZZ_BUILD) $(1) $(CURDIR)/fuzz/corpus/$(1) -- $(call fuzz_flags,$(1)) $(FUZZ_CMIN_FLAGS) \
	  > $(FUZZ_LOGS)/$(1).cmin.log 2>&1 && \
	{ mv $$keep/* fuzz/corpus/$(1)/ 2>/dev/null; true; } && \
	echo "   $(1): $$(ls fuzz/corpus/$(1) | wc -l) files, $$(cat fuzz/corpus/$(1)/* | wc -c) bytes" || exit 1;

.PHONY: fuzz fuzz-tools fuzz-build fuzz-merge

# The nightly toolchain and the pinned cargo-fuzz, installed only when missing.
fuzz-tools:
	@rustup toolchain list | grep -q '^$(FUZZ_TOOLCHAIN)' \
		|| rustup toolchain install $(FUZZ_TOOLCHAIN) --profile minimal
	@$(CARGO_FUZZ_ROOT)/bin/cargo-fuzz --version 2>/dev/null | grep -qx "cargo-fuzz $(CARGO_FUZZ_VERSION)" \
		|| CARGO_TARGET_DIR=$(CARGO_TARGET_DIR)/cargo-fuzz-install \
			$(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked --root $(CARGO_FUZZ_ROOT)

fuzz-build: fuzz-tools
	@echo "== cargo fuzz build (nightly, ASan, release with debug assertions) into $(FUZZ_TARGET_DIR)"
	@$(CARGO_FUZZ) build $(CARGO_FUZZ_BUILD)

# Each target runs for FUZZ_SECONDS; the full libFuzzer output is in $(FUZZ_LOGS)/<target>.log.
fuzz: fuzz-build
	@mkdir -p $(FUZZ_LOGS); failed=""; \
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t))) \
	echo "== fuzz summary ($(FUZZ_SECONDS) s per target)"; \
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_summary,$(t))) \
	if [ -n "$$failed" ]; then echo "fuzz: crashes in:$$failed (inputs in fuzz/artifacts/)" >&2; exit 1; fi

fuzz-merge: fuzz-build
	@mkdir -p $(FUZZ_LOGS); $(foreach t,$(FUZZ_TARGETS),$(call fuzz_merge,$(t)))
