# SPDX-License-Identifier: Apache-2.0
# The agent as a Mac user's guest runs it: Apple Silicon guests are aarch64, this machine is
# x86_64. lib/, the agent and their unit suites are cross-built with Debian's cross toolchain
# (gcc-aarch64-linux-gnu) against Debian's arm64 libraries (multiarch, dpkg --add-architecture
# arm64; mk/deps.sh installs them), and the suites run under qemu-user. What differs there and
# not in the x86_64 suites: `char` is unsigned, long double is 128-bit, the page size may be
# 16 or 64 KiB on other kernels (Debian's is 4 KiB). No sanitizers: their runtimes are not
# cross-installed.
#
#   make agent-arm64   guest-agent/vmcost-agent-arm64 (glibc, dynamic)
#   make unit-arm64    the lib_* and agent_* unit suites, built for aarch64, run under qemu-aarch64
# Included by the Makefile after the unit-suite lists.

.PHONY: agent-arm64 unit-arm64
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_AR ?= aarch64-linux-gnu-ar
ARM64_QEMU ?= qemu-aarch64
# Debian's multiarch .pc files for arm64 (the -dev:arm64 packages) name the same include
# directory as the amd64 ones and /usr/lib/aarch64-linux-gnu, where the cross linker looks.
arm64_pc = PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig pkg-config
ARM64_PKGS := yaml-0.1 jansson libmicrohttpd
ARM64_DEP_CFLAGS := $(shell $(arm64_pc) --cflags $(ARM64_PKGS) 2>/dev/null)
ARM64_LIBS := $(shell $(arm64_pc) --libs $(ARM64_PKGS) 2>/dev/null) -lm -lpthread
ARM64_CFLAGS := -O2 -g $(STD) $(WARN) -Ilib $(ARM64_DEP_CFLAGS) -DVMCOST_VERSION='"$(VERSION)"'
ARM64_UNIT_DIR := $(B)/arm64/tests
AGENT_ARM64_BIN := guest-agent/vmcost-agent-arm64
# lib_templates builds the agent with the host's cc through a provision script: nothing of it
# is aarch64 (as in unit-musl).
ARM64_UNIT := $(filter-out lib_templates lib_template_lint,$(UNIT_LIB)) $(UNIT_AGENT)

# make check builds them with its other suites, a job per CPU.
ifeq ($(UNAME_S),Linux)
CHECK_BUILD += $(addprefix $(ARM64_UNIT_DIR)/,$(ARM64_UNIT))
endif

$(patsubst %.c,$(B)/arm64/%.o,$(VERSION_USERS)): $(B)/version.stamp

$(B)/arm64/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC-A64,$<)$(ARM64_CC) $(ARM64_CFLAGS) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@

$(B)/arm64/libvmcost.a: $(call objs,arm64,$(LIB_SRC))
	@rm -f $@
	$(call say,AR-A64,$@)$(ARM64_AR) rcs $@ $^

$(B)/arm64/libvmcost-agent.a: $(call objs,arm64,$(AGENT_CORE_SRC))
	@rm -f $@
	$(call say,AR-A64,$@)$(ARM64_AR) rcs $@ $^

agent-arm64: $(AGENT_ARM64_BIN)
$(AGENT_ARM64_BIN): $(B)/arm64/guest-agent/main.o $(B)/arm64/libvmcost-agent.a $(B)/arm64/libvmcost.a
	$(call say,LD-A64,$@)$(ARM64_CC) -O2 -o $@ $^ $(ARM64_LIBS)

$(ARM64_UNIT_DIR)/lib_%: tests/unit/lib_%.c tests/unit/check.h $(B)/arm64/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-A64,$@)$(ARM64_CC) $(ARM64_CFLAGS) $(call side_inc,$<) -Itests/unit -o $@ $< \
		$(B)/arm64/libvmcost.a $(ARM64_LIBS)

$(ARM64_UNIT_DIR)/agent_%: tests/unit/agent_%.c tests/unit/check.h $(B)/arm64/libvmcost-agent.a \
		$(B)/arm64/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-A64,$@)$(ARM64_CC) $(ARM64_CFLAGS) $(call side_inc,$<) -Itests/unit -o $@ $< \
		$(B)/arm64/libvmcost-agent.a $(B)/arm64/libvmcost.a -lcurl $(ARM64_LIBS)

# Like make unit: every suite runs, the target fails at the end if one failed. qemu-aarch64
# runs without -L: the loader and libc are libc6:arm64's (/lib/ld-linux-aarch64.so.1, pulled in by
# the -dev:arm64 packages), the same build as the libraries beside them. With
# -L /usr/aarch64-linux-gnu (the cross toolchain's older libc6-arm64-cross) a forked child of a
# dynamic program spins for ever under Debian 12's qemu-user 7.2.
unit-arm64: $(addprefix $(ARM64_UNIT_DIR)/,$(ARM64_UNIT))
	@rc=0; for t in $^; do \
		$(RUN_SUITE) "unit-arm64/$${t##*/}" $(ARM64_QEMU) $$t || rc=1; done; exit $$rc

.PHONY: clean-arm64
clean: clean-arm64
clean-arm64:
	rm -f $(AGENT_ARM64_BIN) $(AGENT_STATIC_ARM64_BIN)

# The static aarch64 agent, with musl as on Alpine: Debian's musl-dev:arm64 through
# mk/aarch64-musl-gcc, its libraries built by lab/build-static-deps (cross: it passes --host).
# The aarch64 lab guest runs it.
ARM64_MUSL_CC := $(CURDIR)/mk/aarch64-musl-gcc
ARM64_MUSL_DEPS := $(LAB_CACHE)/musl-arm64-deps
ARM64_MUSL_CFLAGS := -O2 -g $(STD) $(WARN) -Ilib -I$(ARM64_MUSL_DEPS)/include \
	-DVMCOST_VERSION='"$(VERSION)"'
AGENT_STATIC_ARM64_BIN := guest-agent/vmcost-agent-static-arm64
.PHONY: agent-static-arm64
$(ARM64_MUSL_DEPS)/agent.ready: $(STATIC_DEPS_INPUTS) mk/aarch64-musl-gcc
	lab/build-static-deps --cc $(ARM64_MUSL_CC) "$(ARM64_MUSL_DEPS)" libyaml jansson libmicrohttpd
	@touch $@
$(patsubst %.c,$(B)/musl-arm64/%.o,$(VERSION_USERS)): $(B)/version.stamp
$(B)/musl-arm64/%.o: %.c | $(ARM64_MUSL_DEPS)/agent.ready
	@mkdir -p $(@D)
	$(call say,CC-M64,$<)$(ARM64_MUSL_CC) $(ARM64_MUSL_CFLAGS) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@
agent-static-arm64: $(AGENT_STATIC_ARM64_BIN)
$(AGENT_STATIC_ARM64_BIN): $(call objs,musl-arm64,guest-agent/main.c $(AGENT_CORE_SRC) $(LIB_SRC))
	$(call say,LD-M64,$@)$(ARM64_MUSL_CC) -static -O2 -o $@ $^ -L$(ARM64_MUSL_DEPS)/lib \
		-lmicrohttpd -lyaml -ljansson -lm -lpthread

# tests/lab/arm64_guest.sh boots lab/arm64-guest with the static aarch64 agent.
lab-check: $(AGENT_STATIC_ARM64_BIN)
