#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# What the Makefile promises about itself, checked from make's dry runs and one real compile:
# -Werror is ours only (plain `make` has none, make check and the sanitizer builds have it, and
# objects are compiled again when that changes); make check runs no suite that needs the real
# Lima (its answer must not depend on `make lima`); a stage that fails leaves a log naming the
# command, make's error and its last lines (tests/run-stage), and the total repeats which.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
unset WERROR

# compiles FILE: the compiler lines of a dry run, ours only: llhttp's C sources (Debian ships them,
# not a library: see the Makefile) are another project's code, built with their own warnings off.
compiles() {
	grep -E ' -c [^ ]+\.c ' "$1" | grep -v ' -c [^ ]*/llhttp/[a-z]*\.c '
}

# ---- -Werror ---------------------------------------------------------------------------------
make -n -B B="$tmp/b" >"$tmp/plain.txt" 2>&1
n=$(compiles "$tmp/plain.txt" | wc -l)
w=$(compiles "$tmp/plain.txt" | grep -c -- '-Werror')
if [ "$n" -gt 0 ] && [ "$w" = 0 ]; then
	ok "plain make: $n compiler lines, none with -Werror"
else
	fail "plain make: $w of $n compiler lines have -Werror"
fi

make -n -B B="$tmp/b" WERROR=-Werror host/vmcost >"$tmp/werror.txt" 2>&1
n=$(compiles "$tmp/werror.txt" | wc -l)
w=$(compiles "$tmp/werror.txt" | grep -c -- '-Werror')
if [ "$n" -gt 0 ] && [ "$w" = "$n" ]; then ok "make WERROR=-Werror: every compiler line has it"; else
	fail "make WERROR=-Werror: $w of $n compiler lines have -Werror"
fi

make -n -B B="$tmp/b" "$tmp/b/asan/vmcost" >"$tmp/asan.txt" 2>&1
n=$(compiles "$tmp/asan.txt" | wc -l)
w=$(compiles "$tmp/asan.txt" | grep -c -- '-Werror')
if [ "$n" -gt 0 ] && [ "$w" = "$n" ]; then ok "the ASan+UBSan build has -Werror without being asked"; else
	fail "the ASan+UBSan build: $w of $n compiler lines have -Werror"
fi

# make check's sub-makes print what they would build; its recipe runs (dry) to the end.
make -n -B B="$tmp/c" check >"$tmp/check.txt" 2>&1
for kind in rel asan musl; do
	n=$(compiles "$tmp/check.txt" | grep -c -- "-o $tmp/c/$kind/")
	w=$(compiles "$tmp/check.txt" | grep -- "-o $tmp/c/$kind/" | grep -c -- '-Werror')
	if [ "$(uname -s)" != Linux ] && [ "$kind" = musl ]; then
		continue
	elif [ "$n" -gt 0 ] && [ "$w" = "$n" ]; then
		ok "make check: every $kind compiler line ($n) has -Werror"
	else
		fail "make check: $w of $n $kind compiler lines have -Werror"
	fi
done

# One real object: built plainly, it is up to date for a plain make and out of date for -Werror.
obj=$tmp/b/rel/lib/units.o
make B="$tmp/b" "$obj" >"$tmp/build1.txt" 2>&1
make B="$tmp/b" "$obj" >"$tmp/build2.txt" 2>&1
make B="$tmp/b" WERROR=-Werror "$obj" >"$tmp/build3.txt" 2>&1
if [ -f "$obj" ] && ! grep -q 'lib/units.c' "$tmp/build2.txt" && grep -q 'lib/units.c' "$tmp/build3.txt"; then
	ok "an object a plain make built is compiled again when -Werror is asked for"
else
	fail "rebuild on -Werror: $(cat "$tmp/build1.txt" "$tmp/build2.txt" "$tmp/build3.txt")"
fi

# ---- make check and the real Lima ----------------------------------------------------------------
if grep -Eq 'run-suite [^ ]+ lima/' "$tmp/check.txt"; then
	fail "make check runs real-Lima suites: $(grep -Eo 'run-suite [^ ]+ lima/[^ ]+' "$tmp/check.txt")"
else
	ok "make check runs no tests/lima suite (they are make lima-check's)"
fi
make -n -B B="$tmp/b" lima-check >"$tmp/lima.txt" 2>&1
if grep -q 'tests/lima/run-all' "$tmp/lima.txt"; then
	ok "make lima-check runs tests/lima/run-all (every tests/lima suite)"
else
	fail "make lima-check: $(cat "$tmp/lima.txt")"
fi

# ---- a failed stage's log --------------------------------------------------------------------
mkdir -p "$tmp/stage"
cat >"$tmp/stage/Makefile" <<'EOF'
broken:
	@echo compiling something; echo "last words of the failure"; false
EOF
tests/run-stage "$tmp/logs" demo make -C "$tmp/stage" --no-print-directory broken >"$tmp/stage.out" 2>&1
rc=$?
log=$tmp/logs/stage-demo.log
if [ "$rc" != 0 ] && [ -f "$log" ]; then ok "tests/run-stage fails with its command and writes stage-demo.log"; else
	fail "tests/run-stage: exit $rc, log $(ls "$tmp/logs" 2>&1)"
fi
if head -n 1 "$log" 2>/dev/null | grep -q "stage demo failed: make -C $tmp/stage --no-print-directory broken (exit 2)" &&
	grep -q '\*\*\* \[Makefile:2: broken\] Error 1' "$log" && grep -q 'last words of the failure' "$log"; then
	ok "the stage log names the command, make's error line and the last lines"
else
	fail "stage log: $(cat "$log" 2>/dev/null)"
fi
if grep -q 'last words of the failure' "$tmp/stage.out"; then ok "the stage's output is shown as it runs"; else
	fail "run-stage output: $(cat "$tmp/stage.out")"
fi
tests/total "$tmp/logs" >"$tmp/total.txt" 2>&1
if grep -q '^failed suite: stage-demo.log' "$tmp/total.txt" &&
	grep -q "^ *stage demo failed: make -C" "$tmp/total.txt" && grep -q '^0 passed, 1 failed' "$tmp/total.txt"; then
	ok "tests/total counts the failed stage as one failure and says which command failed"
else
	fail "tests/total: $(cat "$tmp/total.txt")"
fi
printf 'all:\n\t@echo "2 passed, 0 failed, 0 skipped"\n' >"$tmp/stage/Makefile"
if tests/run-stage "$tmp/logs2" fine make -C "$tmp/stage" >/dev/null 2>&1 && [ ! -e "$tmp/logs2/stage-fine.log" ]; then
	ok "a stage that passes leaves no stage log"
else
	fail "a passing stage: $(ls "$tmp/logs2" 2>&1)"
fi
suite_summary
