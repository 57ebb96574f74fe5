#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# House rules of host/ that a reader checks with grep, checked here so they stay true: commands
# return exit codes (only main() exits, so tests can call commands and --json always prints its
# error document), OS differences live behind host/platform/, host/ and guest-agent/ never include
# each other, and the rooms call in one direction only:
#   commands -> autostop, measure -> clients -> platform -> lib
# (a room includes its own headers and those of the rooms below it; autostop and measure are
# peers and stay apart). Within a room the files may call each other, but never in a circle: the
# include graphs of host/ and of guest-agent/ (each with lib/), derived from the sources, have no
# cycle. Each check prints what broke it, and the last tests plant a bad include, or an exit below
# main, in a copy of the tree to show the checks catch one.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# rule NAME PATTERN FILES...: no line of FILES matches the extended regex PATTERN.
rule() {
	name=$1 pattern=$2
	shift 2
	hits=$(grep -nE "$pattern" "$@" 2>/dev/null | head -n 5)
	if [ -z "$hits" ]; then ok "$name"; else fail "$name: $hits"; fi
}

# includes ROOT: "FILE TARGET" for every #include "..." of host/, guest-agent/ and lib/ under ROOT,
# with FILE and TARGET relative to ROOT; TARGET is the header the compiler finds (host/ROOM/x.h,
# guest-agent/x.h for the agent's own files, lib/x.h), or the name as written when none exists.
includes() {
	(
		cd "$1" || exit 1
		find host guest-agent lib -name '*.[ch]' | sort | sed 's/$/ -/'
		find host guest-agent lib -name '*.[ch]' | sort |
			xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
			sed 's|^\([^:]*\):[^"]*"\([^"]*\)".*|\1 \2|'
	) | awk '
		$2 == "-" { have[$1] = 1; next }
		{
			if ($1 ~ /^guest-agent\// && ("guest-agent/" $2) in have) print $1, "guest-agent/" $2
			else if (("host/" $2) in have) print $1, "host/" $2
			else if (("lib/" $2) in have) print $1, "lib/" $2
			else print $1, $2
		}'
}

# room_order ROOT: one line per include that goes up the room order or sideways into another
# room of the same level.
room_order() {
	includes "$1" | awk '
		function room(p) {
			if (p ~ /^lib\//) return "lib"
			if (p ~ /^host\/[^\/]+\//) { split(p, a, "/"); return a[2] }
			return ""
		}
		BEGIN {
			level["commands"] = 4; level["autostop"] = 3; level["measure"] = 3
			level["clients"] = 2; level["platform"] = 1; level["lib"] = 0
		}
		{
			from = room($1); to = room($2)
			if (from == "" || to == "" || from == to) next
			if (!(from in level) || !(to in level)) {
				print $1 " includes " $2 ": a room the order does not know (tests/sh/host_rules.sh)"
			} else if (level[to] > level[from]) {
				print $1 " includes " $2 ": " from " is below " to
			} else if (level[to] == level[from]) {
				print $1 " includes " $2 ": " from " and " to " are peers and stay apart"
			}
		}'
}

# include_cycles ROOT SIDE: the modules of one cycle in the include graph of SIDE ("host" or
# "guest-agent") and lib/, nothing when there is none.
# A node is a module: a header and the .c file of the same name (or, for a .c file without one,
# the header whose name is its prefix: platform_linux.c implements platform.h), so "lima.c calls
# lima_dir.c, which calls back into lima.c" is the cycle lima -> lima_dir -> lima.
include_cycles() {
	(
		cd "$1" || exit 1
		find host guest-agent lib -name '*.[ch]' | sed 's/$/ -/'
	) >"$tmp/files"
	includes "$1" | cat "$tmp/files" - | awk -v side="^($2|lib)/" '
		$2 == "-" { have[$1] = 1; next }
		function module(p,    dir, stem, cut) {
			if (p in mod) return mod[p]
			dir = p; sub(/\/[^\/]*$/, "", dir)
			stem = p; sub(/^.*\//, "", stem); sub(/\.[ch]$/, "", stem)
			if (p ~ /\.c$/ && !((dir "/" stem ".h") in have)) {
				for (cut = stem; sub(/_[^_]*$/, "", cut);)
					if ((dir "/" cut ".h") in have) { stem = cut; break }
			}
			return mod[p] = dir "/" stem
		}
		$1 ~ side && $2 ~ side {
			a = module($1); b = module($2)
			if (a != b) print a, b
		}' >"$tmp/edges"
	# tsort names the files of a loop on stderr (GNU: "input contains a loop", BSD: "cycle in data").
	tsort "$tmp/edges" 2>&1 >/dev/null | cat
}

# exit_calls ROOT: up to five "FILE:LINE:text" lines of host/ under ROOT, main.c aside, that call
# exit() or vmc_die() (or a die() of old). A forked child's _exit() is no exit below main: the
# child is its own process, and the command still returns its code.
exit_calls() {
	(
		cd "$1" || exit 1
		find host -name '*.c' ! -path host/commands/main.c | sort |
			xargs grep -nE '(^|[^_[:alnum:]])(vmc_die|die|exit)[[:space:]]*\(' | head -n 5
	)
}

host_all=$(find host -name '*.[ch]' | sort)
logic=$(find host -name '*.[ch]' ! -name 'platform_*.c' | sort)
agent_all=$(find guest-agent -name '*.[ch]' | sort)

# shellcheck disable=SC2086 # file lists
{
	rule "no #ifdef on the OS outside host/platform/platform_*.c" \
		'^#[[:space:]]*(if|ifdef|ifndef|elif).*(__APPLE__|__MACH__|__linux__|__FreeBSD__)' $logic
	rule "host/ includes no guest-agent/ code" '#include[[:space:]]*"[^"]*guest-agent/' $host_all
	rule "guest-agent/ includes no host/ code" \
		'#include[[:space:]]*"[^"]*(host/|commands/|platform/|clients/|measure/|autostop/)' $agent_all
}

hits=$(exit_calls .)
if [ -z "$hits" ]; then ok "no exit() or vmc_die() below main (commands return their exit code)"; else
	fail "exit() or vmc_die() below main (commands return their exit code): $hits"
fi

order="commands -> autostop, measure -> clients -> platform -> lib"
hits=$(room_order .)
if [ -z "$hits" ]; then ok "rooms include down the order $order"; else
	fail "rooms include against the order $order: $hits"
fi
for side in host guest-agent; do
	loop=$(include_cycles . $side)
	if [ -z "$loop" ]; then ok "the include graph of $side/ and lib/ has no cycle"; else
		fail "the include graph of $side/ and lib/ has a cycle: $loop"
	fi
done

# The checks catch what they are for: a copy of the tree with one bad include (or one exit below
# main) planted in it.
plant() {
	rm -rf "$tmp/tree"
	mkdir -p "$tmp/tree"
	cp -R host guest-agent lib "$tmp/tree/"
}
plant
printf '#include "measure/progress.h"\n' >"$tmp/tree/host/clients/planted.c"
case $(room_order "$tmp/tree") in
*"host/clients/planted.c includes host/measure/progress.h: clients is below measure"*)
	ok "a client including measure/ breaks the room order" ;;
*) fail "a client including measure/ went unnoticed: $(room_order "$tmp/tree")" ;;
esac
plant
printf '#include "clients/lima.h"\n' >"$tmp/tree/lib/planted.c"
case $(room_order "$tmp/tree") in
*"lib/planted.c includes host/clients/lima.h: lib is below clients"*)
	ok "lib/ including a host room breaks the room order" ;;
*) fail "lib/ including a host room went unnoticed: $(room_order "$tmp/tree")" ;;
esac
plant
printf '#include "autostop/state.h"\n' >>"$tmp/tree/host/measure/timeline.h"
case $(room_order "$tmp/tree") in
*"host/measure/timeline.h includes host/autostop/state.h: measure and autostop are peers"*)
	ok "measure/ including autostop/ (peers) breaks the room order" ;;
