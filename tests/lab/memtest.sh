#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost memtest --workload fill on a free-page-reporting VM and on a VM without a balloon
# (issue 5, acceptance 1): the stop-time free gain is much smaller on the FPR VM (its memory came
# back before the stop) than on the no-balloon VM (the ratchet). The pressure's MADV_FREE canary
# is exercised both ways inside a memory cgroup, so the test never pushes this machine: enough
# pressure for the cgroup's limit -> conclusive; too little -> INCONCLUSIVE (exit 11). Also: an
# interrupted run leaves the VM running and the guest clean; --restart starts the VM again.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

jq_true() { # file expr: the expression holds for the JSON file
	jq -e "$2" "$1" >/dev/null
}
VMCOST=${VMCOST:-vmcost}
MIB=1048576
out=$LIMA_HOME/out
res=$LIMA_HOME/results
mkdir -p "$out"
FILL="--workload fill --size 1G --fill-dir /mnt/scratch/vmcost-fill"

# ---- a memory cgroup around vmcost (v1 memory controller here, v2 elsewhere) -------------------
memcg_create() { # name limit-bytes -> prints the cgroup directory
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		self=$(sed -n 's/^[0-9]*:[^:]*memory[^:]*:\(.*\)$/\1/p' /proc/self/cgroup)
		dir=/sys/fs/cgroup/memory${self%/}/$1-$$
		mkdir "$dir" && echo "$2" >"$dir/memory.limit_in_bytes" || return 1
	else
		self=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
		parent=/sys/fs/cgroup${self%/}
		echo +memory >"$parent/cgroup.subtree_control" 2>/dev/null || true
		dir=$parent/$1-$$
		mkdir "$dir" && echo "$2" >"$dir/memory.max" || return 1
	fi
	# Callers run this in $(...): the list goes to a file the cleanup reads.
	echo "$dir" >>"$out/cgroups"
	echo "$dir"
}

memcg_run() { # dir cmd... : runs cmd inside the cgroup
	dir=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir" "$@"
}

memtest_cleanup() {
	# A VM restarted by memtest --restart runs inside its cgroup: stop the VMs first.
	groups=$(cat "$out/cgroups" 2>/dev/null)
	lab_cleanup
	for d in $groups; do
		lab_wait_until 10 rmdir "$d" 2>/dev/null || echo "could not remove cgroup $d"
	done
}
trap memtest_cleanup EXIT

status_of() {
	limactl list --json "$1" | jq -r .status
}

files_written() { # base path
	[ -s "$1.md" ] && [ -s "$1.json" ] && [ -s "$1.svg" ]
}

# file jq-path -> integer; prints nothing and fails when the file or the figure is missing, so a
# comparison on a run that never happened cannot pass on a 0.
jnum() {
	jq -er "$2 | numbers | floor" "$1" 2>/dev/null
}

# Why a run failed: its pre-flight verdicts or its last words.
show_err() { # file
	echo "    ---- last lines of $1"
	tail -n 15 "$1" 2>/dev/null | sed 's/^/    /'
}

# The interrupted fill may still be on its way into the guest (the lab's command channel runs a
# command it received even when the caller has gone): wait until no fill runs and none is left.
# (vmcost-fil[l]: a pattern and globs that do not match this check's own command line.)
guest_fill_gone() {
	# shellcheck disable=SC2016 # run by the guest shell
	limactl shell mfpr sh -c '! grep -qs "vmcost-fil[l]" /proc/[0-9]*/cmdline &&
		for f in /dev/shm/vmcost-fil[l].* /mnt/scratch/vmcost-fil[l]; do [ ! -e "$f" ] || exit 1; done'
}

# run_memtest NAME OUT CGROUP ARGS...: memtest NAME inside the cgroup, JSON in $out/OUT.json.
# This machine is shared: when memtest reports that host memory moved for other reasons during
# the stop (result.noise.noisy), the instance is started again and the run repeated once.
run_memtest() {
	name=$1 file=$2 group=$3
	shift 3
	for attempt in 1 2; do
		memcg_run "$group" "$VMCOST" memtest "$name" --yes "$@" --json --results "$res" \
			>"$out/$file.json" 2>"$out/$file.err"
		rc=$?
		[ "$(jq -r '.result.noise.noisy // false' "$out/$file.json" 2>/dev/null)" = true ] ||
			return $rc
		[ $attempt = 2 ] && return $rc
		echo "note: $name: noisy host ($(jq -r .result.noise.reason "$out/$file.json")), once more"
		[ "$(status_of "$name")" = Running ] || limactl start "$name" >/dev/null 2>&1
	done
}

lab_start mfpr --fpr
lab_start mnob --no-balloon

# ---- 1. interrupted during the workload: exit 130, VM still running, guest clean ---------------
# shellcheck disable=SC2086 # FILL is a list of options
"$VMCOST" memtest mfpr --yes $FILL --pressure none --results none >/dev/null 2>"$out/int.err" &
pid=$!
if lab_wait_until 60 grep -q 'phase=workload event=start' "$out/int.err"; then
	sleep 4
	kill -INT "$pid"
fi
wait "$pid"
rc=$?
check "interrupted memtest exits 130 (got $rc)" [ "$rc" = 130 ]
check "interrupted memtest says the VM was not stopped" grep -q "was not stopped" "$out/int.err"
check "the instance is still running" [ "$(status_of mfpr)" = Running ]
# shellcheck disable=SC2016 # run by the guest shell
check "no fill files left in the guest" limactl shell mfpr sh -c \
	'for f in /dev/shm/vmcost-fill.* /mnt/scratch/vmcost-fill; do [ ! -e "$f" ] || exit 1; done'
