# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The house test-suite helpers for shell suites (tests/sh, tests/lab, tests/lima): count with ok,
# fail and skip, end with suite_summary, which prints "N passed, N failed, N skipped" and is true
# only when nothing failed and something ran. A path that cannot run here is a skip with its
# reason, never a silent pass.

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
	[ "$SUITE_FAILED" -eq 0 ] && [ "$SUITE_PASSED" -gt 0 ]
}
