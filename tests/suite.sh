# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The house test-suite helpers for shell suites (tests/sh, tests/lab, tests/lima), defined here
# only: count with ok, fail and skip (or check, expect, has, json), end with suite_summary, which
# prints "N passed, N failed, N skipped" and is true only when nothing failed and something ran
# or said why it could not (tests/run-suite judges a suite that only skipped; or summary, which
# also exits). A path that cannot run here is a skip with its reason, never a
# silent pass.

SUITE_PASSED=0
SUITE_FAILED=0
SUITE_SKIPPED=0

ok() {
	SUITE_PASSED=$((SUITE_PASSED + 1))
	echo "ok   $*"
}

fail() {
	SUITE_FAILED=$((SUITE_FAILED + 1))
	echo "FAIL $*"
}

# skip WHY: one test that could not run here (names what is missing).
skip() {
	SUITE_SKIPPED=$((SUITE_SKIPPED + 1))
	echo "skip $*"
}

suite_summary() {
	echo "$SUITE_PASSED passed, $SUITE_FAILED failed, $SUITE_SKIPPED skipped"
	[ "$SUITE_FAILED" -eq 0 ] && [ "$((SUITE_PASSED + SUITE_SKIPPED))" -gt 0 ]
}

# summary: the last line of a suite that has nothing to clean up by hand: suite_summary, then
# exit with its status.
summary() {
	suite_summary
	exit $?
}

# check NAME CMD...: one test, passed when CMD succeeds.
check() {
	suite_name=$1
	shift
	if "$@"; then ok "$suite_name"; else fail "$suite_name"; fi
}

# The helpers below that run a command keep its stdout in $tmp/out and its stderr in $tmp/err,
# for has and json to read: a suite using them sets tmp to its scratch directory (mktemp -d).

# expect NAME CODE CMD...: CMD exits with CODE.
expect() {
	suite_name=$1 suite_code=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	suite_rc=$?
	if [ "$suite_rc" -eq "$suite_code" ]; then ok "$suite_name (exit $suite_code)"; else
		fail "$suite_name: exit $suite_rc, expected $suite_code; stderr: $(head -c 300 "$tmp/err")"
	fi
}

# expect_stderr NAME CODE TEXT CMD...: CMD exits with CODE and says TEXT on stderr (one test).
expect_stderr() {
	suite_name=$1 suite_code=$2 suite_text=$3
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	suite_rc=$?
	if [ "$suite_rc" -eq "$suite_code" ] && grep -qF -- "$suite_text" "$tmp/err"; then
		ok "$suite_name"
	else
		fail "$suite_name: exit $suite_rc, expected $suite_code with \"$suite_text\"; stderr: $(head -c 300 "$tmp/err")"
	fi
}

# has NAME FILE TEXT: FILE contains TEXT (a fixed string).
has() {
	if grep -qF -- "$3" "$2"; then ok "$1"; else fail "$1: no \"$3\" in $(head -c 300 "$2")"; fi
}

# json_true FILE FILTER: FILE holds JSON for which the jq FILTER is true. jq 1.6 -e exits 0 on an
# empty file, so emptiness is checked first (a command that printed nothing must not pass).
json_true() {
	[ -s "$1" ] && jq -e "$2" "$1" >/dev/null 2>&1
}

# json NAME FILE FILTER: json_true as a test.
json() {
	if json_true "$2" "$3"; then ok "$1"; else fail "$1: $(head -c 300 "$2")"; fi
}

# matches TEXT ERE: a line of TEXT matches the extended regular expression (for check).
matches() {
	printf '%s\n' "$1" | grep -Eq -- "$2"
}
