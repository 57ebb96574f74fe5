#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/lab/run-lanes on fake suites: two lanes overlap, memtest_docker's image is built beside
# them, memtest waits until both are done and runs alone, a failing suite fails the run without
# stopping the others, each suite's output is printed in one piece and logged where tests/total
# finds it, TERM reaches the running suite, and a bad VMCOST_LAB_LANES is refused before
# anything runs.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
suites=$tmp/suites
mkdir "$suites"

# fake NAME SECONDS [fail]: a suite that logs when it starts and ends (in ms), prints three lines
# with pauses between them (so interleaving would show), and passes or fails.
fake() {
	cat >"$suites/$1.sh" <<EOF
#!/bin/sh
echo "start $1 \$(date +%s%N | cut -c1-13)" >>"$tmp/events"
echo "$1 line 1"
sleep $(awk -v s="$2" 'BEGIN { print s / 2 }')
echo "$1 line 2"
sleep $(awk -v s="$2" 'BEGIN { print s / 2 }')
echo "$1 line 3"
echo "end $1 \$(date +%s%N | cut -c1-13)" >>"$tmp/events"
if [ "${3:-}" = fail ]; then echo "0 passed, 1 failed, 0 skipped"; exit 1; fi
echo "3 passed, 0 failed, 0 skipped"
EOF
	chmod +x "$suites/$1.sh"
}
# Seconds long enough that starting a suite (a few processes, slow on a busy machine) stays small
# beside them: the order checks below have 1.5 s of slack.
fake autostop 6
fake lab_instance 3
fake memtest_docker 2
fake agent_trim 2 fail
fake memtest 1
# The image memtest_docker needs: built in the background from the start.
cat >"$suites/memtest-pg-image" <<EOF
#!/bin/sh
echo "start pgimage \$(date +%s%N | cut -c1-13)" >>"$tmp/events"
echo "nice pgimage \$(nice)" >>"$tmp/events"
sleep 1
echo "end pgimage \$(date +%s%N | cut -c1-13)" >>"$tmp/events"
EOF
chmod +x "$suites/memtest-pg-image"
printf '# not a suite: not executable\n' >"$suites/lib.sh"

# at KIND NAME: the time of that event
at() { awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3 }' "$tmp/events"; }

VMCOST_LAB_SUITE_DIR=$suites tests/lab/run-lanes "$tmp/logs" >"$tmp/out" 2>&1
rc=$?
if [ "$rc" = 1 ]; then ok "a failing suite makes the run fail (exit 1)"; else fail "exit $rc"; fi
for s in autostop lab_instance memtest_docker agent_trim memtest; do
	if [ -n "$(at end "$s")" ]; then ok "$s ran to its end"; else fail "$s did not run: $(cat "$tmp/out")"; fi
done
if [ -z "$(at start lib)" ] && ! grep -q 'lab/lib' "$tmp/out"; then ok "a file that is not executable is not a suite"; else
	fail "lib.sh ran"
fi
# autostop (6 s) and lab_instance (3 s) start together in two lanes.
a=$(at start autostop) b=$(at start lab_instance)
if [ -n "$a" ] && [ -n "$b" ] && [ $((a > b ? a - b : b - a)) -lt 1500 ]; then
	ok "the two longest suites start together (lanes)"
else
	fail "autostop started at $a, lab_instance at $b"
fi
# memtest_docker follows lab_instance in its lane, before autostop ends.
if [ "$(at start memtest_docker)" -ge "$(at end lab_instance)" ] &&
	[ "$(at start memtest_docker)" -lt "$(at end autostop)" ]; then
	ok "a lane takes the next suite as soon as it is free, longest first"
else
	fail "memtest_docker started at $(at start memtest_docker): $(cat "$tmp/events")"
fi
p=$(at start pgimage)
if [ -n "$p" ] && [ $((p - a)) -lt 1500 ] && [ $((p - a)) -gt -1500 ]; then
	ok "memtest_docker's image is built in the background from the start"
else
	fail "the image build started at ${p:-never}, autostop at $a"
fi
if [ "$(at nice pgimage)" -gt "$(nice)" ]; then ok "the image is built niced (a guest's boot comes first)"; else
	fail "the image build runs at niceness $(at nice pgimage), as the lanes ($(nice))"
