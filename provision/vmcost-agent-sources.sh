#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost-agent-sources.sh DIR: the C sources vmcost-agent is built from, one path a line relative
# to DIR (a checkout, or the guest's /usr/local/src/vmcost), sorted: every guest-agent/*.[ch], and
# each lib/ module (NAME.h and its NAME.c) that one of them includes, or that a lib/ file already
# taken includes, and so on. lib/ code that only vmcost uses on the host (its statistics, the
# memory-settle rule) stays out of the guest. templates/update-embedded packs these files and
# provision/vmcost-agent.sh copies them from a checkout, so the tarball and a copy hold the same;
# provision/build-vmcost-agent.sh compiles what they hold. Busybox sh and its applets suffice.
set -eu
if [ $# -ne 1 ]; then
	echo "usage: vmcost-agent-sources.sh DIR" >&2
	exit 2
fi
cd "$1"
taken=" "
todo=""
for f in guest-agent/*.c guest-agent/*.h; do
	[ -f "$f" ] || continue
	taken="$taken$f "
	todo="$todo $f"
done
if [ -z "$todo" ]; then
	echo "vmcost-agent-sources.sh: no guest-agent/*.[ch] in $1" >&2
	exit 1
fi
while [ -n "$todo" ]; do
	next=""
	for f in $todo; do
		# #include "NAME.h" without a directory; an agent file finds its own headers first.
		names=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)\.h".*/\1/p' "$f")
		for name in $names; do
			case $f in guest-agent/*) [ ! -f "guest-agent/$name.h" ] || continue ;; esac
			for m in "lib/$name.h" "lib/$name.c"; do
				[ -f "$m" ] || continue
				case $taken in *" $m "*) continue ;; esac
				taken="$taken$m "
				next="$next $m"
			done
		done
	done
	todo=$next
done
# shellcheck disable=SC2086 # the list, one path a word
printf '%s\n' $taken | LC_ALL=C sort
