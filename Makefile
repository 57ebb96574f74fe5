# SPDX-License-Identifier: Apache-2.0
# vmcost: build, test, lab and demo. GNU make.
#
#   make            build host/vmcost (and guest-agent/vmcost-agent on Linux) and the manuals
#   make check      install missing packages (make deps), build with -Werror, unit tests under
#                   ASan+UBSan, the agent's and lib's suites under musl and for aarch64 (under
#                   qemu-user), the agent's threaded suites under ThreadSanitizer, shellcheck,
#                   lab tests;
#                   ends with one "N passed, N failed" line; needs no real Lima (make lima-check)
#   make test       the fast loop: make check without the lab (no VM) and without installing
#                   packages (a missing one is named); 202 s of CPU time, 7 min 20 s of wall
#                   time, measured here with other work on the 2-core machine and the ASan
#                   objects already built (535 s from a clean clone; docs/development.md)
#   make demo       the main job on Linux: two lab VMs, memtest on each, side by side
#
# Component targets for working on one half:  make host | agent | unit | unit-host | unit-agent |
# unit-lib | unit-musl | unit-arm64 | tsan | agent-static | agent-static-arm64 | lint | lab-check |
# fuzz.  B=<dir> puts objects elsewhere (default build/).

.SECONDEXPANSION:
# Objects are never intermediate files: keep them for incremental builds.
.SECONDARY:

B ?= build
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
BASH_COMPLETION_DIR ?= $(PREFIX)/share/bash-completion/completions
ZSH_COMPLETION_DIR ?= $(PREFIX)/share/zsh/site-functions
CC ?= cc
CLANG ?= clang
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
say = $(if $(filter 1,$(V)),,@printf '  %-6s %s\n' $(1) $(2);)
FUZZ_SECONDS ?= 60
UNAME_S := $(shell uname -s)
VERSION := $(shell git describe --always --dirty --tags 2>/dev/null || echo 0.1.0)

# Packages are looked up one by one so a missing agent-only library does not break the host
# build on macOS.
pc_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pc_libs = $(shell pkg-config --libs $(1) 2>/dev/null)
HOST_PKGS := yaml-0.1 libcurl jansson libuv
AGENT_PKGS := yaml-0.1 jansson libmicrohttpd
DEP_CFLAGS := $(foreach p,$(sort $(HOST_PKGS) $(AGENT_PKGS)),$(call pc_cflags,$(p)))
HOST_LIBS := $(foreach p,$(HOST_PKGS),$(call pc_libs,$(p))) -lm
# llhttp, Node.js's HTTP/1.1 parser, reads what autostop relays (host/autostop/http_watch.c).
# Homebrew ships it as a library (libllhttp.pc); Debian 12 ships its C sources in node-llhttp
# (/usr/share/llhttp), which are compiled here as they are, with their own warnings off.
LLHTTP_DIR ?= /usr/share/llhttp
LLHTTP_INC ?= /usr/share/include/llhttp
ifeq ($(shell pkg-config --exists libllhttp 2>/dev/null && echo yes),yes)
DEP_CFLAGS += $(call pc_cflags,libllhttp)
HOST_LIBS += $(call pc_libs,libllhttp)
LLHTTP_OBJS :=
else
DEP_CFLAGS += -I$(LLHTTP_INC)
LLHTTP_OBJS := llhttp api http
endif
llhttp_objs = $(patsubst %,$(B)/$(1)/llhttp/%.o,$(LLHTTP_OBJS))
AGENT_LIBS := $(foreach p,$(AGENT_PKGS),$(call pc_libs,$(p))) -lm -lpthread

