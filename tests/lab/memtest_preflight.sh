#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# memtest's pre-flight (issue 14) on a default lab VM (lab/vm start NAME --fpr: its root is RAM,
# its disk is /mnt/scratch): every precondition broken on its own is refused before the
# baseline, with the documented exit code, a message that says what to do and the verdicts as a
# JSON list, and leaves nothing behind (the VM still running, no file in the guest, no results
# directory). --check runs only the pre-flight. At the end, a run with the default fill
# directory succeeds by picking the disk. The Docker preconditions with a real dockerd are in
# memtest_docker.sh.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

jq_true() { # file expr: the expression holds for the JSON file
	jq -e "$2" "$1" >/dev/null
}
VMCOST=${VMCOST:-vmcost}
out=$LIMA_HOME/out
never=$LIMA_HOME/results-never-made
mkdir -p "$out"

lab_start pf --fpr

status_of() {
	limactl list --json "$1" | jq -r .status
}

# What a run could leave in the guest: the fill's places, /dev/shm, the scratch disk.
guest_files() {
	limactl shell pf sh -c 'find /dev/shm /mnt/scratch /tmp /var 2>/dev/null | sort'
}
guest_files >"$out/guest-before"
check "the guest listing works" grep -q '^/mnt/scratch/lost+found$' "$out/guest-before"

now() {
	awk '{ print $1 }' /proc/uptime
}

# refused NAME CODE WHAT-THE-MESSAGE-SAYS ARGS...: memtest is refused with CODE, names what
# to do, prints the verdicts (stderr table, stdout JSON list), and changes nothing. vmcost runs
# with $run_path as PATH when it is set.
refused() {
	name=$1 code=$2 says=$3
	shift 3
	t0=$(now)
	env PATH="${run_path:-$PATH}" "$VMCOST" memtest pf --yes --json --results "$never" "$@" \
		>"$out/$name.json" 2>"$out/$name.err" </dev/null
	rc=$?
	t1=$(now)
	took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	echo "  $name: refused in $took s"
	# A refusal comes from the checks alone, before anything is measured (issue: within 2 s).
	check "$name: refused within 2 s ($took s)" awk -v t="$took" 'BEGIN { exit !(t <= 2) }'
	check "$name: exit $code (got $rc)" [ "$rc" = "$code" ]
	check "$name: the message says \"$says\"" grep -q -- "$says" "$out/$name.err"
	check "$name: refused before the baseline" sh -c "! grep -q 'phase=' '$out/$name.err'"
	check "$name: the verdicts are a JSON list of six, with the error" jq_true "$out/$name.json" \
		"(.preflight | length == 6) and .error.code == $code"
	check "$name: the VM still runs" [ "$(status_of pf)" = Running ]
	guest_files >"$out/guest-after"
	check "$name: nothing left in the guest" cmp -s "$out/guest-before" "$out/guest-after"
	check "$name: no results directory made" [ ! -e "$never" ]
}

# verdict NAME CHECK STATUS [CODE]: the JSON list has that verdict.
verdict() {
	expr=".preflight[] | select(.check == \"$2\") | .status == \"$3\""
	[ -n "${4:-}" ] && expr="$expr and .exit_code == $4"
	check "$1: verdict $2 is $3${4:+ ($4)}" jq_true "$out/$1.json" "[$expr] | any"
}

# ---- --check: only the pre-flight, no --yes needed -------------------------------------------
t0=$(now)
"$VMCOST" memtest pf --check --json --results "$never" >"$out/check.json" 2>"$out/check.err" \
	</dev/null
rc=$?
t1=$(now)
echo "  --check took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
check "--check exits 0 (got $rc)" [ "$rc" = 0 ]
check "--check: six verdicts, none failed" jq_true "$out/check.json" \
	'(.preflight | length == 6) and ([.preflight[].status] | index("fail") == null)'
check "--check: the default fill directory (RAM here) gives way to the scratch disk" \
	jq_true "$out/check.json" '.preflight[1].message | test("^/mnt/scratch/vmcost-fill: ext4 .* the default /var/tmp/vmcost-fill cannot: it is on rootfs")'
check "--check: no run happened" sh -c "! grep -q 'phase=' '$out/check.err'"
"$VMCOST" memtest pf --check --results "$never" >"$out/check.txt" 2>&1 </dev/null
check "--check: a table for people" grep -q '^  ok    fill-dir     /mnt/scratch/vmcost-fill' \
	"$out/check.txt"
check "--check: the VM still runs" [ "$(status_of pf)" = Running ]

