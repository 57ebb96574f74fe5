# SPDX-License-Identifier: Apache-2.0
# The agent as Alpine runs it: Alpine's libc is musl, so the agent, lib/ and their unit suites
# are also built with Debian's musl-gcc (musl-tools), statically, against libyaml, jansson and
# libmicrohttpd built from Debian's source packages by lab/build-static-deps (curl too, for the
# server suites' test client only), cached in the lab cache. A glibc-only call or behaviour
# fails here, not on the user's Mac. No sanitizers: GCC's ASan/UBSan runtimes need glibc.
#
#   make agent-static   guest-agent/vmcost-agent-static (musl), the agent the lab guest runs
#   make unit-musl      the lib_* and agent_* unit suites, built with musl and run here
# Included by the Makefile after the unit-suite lists.

.PHONY: unit-musl
MUSL_CC ?= musl-gcc
MUSL_DEPS := $(LAB_CACHE)/musl-deps
# No pkg-config flags: they name glibc's include directories.
MUSL_CFLAGS := -O2 -g $(STD) $(WARN) $(WERROR) -Ilib -I$(MUSL_DEPS)/include -DVMCOST_VERSION='"$(VERSION)"'
MUSL_LIBS := -L$(MUSL_DEPS)/lib -lmicrohttpd -lyaml -ljansson -lm -lpthread
MUSL_UNIT_DIR := $(B)/musl/tests
# lib_templates checks templates/ and builds the agent with the host's cc through a provision
# script: nothing of it runs on musl, and it is the slowest suite, so it runs once (make unit);
# lib_template_lint tests the template linter, a test tool, not code musl ever builds.
MUSL_UNIT := $(filter-out lib_templates lib_template_lint,$(UNIT_LIB)) $(UNIT_AGENT)

# Two stamps so that the agent alone (make lab, make demo) never waits for curl.
$(MUSL_DEPS)/agent.ready: $(STATIC_DEPS_INPUTS)
	lab/build-static-deps --cc $(MUSL_CC) "$(MUSL_DEPS)" libyaml jansson libmicrohttpd
	@touch $@
$(MUSL_DEPS)/tests.ready: $(STATIC_DEPS_INPUTS) $(MUSL_DEPS)/agent.ready
	lab/build-static-deps --cc $(MUSL_CC) "$(MUSL_DEPS)" curl
	@touch $@

$(B)/musl/%.o: %.c $(B)/werror.stamp | $(MUSL_DEPS)/agent.ready
	@mkdir -p $(@D)
	$(call say,CC-MUS,$<)$(MUSL_CC) $(MUSL_CFLAGS) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@

agent-static: $(AGENT_STATIC_BIN)
$(AGENT_STATIC_BIN): $(B)/musl/guest-agent/main.o $(B)/musl/libvmcost-agent.a $(B)/musl/libvmcost.a
	$(call say,LD-MUS,$@)$(MUSL_CC) -static -O2 -o $@ $^ $(MUSL_LIBS)

$(MUSL_UNIT_DIR)/lib_%: tests/unit/lib_%.c $(UNIT_HEADERS) $(B)/musl/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-MUS,$@)$(MUSL_CC) $(MUSL_CFLAGS) $(call side_inc,$<) -Itests/unit -static -o $@ $< \
		$(B)/musl/libvmcost.a $(MUSL_LIBS)

$(MUSL_UNIT_DIR)/agent_%: tests/unit/agent_%.c $(UNIT_HEADERS) $(B)/musl/libvmcost-agent.a \
		$(B)/musl/libvmcost.a $(MUSL_DEPS)/tests.ready
	@mkdir -p $(@D)
	$(call say,LD-MUS,$@)$(MUSL_CC) $(MUSL_CFLAGS) $(call side_inc,$<) -Itests/unit -static -o $@ $< \
		$(B)/musl/libvmcost-agent.a $(B)/musl/libvmcost.a -lcurl $(MUSL_LIBS)

# Like make unit: every suite runs, the target fails at the end if one failed.
unit-musl: $(addprefix $(MUSL_UNIT_DIR)/,$(MUSL_UNIT))
	@rc=0; for t in $^; do $(RUN_SUITE) "unit-musl/$${t##*/}" $$t || rc=1; done; exit $$rc