STD := -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64
ifeq ($(UNAME_S),Darwin)
STD += -D_DARWIN_C_SOURCE
endif
WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wundef
# -Werror is for us, not for packagers: a newer compiler's new warning must not break a distro or
# Homebrew build, so plain `make` warns and goes on. make check and make test (their sub-makes inherit WERROR),
# the sanitizer and fuzz builds and CI always turn warnings into errors.
ifneq ($(filter check test,$(MAKECMDGOALS)),)
WERROR ?= -Werror
endif
WERROR ?=
export WERROR
# lib/ parses sizes and counters from untrusted text: implicit narrowing there is a bug.
WARN_LIB := -Wconversion
# Each side sees lib/ and itself only, so host code cannot include guest-agent code (or the
# reverse) by accident: host files include "room/name.h" (host/commands, platform, clients,
# measure), agent files "name.h", both "name.h" for lib/.
side_inc = $(if $(filter guest-agent/% tests/unit/agent_% tests/fuzz/fuzz_agent_%,$(1)),-Iguest-agent,$(if \
	$(filter host/% tests/unit/host_% tests/fuzz/fuzz_host_%,$(1)),-Ihost))
BASE_CFLAGS := $(STD) $(WARN) -Ilib $(DEP_CFLAGS) -DVMCOST_VERSION='"$(VERSION)"'
CFLAGS_REL := -O2 -g $(BASE_CFLAGS) $(WERROR) $(CFLAGS)
CFLAGS_ASAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all $(BASE_CFLAGS) -Werror
LDFLAGS_ASAN := -fsanitize=address,undefined
CFLAGS_FUZZ := -O1 -g -fsanitize=fuzzer-no-link,address,undefined $(BASE_CFLAGS) -Werror \
	-Wno-unused-command-line-argument

# Sources: every .c file of a directory belongs to it, so new files need no Makefile edit.
LIB_SRC := $(wildcard lib/*.c)
ifeq ($(UNAME_S),Darwin)
HOST_PLATFORM := host/platform/platform_darwin.c
else ifeq ($(UNAME_S),Linux)
HOST_PLATFORM := host/platform/platform_linux.c
else
HOST_PLATFORM := host/platform/platform_unsupported.c
endif
# host/ is grouped in rooms (commands, platform, clients, measure, ...): every host/ROOM/*.c.
HOST_ALL := $(wildcard host/*/*.c)
HOST_CORE_SRC := $(filter-out host/commands/main.c host/platform/platform_%.c,$(HOST_ALL)) \
	$(filter $(HOST_PLATFORM),$(HOST_ALL))
