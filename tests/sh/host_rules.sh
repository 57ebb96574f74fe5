#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# House rules of host/ that a reader checks with grep, checked here so they stay true: commands
# return exit codes (only main() exits, so tests can call commands and --json always prints its
# error document), OS differences live behind host/platform/, the rooms below host/commands/
# never include it, and host/ and guest-agent/ never include each other. Each check prints what
# broke it.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh

# rule NAME PATTERN FILES...: no line of FILES matches the extended regex PATTERN.
rule() {
	name=$1 pattern=$2
	shift 2
	hits=$(grep -nE "$pattern" "$@" 2>/dev/null | head -n 5)
	if [ -z "$hits" ]; then ok "$name"; else fail "$name: $hits"; fi
}

host_c=$(find host -name '*.c' ! -path host/commands/main.c | sort)
host_all=$(find host -name '*.[ch]' | sort)
below_commands=$(find host -name '*.[ch]' ! -path 'host/commands/*' | sort)
logic=$(find host -name '*.[ch]' ! -name 'platform_*.c' | sort)
agent_all=$(find guest-agent -name '*.[ch]' | sort)

# shellcheck disable=SC2086 # file lists
{
	rule "no exit() or die() below main (commands return their exit code)" \
		'(^|[^_a-z])(exit|die)\(' $host_c
	rule "no #ifdef on the OS outside host/platform/platform_*.c" \
		'^#[[:space:]]*(if|ifdef|ifndef|elif).*(__APPLE__|__MACH__|__linux__|__FreeBSD__)' $logic
	rule "host/ includes no guest-agent/ code" '#include[[:space:]]*"[^"]*guest-agent/' $host_all
	rule "only host/commands/ includes host/commands/ (the rooms below never call up)" \
		'#include[[:space:]]*"commands/' $below_commands
	rule "guest-agent/ includes no host/ code" \
		'#include[[:space:]]*"[^"]*(host/|commands/|platform/|clients/|measure/)' $agent_all
}
suite_summary
