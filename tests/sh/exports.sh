#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# No dead code and no needless exports in host/, lib/ and guest-agent/: every function or variable
# a product object exports (nm) is used by another product object, or by its own file and a test
# (a parser kept apart from its I/O so tests reach it). Anything else is reported with what to
# do: nothing calls it (remove it), only tests call it (use it or remove it), or only its own
# file does (make it static). Calls from the platform layers this OS does not build and from the
# tools below count; the seams below are the exceptions, each with its reason and each checked
# to be still a seam. The last tests plant such exports to show they are caught.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
B=${B:-build}
CC=${CC:-cc}

# Exports only tests call, on purpose: the place a test puts its fakes in.
SEAMS='vmc_fs_set_root lib/procfs.c: the root of every /proc and /sys reader, a fake tree in tests
vmproc_set_ops host/clients/vmproc.c: the vz helper lookup, faked in tests (no macOS here)
agent_state_set_io guest-agent/state.c: the reads and writes of a trim pass, a fake /proc and /sys in tests'
# Programs of the repository besides vmcost and its agent that use lib/: their calls count.
TOOLS='tests/tools/template_lint.c'

if [ "$(uname -s)" != Linux ]; then
	skip "the export check reads GNU nm output and needs the agent, which builds on Linux only"
	suite_summary
	exit
fi

# The C sources the programs are made of, and where make puts their objects.
product_sources() {
	find host -name '*.c' ! -name 'platform_*.c' | sort
	echo host/platform/platform_linux.c
	find lib guest-agent -name '*.c' | sort
}

# comments_out FILE...: the files without comments (names in a comment are no use).
comments_out() {
	[ $# -eq 0 ] || "$CC" -fpreprocessed -dD -E -P "$@" 2>/dev/null
}

# findings PAIRS TESTS: PAIRS has "SOURCE OBJECT" lines, TESTS is the tests' sources without
# comments. One line per export that is not used as the header says, naming what to do.
findings() {
	# shellcheck disable=SC2046 # file lists
	{
		awk '{ print "obj", $2, $1 }' "$1"
		nm -A -g --defined-only $(awk '{ print $2 }' "$1") | awk '{ print "def", $0 }'
		nm -A -u $(awk '{ print $2 }' "$1") | awk '{ print "use", $0 }'
	} | awk '
		$1 == "obj" { src[$2] = $3; next }
		{ obj = $2; sub(/:.*/, "", obj); sym = $NF }
		$1 == "def" && NF == 4 && $3 ~ /^[TDBRCGSVW]$/ { def[sym] = src[obj] }
		$1 == "use" { users[sym] = users[sym] " " src[obj] }
		END {
			for (s in def) {
				if (s == "main") continue
				n = split(users[s], u, " "); other = 0
				for (i = 1; i <= n; i++) if (u[i] != def[s]) other = 1
				if (!other) print s, def[s]
			}
		}' | sort >"$tmp/candidates"
	# shellcheck disable=SC2046 # file list
	comments_out $(find host/platform -name 'platform_*.c' ! -name platform_linux.c) $TOOLS \
		>"$tmp/other-users.i"
	while read -r sym src; do
		own=$(comments_out "$src" | grep -ow -- "$sym" | wc -l)
		if grep -qw -- "$sym" "$tmp/other-users.i"; then
			continue
		elif grep -qw -- "$sym" "$2"; then
			[ "$own" -gt 1 ] || echo "$src: $sym: only tests call it: use it or remove it"
		elif [ "$own" -gt 1 ]; then
			echo "$src: $sym: only its own file uses it: make it static"
		else
			echo "$src: $sym: nothing calls it: remove it"
		fi
	done <"$tmp/candidates"
}

for tool in $TOOLS; do
	if [ -f "$tool" ]; then ok "tool $tool exists (its calls into lib/ count)"; else
		fail "tool $tool is gone: take it off TOOLS"
	fi
done
if ! make -s --no-print-directory B="$B" host agent >"$tmp/make.log" 2>&1; then
	fail "make host agent (the objects this check reads) failed: $(tail -n 5 "$tmp/make.log")"
	suite_summary
	exit
fi
product_sources | while read -r src; do echo "$src $B/rel/${src%.c}.o"; done >"$tmp/pairs"
# shellcheck disable=SC2046 # file lists
comments_out $(find tests/unit tests/fuzz -name '*.[ch]' | sort) >"$tmp/tests.i"

findings "$tmp/pairs" "$tmp/tests.i" >"$tmp/all-found"
echo "$SEAMS" >"$tmp/seams"
: >"$tmp/seam-lines"
while read -r sym src why; do
	line="${src%:}: $sym: only tests call it: use it or remove it"
	echo "$line" >>"$tmp/seam-lines"
	if grep -qxF "$line" "$tmp/all-found"; then ok "seam $sym (${src%:}): $why"; else
		fail "seam $sym (${src%:}) is no test-only export any more: take it off SEAMS"
	fi
done <"$tmp/seams"
grep -vxFf "$tmp/seam-lines" "$tmp/all-found" >"$tmp/found"
for dir in host lib guest-agent; do
	hits=$(grep "^$dir/" "$tmp/found")
	if [ -z "$hits" ]; then ok "every export of $dir/ is used beyond its own file"; else
		fail "exports of $dir/ that should not be: $(echo; echo "$hits")"
	fi
done

# Planted: a copy of the objects plus one file exporting what nothing, only its own file, or
# only a test uses.
mkdir -p "$tmp/plant/host/clients"
cat >"$tmp/plant/host/clients/planted.c" <<'EOF'
int planted_unused(void) { return 1; }
int planted_local(void) { return 2; }
int planted_tested(void) { return planted_local(); }
EOF
"$CC" -c -o "$tmp/plant/planted.o" "$tmp/plant/host/clients/planted.c"
cp "$tmp/pairs" "$tmp/plant/pairs"
echo "$tmp/plant/host/clients/planted.c $tmp/plant/planted.o" >>"$tmp/plant/pairs"
{
	cat "$tmp/tests.i"
	echo "static int use(void) { return planted_tested(); }"
} >"$tmp/plant/tests.i"
findings "$tmp/plant/pairs" "$tmp/plant/tests.i" | sed "s|^$tmp/plant/||" >"$tmp/plant/found"
for want in "planted_unused: nothing calls it: remove it" \
	"planted_local: only its own file uses it: make it static" \
	"planted_tested: only tests call it: use it or remove it"; do
	if grep -qF "host/clients/planted.c: $want" "$tmp/plant/found"; then ok "planted: $want"; else
		fail "a planted export went unreported (want \"$want\"): $(cat "$tmp/plant/found")"
	fi
done
suite_summary