*) fail "measure/ including autostop/ went unnoticed: $(room_order "$tmp/tree")" ;;
esac
plant
printf '#include "clients/lima.h"\n' >>"$tmp/tree/host/clients/lima_dir.c"
case $(include_cycles "$tmp/tree" host) in
*host/clients/lima*host/clients/lima_dir* | *host/clients/lima_dir*host/clients/lima*)
	ok "lima_dir.c including lima.h again (lima -> lima_dir -> lima) is a cycle" ;;
*) fail "lima_dir.c calling back into lima.c went unnoticed: $(include_cycles "$tmp/tree" host)" ;;
esac
plant
printf '#include "platform/platform.h"\n' >>"$tmp/tree/host/platform/timebase.h"
printf '#include "platform/timebase.h"\n' >>"$tmp/tree/host/platform/platform_linux.c"
case $(include_cycles "$tmp/tree" host) in
*host/platform/platform*host/platform/timebase* | *host/platform/timebase*host/platform/platform*)
	ok "platform_linux.c counts as platform.h's module (platform -> timebase -> platform)" ;;
*) fail "a cycle through platform_linux.c went unnoticed: $(include_cycles "$tmp/tree" host)" ;;
esac
plant
printf 'static void planted(void)\n{\n\tvmc_die(VMC_EXIT_FAILURE, "planted");\n}\n' \
	>"$tmp/tree/host/measure/planted.c"
case $(exit_calls "$tmp/tree") in
*"host/measure/planted.c:3:"*vmc_die*) ok "a vmc_die() call below main breaks the exit rule" ;;
*) fail "a vmc_die() call below main went unnoticed: $(exit_calls "$tmp/tree")" ;;
esac
plant
printf 'int planted(void)\n{\n\texit(2);\n}\n' >"$tmp/tree/host/clients/planted.c"
case $(exit_calls "$tmp/tree") in
*"host/clients/planted.c:3:"*exit*) ok "an exit() call below main breaks the exit rule" ;;
*) fail "an exit() call below main went unnoticed: $(exit_calls "$tmp/tree")" ;;
esac
suite_summary
