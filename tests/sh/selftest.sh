#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost selftest for real on this machine: every reading against its workload (footprint, CPU
# time, bytes written, host free memory pass on Linux; the macOS-only readings say they do not
# apply), the same through --json, and its bad command lines. HOST_BIN selects the binary.
set -u
cd "$(dirname "$0")/../.." || exit 1
vmcost=$(pwd)/${HOST_BIN:-host/vmcost}
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

"$vmcost" selftest >"$tmp/out" 2>"$tmp/err"
rc=$?
# Host free memory is the one reading other processes move too: when it alone failed, saying the
# machine was not quiet, the run is not held against the readings (its own check is below).
noisy=0
if [ "$rc" -eq 1 ] && grep -q '^7 readings: 4 passed, 1 failed' "$tmp/out" &&
	grep -q 'retry on a quiet machine' "$tmp/out"; then
	noisy=1
fi
if [ "$rc" -eq 0 ] || [ "$noisy" = 1 ]; then ok "selftest passes here (exit $rc, noisy host memory: $noisy)"; else
	fail "selftest exit $rc: $(cat "$tmp/out" "$tmp/err")"
fi
if grep -q '^7 readings: [0-9]* passed, [0-9]* failed, 2 not applicable on linux$' "$tmp/out" &&
	{ [ "$noisy" = 1 ] || grep -q ', 0 failed,' "$tmp/out"; }; then
	ok "summary line: 7 readings, 2 not applicable"
else
	fail "summary line: $(tail -n 1 "$tmp/out")"
fi
for reading in "footprint" "cpu time" "disk written"; do
	if grep -E "^$reading +.* pass$" "$tmp/out" >/dev/null; then ok "human: $reading passes"; else
		fail "human: no passing '$reading' line in: $(cat "$tmp/out")"
	fi
done

"$vmcost" selftest --json --size 32MiB >"$tmp/json" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 0 ] || jq -e '[.results[] | select(.verdict == "fail") | .reading] == ["host free memory"]' "$tmp/json" >/dev/null 2>&1; then
	ok "--json exit $rc (only a noisy host memory reading may fail)"
else
	fail "--json exit $rc: $(cat "$tmp/err")"
fi
check_json() { # NAME FILTER: the --json document satisfies FILTER
	json "json: $1" "$tmp/json" "$2"
}
check_json "os is linux, 7 results" '.os == "linux" and (.results | length) == 7'
check_json "both footprint checks pass with 32 MiB" \
	'[.results[] | select(.reading == "footprint") | .verdict] == ["pass", "pass"]'
check_json "the footprint rise expected 32 MiB" \
	'.results[0].expected == 33554432 and .results[0].unit == "bytes"'
check_json "cpu time measured within 25 ms of the child's clock" \
	'(.results[] | select(.reading == "cpu time")) | (.measured - .expected | fabs) < 25e6'
check_json "host free memory: the child held 256 MiB (8 x --size)" \
	'(.results[] | select(.reading == "host free memory")) | .expected == -268435456'
check_json "tick clock and vz search do not apply, measured null" \
	'[.results[] | select(.verdict == "n/a") | .measured] == [null, null]'
check_json "counts add up" '.passed + .failed + .not_applicable == 7 and .failed <= 1'

"$vmcost" selftest --size 1KiB >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q -- '--size must be between' "$tmp/err"; then
	ok "--size below 4 MiB: exit 2, says the range"
else
	fail "--size 1KiB: exit $rc, $(cat "$tmp/err")"
fi
"$vmcost" selftest extra >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ]; then ok "an argument: exit 2"; else fail "an argument: exit $rc"; fi
"$vmcost" selftest --dir "$tmp/missing" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "could not run: writing in $tmp/missing (choose another directory with --dir): No such file or directory" "$tmp/out"; then
	ok "--dir that does not exist: exit 1, the disk line says why and what to do"
else
	fail "--dir missing: exit $rc, $(cat "$tmp/out")"
fi

suite_summary
