# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The house test-suite helpers for shell suites (tests/sh, tests/lab): count with ok and fail,
# end with suite_summary, which prints "N passed, N failed" and is true only when nothing failed
# and something ran.

SUITE_PASSED=0
SUITE_FAILED=0

ok() {
	SUITE_PASSED=$((SUITE_PASSED + 1))
	echo "ok   $*"
}

fail() {
	SUITE_FAILED=$((SUITE_FAILED + 1))
	echo "FAIL $*"
}

suite_summary() {
	echo "$SUITE_PASSED passed, $SUITE_FAILED failed"
	[ "$SUITE_FAILED" -eq 0 ] && [ "$SUITE_PASSED" -gt 0 ]
}