AGENT_CORE_SRC := $(filter-out guest-agent/main.c,$(wildcard guest-agent/*.c))

objs = $(patsubst %.c,$(B)/$(1)/%.o,$(2))

HOST_BIN ?= host/vmcost
AGENT_BIN ?= guest-agent/vmcost-agent
AGENT_STATIC_BIN := guest-agent/vmcost-agent-static

ifeq ($(UNAME_S),Linux)
ALL_BINS := $(HOST_BIN) $(AGENT_BIN)
else
ALL_BINS := $(HOST_BIN)
endif

.PHONY: all man host agent agent-static agent-src check check-run test unit unit-lib unit-host unit-agent lint \
	script-tests lab lab-check lima lima-check demo deps deps-ensure deps-check install uninstall clean format fuzz \
	fuzz-build darwin-check

all: deps-check
	@$(MAKE) --no-print-directory $(ALL_BINS) man

host: $(HOST_BIN)
agent: $(AGENT_BIN)

# ---- objects ---------------------------------------------------------------------------------
# The files that print VERSION are compiled again when it changes (a new commit, a tree that
# became dirty or clean): an incremental build kept the hash of the tree it was first built
# from, and results files record what --version says.
VERSION_USERS := $(shell grep -rl --include='*.c' VMCOST_VERSION host guest-agent lib 2>/dev/null)
$(B)/version.stamp: FORCE
	@mkdir -p $(@D); echo '$(VERSION)' | cmp -s - $@ || echo '$(VERSION)' >$@
$(foreach v,rel asan fuzz static musl tsan,$(patsubst %.c,$(B)/$(v)/%.o,$(VERSION_USERS))): \
	$(B)/version.stamp
# The builds that follow WERROR are compiled again when it changes: objects a plain `make` left
# would otherwise pass make check without their warnings ever being errors.
$(B)/werror.stamp: FORCE
	@mkdir -p $(@D); echo '$(WERROR)' | cmp -s - $@ || echo '$(WERROR)' >$@
.PHONY: FORCE
FORCE:

$(B)/rel/%.o: %.c $(B)/werror.stamp
	@mkdir -p $(@D)
	$(call say,CC,$<)$(CC) $(CFLAGS_REL) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@

$(B)/asan/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC-SAN,$<)$(CC) $(CFLAGS_ASAN) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@

# Generated code from another project: its own flags, no warnings of ours.
LLHTTP_FLAGS_rel := -O2 -g
LLHTTP_FLAGS_asan := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
LLHTTP_FLAGS_fuzz := -O1 -g -fsanitize=fuzzer-no-link,address,undefined
$(B)/%/llhttp/llhttp.o: $(LLHTTP_DIR)/llhttp.c
	@mkdir -p $(@D)
	$(call say,CC,$<)$(if $(filter fuzz,$*),$(CLANG),$(CC)) $(LLHTTP_FLAGS_$*) -w -I$(LLHTTP_INC) -c $< -o $@
$(B)/%/llhttp/api.o: $(LLHTTP_DIR)/api.c
	@mkdir -p $(@D)
	$(call say,CC,$<)$(if $(filter fuzz,$*),$(CLANG),$(CC)) $(LLHTTP_FLAGS_$*) -w -I$(LLHTTP_INC) -c $< -o $@
$(B)/%/llhttp/http.o: $(LLHTTP_DIR)/http.c
	@mkdir -p $(@D)
	$(call say,CC,$<)$(if $(filter fuzz,$*),$(CLANG),$(CC)) $(LLHTTP_FLAGS_$*) -w -I$(LLHTTP_INC) -c $< -o $@

$(B)/fuzz/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC-FUZ,$<)$(CLANG) $(CFLAGS_FUZZ) $(call side_inc,$<) -MMD -MP -c $< -o $@

$(B)/%/libvmcost.a: $$(call objs,$$*,$(LIB_SRC))
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(B)/%/libvmcost-host.a: $$(call objs,$$*,$(HOST_CORE_SRC)) $$(call llhttp_objs,$$*)
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

$(B)/%/libvmcost-agent.a: $$(call objs,$$*,$(AGENT_CORE_SRC))
	@rm -f $@
	$(call say,AR,$@)ar rcs $@ $^

# ---- programs --------------------------------------------------------------------------------
$(HOST_BIN): $(B)/rel/host/commands/main.o $(B)/rel/libvmcost-host.a $(B)/rel/libvmcost.a
	$(call say,LD,$@)$(CC) $(CFLAGS_REL) -o $@ $^ $(HOST_LIBS) $(LDFLAGS)

# vmcost under ASan+UBSan, for the lab suites that run a long-lived vmcost (tests/lab/autostop.sh:
# the autostop daemon with real Docker clients).
HOST_ASAN_BIN := $(B)/asan/vmcost
$(HOST_ASAN_BIN): $(B)/asan/host/commands/main.o $(B)/asan/libvmcost-host.a $(B)/asan/libvmcost.a
	$(call say,LD-SAN,$@)$(CC) $(CFLAGS_ASAN) -o $@ $^ $(HOST_LIBS) $(LDFLAGS_ASAN)

$(AGENT_BIN): $(B)/rel/guest-agent/main.o $(B)/rel/libvmcost-agent.a $(B)/rel/libvmcost.a
	$(call say,LD,$@)$(CC) $(CFLAGS_REL) -o $@ $^ $(AGENT_LIBS) $(LDFLAGS)

# The lab guest has no shared libraries: its agent is linked statically, with musl as on Alpine
# (mk/musl.mk builds guest-agent/vmcost-agent-static). The glibc static agent stays buildable:
# make agent-static-glibc, then export VMCOST_AGENT_STATIC=$PWD/guest-agent/vmcost-agent-static-glibc.
# Debian's libmicrohttpd.a needs GnuTLS -> p11-kit, which ships no static library, so
# lab/build-static-deps builds libmicrohttpd from Debian's source package without HTTPS.
LAB_CACHE ?= $(if $(VMCOST_LAB_CACHE),$(VMCOST_LAB_CACHE),$(HOME)/.cache/vmcost-lab)
MHD_STATIC := $(LAB_CACHE)/static-deps
STATIC_DEPS_INPUTS := lab/build-static-deps lab/static-deps.lock
# The script keeps what it built (PREFIX/built/); it runs again only when its inputs change.
$(MHD_STATIC)/ready: $(STATIC_DEPS_INPUTS)
	lab/build-static-deps "$(MHD_STATIC)" libmicrohttpd
	@touch $@

AGENT_STATIC_GLIBC_BIN := guest-agent/vmcost-agent-static-glibc
.PHONY: agent-static-glibc
agent-static-glibc: $(AGENT_STATIC_GLIBC_BIN)
$(AGENT_STATIC_GLIBC_BIN): $(call objs,static,guest-agent/main.c $(AGENT_CORE_SRC) $(LIB_SRC))
	$(call say,LD-STA,$@)$(CC) -static -O2 -o $@ $^ \
		$(MHD_STATIC)/lib/libmicrohttpd.a -l:libyaml.a -l:libjansson.a -lm -lpthread
$(B)/static/%.o: %.c $(B)/werror.stamp | $(MHD_STATIC)/ready
	@mkdir -p $(@D)
	$(call say,CC-STA,$<)$(CC) -O2 -g -I$(MHD_STATIC)/include $(BASE_CFLAGS) $(WERROR) $(call side_inc,$<) -MMD -MP -c $< -o $@

# ---- manuals --------------------------------------------------------------------------------
# docs/man/NAME.SECTION.scd -> $(B)/man/NAME.SECTION (roff), by scdoc (mk/man.sh).
MAN_SRC := $(wildcard docs/man/*.scd)
MAN_PAGES := $(patsubst docs/man/%.scd,$(B)/man/%,$(MAN_SRC))
MAN_HOST := $(filter $(B)/man/vmcost.1 $(B)/man/vmcost-%.1,$(MAN_PAGES))
man: $(MAN_PAGES)
$(B)/man/%: docs/man/%.scd mk/man.sh
	@mkdir -p $(@D)
	$(call say,SCDOC,$@)mk/man.sh $< $@

# ---- tests -----------------------------------------------------------------------------------
# tests/unit/lib_*.c link lib only; host_*.c add the host core; agent_*.c the agent core.
UNIT_LIB := $(basename $(notdir $(wildcard tests/unit/lib_*.c)))
UNIT_HOST := $(basename $(notdir $(wildcard tests/unit/host_*.c)))
UNIT_AGENT := $(basename $(notdir $(wildcard tests/unit/agent_*.c)))
ifneq ($(UNAME_S),Linux)
UNIT_AGENT :=
endif
UNIT_DIR := $(B)/asan/tests
# The suites are single files that include header-only helpers (check.h, golden.h ...).
UNIT_HEADERS := $(wildcard tests/unit/*.h)

# The template suites (lib_template*) link the Lima template linter, tests/tools/template_lint.c.
TEMPLATE_LINT_OBJ := $(B)/asan/tests/tools/template_lint.o
$(UNIT_DIR)/lib_template_lint $(UNIT_DIR)/lib_templates: $(TEMPLATE_LINT_OBJ) \
	tests/tools/template_lint.h
$(UNIT_DIR)/lib_%: tests/unit/lib_%.c $(UNIT_HEADERS) $(B)/asan/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-SAN,$@)$(CC) $(CFLAGS_ASAN) $(call side_inc,$<) -Itests/unit -Itests/tools -o $@ $< \
		$(filter %.o,$^) $(B)/asan/libvmcost.a $(HOST_LIBS) $(LDFLAGS_ASAN)

# The Lima template linter as a command, for templates outside the suites:
# build/tools/lima-template-lint [--fragment] FILE...
TEMPLATE_LINT_BIN := $(B)/tools/lima-template-lint
$(TEMPLATE_LINT_BIN): tests/tools/lima-template-lint.c tests/tools/template_lint.c \
		tests/tools/template_lint.h $(B)/rel/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD,$@)$(CC) $(CFLAGS_REL) -Werror -Itests/tools -o $@ $(filter %.c,$^) \
		$(B)/rel/libvmcost.a $(HOST_LIBS)

$(UNIT_DIR)/host_%: tests/unit/host_%.c $(UNIT_HEADERS) $(B)/asan/libvmcost-host.a \
		$(B)/asan/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-SAN,$@)$(CC) $(CFLAGS_ASAN) $(call side_inc,$<) -Itests/unit -o $@ $< $(B)/asan/libvmcost-host.a $(B)/asan/libvmcost.a \
		$(HOST_LIBS) $(LDFLAGS_ASAN)

$(UNIT_DIR)/agent_%: tests/unit/agent_%.c $(UNIT_HEADERS) $(B)/asan/libvmcost-agent.a \
		$(B)/asan/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-SAN,$@)$(CC) $(CFLAGS_ASAN) $(call side_inc,$<) -Itests/unit -o $@ $< $(B)/asan/libvmcost-agent.a \
		$(B)/asan/libvmcost.a $(AGENT_LIBS) $(HOST_LIBS) $(LDFLAGS_ASAN)

RUN_SUITE := tests/run-suite $(B)/logs

unit-lib: $(addprefix $(UNIT_DIR)/,$(UNIT_LIB))
	@for t in $^; do $(RUN_SUITE) "unit/$${t##*/}" $$t || exit 1; done

unit-host: $(addprefix $(UNIT_DIR)/,$(UNIT_HOST))
	@for t in $^; do $(RUN_SUITE) "unit/$${t##*/}" $$t || exit 1; done

unit-agent: $(addprefix $(UNIT_DIR)/,$(UNIT_AGENT))
	@for t in $^; do $(RUN_SUITE) "unit/$${t##*/}" $$t || exit 1; done

# Keep going through every suite so one failure does not hide the others; fail at the end.
unit: $(addprefix $(UNIT_DIR)/,$(UNIT_LIB) $(UNIT_HOST) $(UNIT_AGENT))
	@rc=0; for t in $^; do $(RUN_SUITE) "unit/$${t##*/}" $$t || rc=1; done; exit $$rc

# The macOS layer cannot run here; compile it against declarations written from Apple's
# documented prototypes so at least its types agree, and run it on Linux against stubs of
# Apple's calls (tests/darwin/platform_link.c).
darwin-check:
	@if [ -f host/platform/platform_darwin.c ]; then \
		$(RUN_SUITE) darwin-compile tests/darwin-compile $(CC) "$(BASE_CFLAGS) -Ihost" \
			"$(HOST_LIBS)"; fi

SHELL_SCRIPTS = $(shell tests/list-shell-scripts)
C_SOURCES = $(shell tests/list-c-sources)
lint: $(MAN_PAGES)
	@rc=0; $(RUN_SUITE) shellcheck tests/shellcheck-suite $(SHELL_SCRIPTS) || rc=1; \
	$(RUN_SUITE) clang-format tests/clang-format-suite $(C_SOURCES) || rc=1; \
	$(RUN_SUITE) man-lint tests/man-lint $(MAN_PAGES) || rc=1; \
	$(RUN_SUITE) actionlint tests/workflow-lint $(wildcard .github/workflows/*.yml) || rc=1; exit $$rc

# Shell test suites that need no VM (provision scripts in a fake root, CLI exit codes...). The
# suites that need the real Lima, even without a VM (tests/lima/validate.sh, fragment_bases.sh),
# run in make lima-check: make check gives the same answer with or without `make lima`.
script-tests: $(ALL_BINS) $(TEMPLATE_LINT_BIN)
	@rc=0; for t in tests/sh/*.sh; do \
		[ -x "$$t" ] || continue; \
		$(RUN_SUITE) "sh/$$(basename $$t .sh)" $$t || rc=1; done; exit $$rc

# ---- lab -------------------------------------------------------------------------------------
# VMCOST_LAB_ARCH=aarch64 (lab/vm --arch): the lab's aarch64 guest too, with the static aarch64
# agent (make demo and the lab suites then run on it).
LAB_AARCH64 = $(filter aarch64,$(VMCOST_LAB_ARCH))
lab: $(AGENT_STATIC_BIN) $(if $(LAB_AARCH64),guest-agent/vmcost-agent-static-arm64)
	lab/build
	$(if $(LAB_AARCH64),lab/build --arch aarch64)

# Two lanes at a time (VMCOST_LAB_LANES), memtest alone: tests/lab/run-lanes says why.
lab-check: $(ALL_BINS) $(HOST_ASAN_BIN) lab
	@tests/lab/run-lanes $(B)/logs

# ---- the agent's source tarball ----------------------------------------------------------------
# The tarball templates/vmcost-agent.yaml downloads, written to $(B)/dist, and its sha256 pinned
# in that fragment (templates/update-embedded; tests/unit/lib_templates checks the pin). Publish
# the file at the fragment's vmcostAgentURL with each release.
agent-src:
	templates/update-embedded --out $(B)/dist

# ---- real Lima (the second test bed) ---------------------------------------------------------
# Lima 2.2.0 built from its Go module, the QEMU TCG wrapper and a Debian 12 image, cached in
# $VMCOST_LIMA_CACHE (default ~/.cache/vmcost-lima), never in the repository.
lima:
	lab/lima/build

# Boots one real Lima instance and runs every tests/lima/*.sh against it (builds what is missing),
# the template checks that need limactl but no VM included.
lima-check: $(ALL_BINS) lab
	@tests/lima/run-all $(B)/lima-logs

# ---- the two commands the README promises ----------------------------------------------------
deps:
	mk/deps.sh install

deps-ensure:
	@mk/deps.sh ensure

deps-check:
	@mk/deps.sh check build

# Every stage runs even when an earlier one failed; a failed stage is logged as one failed test
# (build/logs/stage-NAME.log: the command, make's errors, the last lines) so the total line cannot
# hide a failure outside the suites.
stage = tests/run-stage $(B)/logs $(1) $(MAKE) -k --no-print-directory $(1) || rc=1
# What the stages build, built first with a job per CPU (the stages themselves would compile one
# file at a time). A failure here is left to the stage that owns it.
JOBS := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
CHECK_BUILD = $(MAN_PAGES) $(addprefix $(UNIT_DIR)/,$(UNIT_LIB) $(UNIT_HOST) $(UNIT_AGENT))
ifeq ($(UNAME_S),Linux)
CHECK_BUILD += $(addprefix $(MUSL_UNIT_DIR)/,$(MUSL_UNIT)) $(addprefix $(TSAN_DIR)/,$(TSAN_SUITES)) \
	$(HOST_ASAN_BIN) $(AGENT_STATIC_BIN)
endif
# The stages that need no VM, in order: make check runs them before the lab, make test alone.
linux_stage = if [ "$(UNAME_S)" = Linux ]; then $(call stage,$(1)); fi
NO_VM_STAGES = $(call stage,unit); $(call linux_stage,unit-musl); $(call linux_stage,tsan); \
	$(call linux_stage,unit-arm64); $(call stage,darwin-check); $(call stage,lint); \
	$(call stage,script-tests)
check: deps-ensure
	@rm -rf $(B)/logs
	@rc=0; \
	$(MAKE) --no-print-directory -j$(JOBS) $(ALL_BINS) || exit 1; \
	$(MAKE) --no-print-directory -k -j$(JOBS) $(CHECK_BUILD) || true; \
	$(NO_VM_STAGES); \
	if [ "$(UNAME_S)" = Linux ]; then $(call stage,lab-check); fi; \
	tests/total $(B)/logs || rc=1; exit $$rc

# The fast loop: every stage of make check that needs no VM and installs nothing (no deps-ensure,
# no lab-check), so it can run after each change. A missing build package is named (make deps
# installs it), never installed.
TEST_BUILD = $(filter-out $(HOST_ASAN_BIN) $(AGENT_STATIC_BIN),$(CHECK_BUILD))
test: deps-check
	@rm -rf $(B)/logs
	@rc=0; \
	$(MAKE) --no-print-directory -j$(JOBS) $(ALL_BINS) || exit 1; \
	$(MAKE) --no-print-directory -k -j$(JOBS) $(TEST_BUILD) || true; \
	$(NO_VM_STAGES); \
	tests/total $(B)/logs || rc=1; exit $$rc

demo: deps-ensure
	@$(MAKE) --no-print-directory $(ALL_BINS) lab
	bench/demo

# ---- fuzzing ---------------------------------------------------------------------------------
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(B)/fuzz/bin/%,$(FUZZ_SRC))
$(B)/fuzz/bin/fuzz_agent_%: tests/fuzz/fuzz_agent_%.c \
		$$(call objs,fuzz,$(AGENT_CORE_SRC) $(LIB_SRC))
	@mkdir -p $(@D)
	$(call say,LD-FUZ,$@)$(CLANG) $(CFLAGS_FUZZ) $(call side_inc,$<) -fsanitize=fuzzer -o $@ $^ $(AGENT_LIBS)
$(B)/fuzz/bin/fuzz_host_%: tests/fuzz/fuzz_host_%.c \
		$$(call objs,fuzz,$(HOST_CORE_SRC) $(LIB_SRC)) $$(call llhttp_objs,fuzz)
	@mkdir -p $(@D)
	$(call say,LD-FUZ,$@)$(CLANG) $(CFLAGS_FUZZ) $(call side_inc,$<) -fsanitize=fuzzer -o $@ $^ $(HOST_LIBS)
$(B)/fuzz/bin/fuzz_lib_%: tests/fuzz/fuzz_lib_%.c $$(call objs,fuzz,$(LIB_SRC))
	@mkdir -p $(@D)
	$(call say,LD-FUZ,$@)$(CLANG) $(CFLAGS_FUZZ) $(call side_inc,$<) -fsanitize=fuzzer -o $@ $^ $(HOST_LIBS)

fuzz-build: $(FUZZ_BINS)
fuzz: $(FUZZ_BINS)
	@rc=0; for f in $(FUZZ_BINS); do \
		$(RUN_SUITE) "fuzz/$${f##*/}" tests/fuzz/run $$f $(FUZZ_SECONDS) || rc=1; done; \
	exit $$rc

# ---- install / housekeeping ------------------------------------------------------------------
# The agent's manuals go with the agent (Linux only).
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASH_COMPLETION_DIR) \
		$(DESTDIR)$(ZSH_COMPLETION_DIR)
	install -m 0755 $(HOST_BIN) $(DESTDIR)$(BINDIR)/vmcost
	# Lima 2.x runs an executable named limactl-NAME on PATH as `limactl NAME`.
	ln -sf vmcost $(DESTDIR)$(BINDIR)/limactl-vmcost
	install -m 0644 $(MAN_HOST) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 host/completion/vmcost.bash $(DESTDIR)$(BASH_COMPLETION_DIR)/vmcost
	install -m 0644 host/completion/_vmcost $(DESTDIR)$(ZSH_COMPLETION_DIR)/_vmcost
	if [ -f $(AGENT_BIN) ]; then install -m 0755 $(AGENT_BIN) $(DESTDIR)$(BINDIR)/vmcost-agent && \
		install -d $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 && \
		install -m 0644 $(B)/man/vmcost-agent.yaml.5 $(DESTDIR)$(MANDIR)/man5/ && \
		install -m 0644 $(B)/man/vmcost-agent.8 $(DESTDIR)$(MANDIR)/man8/; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/vmcost $(DESTDIR)$(BINDIR)/vmcost-agent $(DESTDIR)$(BINDIR)/limactl-vmcost \
		$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN_HOST))) \
		$(DESTDIR)$(MANDIR)/man5/vmcost-agent.yaml.5 $(DESTDIR)$(MANDIR)/man8/vmcost-agent.8 \
		$(DESTDIR)$(BASH_COMPLETION_DIR)/vmcost $(DESTDIR)$(ZSH_COMPLETION_DIR)/_vmcost

clean:
	rm -rf $(B) $(HOST_BIN) $(AGENT_BIN) $(AGENT_STATIC_BIN) $(AGENT_STATIC_GLIBC_BIN)

# The same files and rules `make lint` checks.
format:
	clang-format -i --style=file:.clang-format $(C_SOURCES)

include mk/musl.mk
include mk/tsan.mk
include mk/arm64.mk

-include $(shell find $(B) -name '*.d' 2>/dev/null)
