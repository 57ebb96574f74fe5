# SPDX-License-Identifier: Apache-2.0
# ThreadSanitizer for the agent, the only multithreaded, root, long-lived component: the suites
# of its server (libmicrohttpd, one thread per connection, with the fake and with the real core,
# and under load), its trim (the timer and API requests share one state) and its daemon
# (start-up and shutdown against the server's threads), built with -fsanitize=thread in their own
# directory (TSan does not combine with ASan). A report stops the suite with exit code 66, which
# fails it.
#
#   make tsan
# Included by the Makefile after the unit-suite lists.

.PHONY: tsan
TSAN_SUITES := agent_server agent_server_load agent_server_core agent_engine agent_trim agent_daemon
TSAN_DIR := $(B)/tsan/tests
CFLAGS_TSAN := -O1 -g -fno-omit-frame-pointer -fsanitize=thread $(BASE_CFLAGS) -Werror
TSAN_RUN_OPTIONS := halt_on_error=1 exitcode=66 second_deadlock_stack=1

$(B)/tsan/%.o: %.c
	@mkdir -p $(@D)
	$(call say,CC-TSA,$<)$(CC) $(CFLAGS_TSAN) $(call side_inc,$<) $(if $(filter lib/%,$<),$(WARN_LIB)) -MMD -MP -c $< -o $@

$(TSAN_DIR)/agent_%: tests/unit/agent_%.c $(UNIT_HEADERS) $(B)/tsan/libvmcost-agent.a \
		$(B)/tsan/libvmcost.a
	@mkdir -p $(@D)
	$(call say,LD-TSA,$@)$(CC) $(CFLAGS_TSAN) $(call side_inc,$<) -Itests/unit -o $@ $< $(B)/tsan/libvmcost-agent.a \
		$(B)/tsan/libvmcost.a $(AGENT_LIBS) $(HOST_LIBS) -fsanitize=thread

tsan: $(addprefix $(TSAN_DIR)/,$(TSAN_SUITES))
	@rc=0; for t in $^; do TSAN_OPTIONS="$(TSAN_RUN_OPTIONS)" \
		$(RUN_SUITE) "tsan/$${t##*/}" $$t || rc=1; done; exit $$rc
