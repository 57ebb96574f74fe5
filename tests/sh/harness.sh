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


suite green "3 passed, 0 failed, 0 skipped"
suite skips "2 passed, 0 failed, 1 skipped"
suite old "4 passed, 0 failed"
suite red "1 passed, 1 failed, 0 skipped"
suite none "0 passed, 0 failed, 0 skipped"
suite onlyskips "0 passed, 0 failed, 2 skipped"
suite silent "hello"

expect "run-suite: a green suite passes" 0 "$here/run-suite" "$tmp/logs" green "$tmp/green"
has "run-suite: prints all three counts" "$tmp/out" "-- green: 3 passed, 0 failed, 0 skipped"
expect "run-suite: skips alone do not fail a suite" 0 "$here/run-suite" "$tmp/logs" skips "$tmp/skips"
expect "run-suite: a line without the skipped count means 0 skipped" 0 "$here/run-suite" "$tmp/logs" old "$tmp/old"
has "run-suite: ... and says so" "$tmp/out" "-- old: 4 passed, 0 failed, 0 skipped"
expect "run-suite: a failed test fails the suite" 1 "$here/run-suite" "$tmp/logs2" red "$tmp/red"
expect "run-suite: nothing ran fails the suite" 1 "$here/run-suite" "$tmp/logs2" none "$tmp/none"
expect "run-suite: no summary line fails the suite" 1 "$here/run-suite" "$tmp/logs2" silent "$tmp/silent"
expect "run-suite: a suite that could only skip passes" 0 env -u VMCOST_NO_SKIPS "$here/run-suite" \
	"$tmp/logs3" onlyskips "$tmp/onlyskips"
has "run-suite: ... and says so" "$tmp/out" "-- onlyskips: every test skipped here"
expect "run-suite: ... but fails under VMCOST_NO_SKIPS=1" 1 env VMCOST_NO_SKIPS=1 "$here/run-suite" \
	"$tmp/logs4" onlyskips "$tmp/onlyskips"
"$here/run-suite" "$tmp/logs3" green "$tmp/green" >/dev/null
expect "total: a suite that only skipped passes the total" 0 env -u VMCOST_NO_SKIPS "$here/total" "$tmp/logs3"
has "total: ... and names it" "$tmp/out" "skipped 2: onlyskips.log"
expect "total: ... not under VMCOST_NO_SKIPS=1" 1 env VMCOST_NO_SKIPS=1 "$here/total" "$tmp/logs3"

expect "total: green and skipping suites pass" 0 env -u VMCOST_NO_SKIPS "$here/total" "$tmp/logs"
has "total: sums all three counts" "$tmp/out" "9 passed, 0 failed, 1 skipped"
has "total: names the suite that skipped" "$tmp/out" "skipped 1: skips.log"
expect "total: VMCOST_NO_SKIPS=1 turns a skip into a failure" 1 env VMCOST_NO_SKIPS=1 "$here/total" "$tmp/logs"
expect "total: a failed suite fails the total" 1 "$here/total" "$tmp/logs2"
has "total: names the failed suite" "$tmp/out" "failed suite: red.log"
rm -rf "$tmp/empty" && mkdir "$tmp/empty"
expect "total: no suite at all fails" 1 "$here/total" "$tmp/empty"

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