t0=$(date +%s)
if lab_wait_until 120 guest_fill_gone && sleep 2 && guest_fill_gone; then
	ok "the interrupted fill has ended in the guest ($(($(date +%s) - t0 - 2)) s after memtest exited)"
else
	fail "the interrupted fill still runs in the guest: $(limactl shell mfpr sh -c \
		'ps; df -k /dev/shm; ls /dev/shm /mnt/scratch/vmcost-fill' 2>&1 | tr '\n' ' ')"
	lab_wait_until 300 guest_fill_gone
fi

# ---- 2. FPR VM, pressure that must reach reclaim inside a 2.5 GiB cgroup: conclusive ----------
cg=$(memcg_create vmcost-memtest-fpr $((2560 * MIB))) || fail "memory cgroup"
# shellcheck disable=SC2086
run_memtest mfpr fpr "$cg" $FILL --pressure 2G --hold 5 --canary 1G
rc=$?
check "FPR memtest exits 0 (got $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || show_err "$out/fpr.err"
check "FPR memtest JSON parses" jq_true "$out/fpr.json" .result
check "pressure in the cgroup is conclusive" \
	[ "$(jq -r .result.pressure "$out/fpr.json")" = conclusive ]
check "the canary was (partly) discarded" [ "$(jnum "$out/fpr.json" .result.canary_discarded)" -gt 0 ]
check "the FPR instance is stopped afterwards" [ "$(status_of mfpr)" = Stopped ]
check "the guest page cache was trimmed (>= 512 MiB freed)" \
	[ "$(jnum "$out/fpr.json" .result.guest_freed_by_trim)" -ge $((512 * MIB)) ]

# ---- 3. no-balloon VM, pressure too small for the cgroup: INCONCLUSIVE, exit 11; --restart ------
cg=$(memcg_create vmcost-memtest-nob $((2560 * MIB))) || fail "memory cgroup"
# shellcheck disable=SC2086
run_memtest mnob nob "$cg" $FILL --pressure 64M --hold 3 --canary 1G --restart
rc=$?
check "too little pressure exits 11 (got $rc)" [ "$rc" = 11 ]
[ "$rc" = 11 ] || show_err "$out/nob.err"
check "too little pressure is INCONCLUSIVE" \
	[ "$(jq -r .result.pressure "$out/nob.json")" = INCONCLUSIVE ]
check "no canary page was discarded" [ "$(jnum "$out/nob.json" .result.canary_discarded)" = 0 ]
check "the stop gain is still measured" jq_true "$out/nob.json" '.result.ram_freed_by_stop | numbers'
check "--restart: the no-balloon instance runs again" [ "$(status_of mnob)" = Running ]

# ---- 4. the ratchet and the return ---------------------------------------------------------------
fpr_gain=$(jnum "$out/fpr.json" .result.ram_freed_by_stop)
nob_gain=$(jnum "$out/nob.json" .result.ram_freed_by_stop)
fpr_fp=$(jnum "$out/fpr.json" .result.footprint_before_stop)
nob_fp=$(jnum "$out/nob.json" .result.footprint_before_stop)
if [ -z "$fpr_gain" ] || [ -z "$nob_gain" ] || [ -z "$fpr_fp" ] || [ -z "$nob_fp" ]; then
	missing="a run gave no figure (FPR: stop gain ${fpr_gain:-missing}, footprint ${fpr_fp:-missing};"
	missing="$missing no balloon: stop gain ${nob_gain:-missing}, footprint ${nob_fp:-missing})"
	fail "no-balloon VM: stopping frees >= 700 MiB (the ratchet): $missing"
	fail "FPR VM: stop gain less than half the no-balloon one: $missing"
	fail "FPR VM: footprint before stop less than half the no-balloon one: $missing"
else
	echo "stop gain: FPR $((fpr_gain / MIB)) MiB, no balloon $((nob_gain / MIB)) MiB;" \
		"footprint before stop: FPR $((fpr_fp / MIB)) MiB, no balloon $((nob_fp / MIB)) MiB"
	check "no-balloon VM: stopping frees >= 700 MiB (the ratchet)" [ "$nob_gain" -ge $((700 * MIB)) ]
	# The VM cannot give back more than it held: on this shared machine a gain above the
	# footprint (plus QEMU's own 64 MiB) came from another process, which memtest also flags as
	# noise.
	fpr_vm_gain=$fpr_gain
	if [ "$fpr_gain" -gt $((fpr_fp + 64 * MIB)) ]; then
		fpr_vm_gain=$((fpr_fp + 64 * MIB))
		echo "note: FPR stop gain $((fpr_gain / MIB)) MiB exceeds what the VM held; counted as $((fpr_vm_gain / MIB)) MiB"
	fi
	check "FPR VM: stop gain less than half the no-balloon one" [ $((fpr_vm_gain * 2)) -lt "$nob_gain" ]
	check "FPR VM: footprint before stop less than half the no-balloon one" \
		[ $((fpr_fp * 2)) -lt "$nob_fp" ]
fi

# ---- 5. results files ----------------------------------------------------------------------------
for name in fpr nob; do
	base=$(jq -r .files.markdown "$out/$name.json")
	base=${base%.md}
	check "$name: markdown, JSON and SVG written" files_written "$base"
	if command -v xmllint >/dev/null; then
		check "$name: the SVG is well-formed" xmllint --noout "$base.svg"
	else
		skip "$name: the SVG is well-formed: xmllint is missing (make deps)"
	fi
	check "$name: the markdown names the machine" grep -q '^- Machine: ' "$base.md"
	check "$name: the results JSON has the timeline" \
		jq_true "$base.json" '.timeline.samples | length > 10'
done

summary
