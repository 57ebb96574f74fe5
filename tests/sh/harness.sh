#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The suite harness itself: tests/run-suite and tests/total count passed, failed and skipped
# tests, show skips, and fail where they must (a failure, no summary, nothing ran, or a skip
# under VMCOST_NO_SKIPS=1).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/suite.sh
. "$here/suite.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# suite NAME BODY: a one-line fake suite printing BODY.
suite() {
	printf '#!/bin/sh\nprintf "%%s\\n" "%s"\n' "$2" >"$tmp/$1"
	chmod +x "$tmp/$1"
}

expect_rc() { # what expected-rc cmd...
	what=$1 want=$2
	shift 2
	"$@" >"$tmp/out" 2>&1
	got=$?
	if [ "$got" = "$want" ]; then ok "$what"; else fail "$what (exit $got, expected $want: $(tr '\n' ' ' <"$tmp/out"))"; fi
}

expect_out() { # what text
	if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else fail "$1 (no \"$2\" in: $(tr '\n' ' ' <"$tmp/out"))"; fi
}

suite green "3 passed, 0 failed, 0 skipped"
suite skips "2 passed, 0 failed, 1 skipped"
suite old "4 passed, 0 failed"
suite red "1 passed, 1 failed, 0 skipped"
suite none "0 passed, 0 failed, 0 skipped"
suite silent "hello"

expect_rc "run-suite: a green suite passes" 0 "$here/run-suite" "$tmp/logs" green "$tmp/green"
expect_out "run-suite: prints all three counts" "-- green: 3 passed, 0 failed, 0 skipped"
expect_rc "run-suite: skips alone do not fail a suite" 0 "$here/run-suite" "$tmp/logs" skips "$tmp/skips"
expect_rc "run-suite: a line without the skipped count means 0 skipped" 0 "$here/run-suite" "$tmp/logs" old "$tmp/old"
expect_out "run-suite: ... and says so" "-- old: 4 passed, 0 failed, 0 skipped"
expect_rc "run-suite: a failed test fails the suite" 1 "$here/run-suite" "$tmp/logs2" red "$tmp/red"
expect_rc "run-suite: nothing ran fails the suite" 1 "$here/run-suite" "$tmp/logs2" none "$tmp/none"
expect_rc "run-suite: no summary line fails the suite" 1 "$here/run-suite" "$tmp/logs2" silent "$tmp/silent"

expect_rc "total: green and skipping suites pass" 0 env -u VMCOST_NO_SKIPS "$here/total" "$tmp/logs"
expect_out "total: sums all three counts" "9 passed, 0 failed, 1 skipped"
expect_out "total: names the suite that skipped" "skipped 1: skips.log"
expect_rc "total: VMCOST_NO_SKIPS=1 turns a skip into a failure" 1 env VMCOST_NO_SKIPS=1 "$here/total" "$tmp/logs"
expect_rc "total: a failed suite fails the total" 1 "$here/total" "$tmp/logs2"
expect_out "total: names the failed suite" "failed suite: red.log"
rm -rf "$tmp/empty" && mkdir "$tmp/empty"
expect_rc "total: no suite at all fails" 1 "$here/total" "$tmp/empty"

# The shell helpers: skip counts and shows its reason; the summary has three counts.
out=$(
	SUITE_PASSED=0 SUITE_FAILED=0 SUITE_SKIPPED=0
	ok a >/dev/null
	skip "b: no widget here"
	suite_summary
)
case $out in
*"skip b: no widget here"*"1 passed, 0 failed, 1 skipped") ok "suite.sh: skip is shown and counted" ;;
*) fail "suite.sh: skip is shown and counted (got: $out)" ;;
esac
suite_summary