# ---- fill directory ---------------------------------------------------------------------------
refused ramdir 2 "--fill-dir /var/tmp/vmcost-fill cannot hold the fill: it is on rootfs" \
	--workload fill --fill-dir /var/tmp/vmcost-fill
check "ramdir: the message says what to do" grep -q 'pass --fill-dir DIR' "$out/ramdir.err"
verdict ramdir fill-dir fail 2
# The disk's own root holds lost+found, and memtest removes its fill directory afterwards.
refused fulldir 2 "holds 1 entry besides vmcost-fill" --workload fill --fill-dir /mnt/scratch
check "fulldir: lost+found is still there" limactl shell pf test -d /mnt/scratch/lost+found

# ---- tmpfs ------------------------------------------------------------------------------------
refused nottmpfs 2 "/mnt/scratch is on ext4 (/mnt/scratch), not a tmpfs" \
	--workload fill --tmpfs /mnt/scratch
# /run is a 64 MiB tmpfs here: SIZE 1G and the seed do not fit.
refused smalltmpfs 2 "/run has .* free, the fill of 1.00 GiB needs 1.06 GiB" \
	--workload fill --size 1G --tmpfs /run
refused bigsize 2 "more than 3/4 of the VM's 2.00 GiB" --workload fill --size 1600M
verdict bigsize tmpfs fail 2

# ---- pgbench ----------------------------------------------------------------------------------
refused nodocker 10 "has no sock/docker.sock: it runs no Docker" --workload pgbench
# A socket nobody answers on: dockerd down.
dead=$LIMA_HOME/pf/sock/docker.sock
socat "UNIX-LISTEN:$dead,unlink-close=0" /dev/null &
socat_pid=$!
lab_wait_until 10 test -S "$dead"
kill "$socat_pid" 2>/dev/null
wait "$socat_pid" 2>/dev/null
refused deaddocker 10 "dockerd is not answering" --workload pgbench
rm -f "$dead"

# ---- host memory ------------------------------------------------------------------------------
refused bigpressure 2 "--pressure 97.7 TiB does not fit" --workload fill --pressure 100000G
verdict bigpressure host-memory fail 2
refused tinycanary 2 "less than one page" --workload fill --canary 1k

# ---- stop permission --------------------------------------------------------------------------
chown nobody "$LIMA_HOME/pf"
refused otheruser 7 "is another user's" --workload fill
verdict otheruser stop fail 7
chown "$(id -u)" "$LIMA_HOME/pf"
# Without limactl nothing can stop the VM (nor reach the guest): the instance is read from its
# directory, the pre-flight refuses on the host, the guest not asked.
run_path=$(printf '%s' "$PATH" | sed "s|$LAB_TEST_REPO/lab/bin:||")
refused nolimactl 1 "limactl is not on PATH" --workload fill
run_path=""
verdict nolimactl stop fail 1
verdict nolimactl tmpfs skipped

# ---- results ----------------------------------------------------------------------------------
touch "$LIMA_HOME/a-file"
refused results 2 "a-file is not a directory" --workload fill --results "$LIMA_HOME/a-file/x"
verdict results results fail 2
# Permission bits do not stop root, and access() says yes to /proc: only making it tells.
refused procnope 1 "--results /proc/nope is not writable (/proc/nope: " --workload fill \
	--results /proc/nope
verdict procnope results fail 1
check "procnope: the guest was not asked" grep -q "so the guest was not asked" "$out/procnope.err"
# A new results directory is made and tried, then removed again.
refused newresults 2 "more than 3/4" --workload fill --size 1600M --results "$never/a/b"
verdict newresults results pass

# ---- a run with the defaults picks the disk (and still cleans up) -------------------------------
"$VMCOST" memtest pf --yes --workload fill --size 256M --pressure none --json \
	--results "$LIMA_HOME/results" >"$out/run.json" 2>"$out/run.err" </dev/null
rc=$?
check "a run with the default fill directory succeeds (got $rc)" [ "$rc" = 0 ]
check "it wrote the files to the scratch disk" jq_true "$out/run.json" \
	'.settings.workload_text | test("files in /mnt/scratch/vmcost-fill")'
check "the run's document keeps the verdicts" jq_true "$out/run.json" '.preflight | length == 6'
check "the pre-flight came before the baseline" \
	sh -c "head -n 1 '$out/run.err' | grep -q 'pre-flight'"
check "the instance is stopped afterwards" [ "$(status_of pf)" = Stopped ]

summary