fi
last_shared=$(for s in autostop lab_instance memtest_docker agent_trim; do at end "$s"; done | sort -n | tail -n 1)
if [ "$(at start memtest)" -ge "$last_shared" ]; then ok "memtest starts only after every lane is done"; else
	fail "memtest started at $(at start memtest), before $last_shared"
fi
# Each suite's three lines are printed together, between its run-suite header and summary.
for s in autostop lab_instance memtest_docker agent_trim; do
	if grep -A4 "^== lab/$s\$" "$tmp/out" | tr '\n' '|' |
		grep -q "^== lab/$s|$s line 1|$s line 2|$s line 3|"; then
		ok "$s: its output in one piece"
	else
		fail "$s output interleaved: $(cat "$tmp/out")"
	fi
done
if grep -q '^== lab/autostop started (lane [12])$' "$tmp/out"; then ok "it says when a suite starts and in which lane"; else
	fail "no start line: $(head -n 3 "$tmp/out")"
fi
if grep -q '^-- lab/agent_trim: 0 passed, 1 failed, 0 skipped' "$tmp/out"; then ok "the failure is named"; else
	fail "no failure line for agent_trim"
fi
n=$(find "$tmp/logs/lab" -name '*.log' | wc -l)
if [ "$n" = 5 ]; then ok "five logs in LOGDIR/lab"; else fail "$n logs: $(ls -R "$tmp/logs")"; fi
out=$(tests/total "$tmp/logs")
case $out in
*"12 passed, 1 failed, 0 skipped"*) ok "tests/total counts them: 12 passed, 1 failed" ;;
*) fail "tests/total: $out" ;;
esac

# One lane: one suite at a time, in the longest-first order.
rm -f "$tmp/events"
VMCOST_LAB_LANES=1 VMCOST_LAB_SUITE_DIR=$suites tests/lab/run-lanes "$tmp/logs1" lab_instance autostop \
	>"$tmp/out1" 2>&1
if [ "$(at start lab_instance)" -ge "$(at end autostop)" ] && [ -z "$(at start pgimage)" ]; then
	ok "VMCOST_LAB_LANES=1: one after another, the named suites only, longest first (no image without memtest_docker)"
else
	fail "one lane: $(cat "$tmp/events")"
fi

# TERM to run-lanes reaches the running suite, whose own EXIT trap cleans up (stops its VMs).
mkdir "$tmp/slow"
cat >"$tmp/slow/autostop.sh" <<EOF
#!/bin/sh
trap 'echo cleaned >"$tmp/slow.cleaned"' EXIT
trap 'exit 130' TERM
echo started >"$tmp/slow.started"
sleep 60 &
wait
EOF
chmod +x "$tmp/slow/autostop.sh"
VMCOST_LAB_SUITE_DIR=$tmp/slow tests/lab/run-lanes "$tmp/logs3" >"$tmp/out3" 2>&1 &
lanes_pid=$!
i=0
while [ ! -f "$tmp/slow.started" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -TERM "$lanes_pid"
wait "$lanes_pid"
rc=$?
i=0
while [ ! -f "$tmp/slow.cleaned" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$rc" = 130 ] && [ -f "$tmp/slow.cleaned" ]; then
	ok "TERM: exit 130, and the running suite's own cleanup ran"
else
	fail "TERM: exit $rc, cleanup $(cat "$tmp/slow.cleaned" 2>/dev/null || echo 'did not run')"
fi

for bad in 0 two -1; do
	rm -f "$tmp/events"
	VMCOST_LAB_LANES=$bad VMCOST_LAB_SUITE_DIR=$suites tests/lab/run-lanes "$tmp/logs2" >"$tmp/out2" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q 'VMCOST_LAB_LANES must be a whole number' "$tmp/out2" && [ ! -f "$tmp/events" ]; then
		ok "VMCOST_LAB_LANES=\"$bad\": exit 2, nothing ran"
	else
		fail "VMCOST_LAB_LANES=\"$bad\": exit $rc, $(cat "$tmp/out2")"
	fi
done
suite_summary
