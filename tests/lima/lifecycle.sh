#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lima-check: last
# What needs the real instance stopped and started: the README's Linux-host recipe literally
# (QEMU_SYSTEM_X86_64 adding -device virtio-balloon-pci,free-page-reporting=on, through the TCG
# wrapper): 1 GiB freed in the guest comes back to the host (>= 80 % within 30 s), and without the
# device it does not (the ratchet); vmcost memtest both ways with a real `limactl stop`; the
# README's exit codes for a stopped instance and a broken one (its real hostagent killed).
# Runs after every other suite (it stops the instance) and leaves it stopped.
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"
lima_init

GIB_KB=1048576
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"; lima_cleanup' EXIT

rc() {
	"$@" >/dev/null 2>&1
	echo $?
}

qemu_rss_kb() {
	awk '/^VmRSS:/ {print $2}' "/proc/$(lima_qemu_pid)/status"
}

# free_one_gib: fills 1 GiB of a guest tmpfs and deletes it; prints "before peak low" (QEMU's
# VmRSS in KiB before the fill, right after it, and its lowest over the 30 s after the delete).
free_one_gib() {
	lima_shell sudo sh -c 'sync; echo 3 >/proc/sys/vm/drop_caches; mkdir -p /mnt/vmcost-fill &&
		mount -t tmpfs -o size=1100m vmcost-fill /mnt/vmcost-fill' || return 1
	sleep 10 # whatever reporting returns after the drop_caches, before the baseline
	before=$(qemu_rss_kb)
	lima_shell sudo dd if=/dev/zero of=/mnt/vmcost-fill/x bs=1M count=1024 2>/dev/null || return 1
	peak=$(qemu_rss_kb)
	lima_shell sudo sh -c 'rm /mnt/vmcost-fill/x && umount /mnt/vmcost-fill' || return 1
	low=$peak
	end=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$end" ]; do
		now=$(qemu_rss_kb)
		[ "$now" -lt "$low" ] && low=$now
		sleep 1
	done
	echo "$before $peak $low"
}

# memtest_run LABEL: vmcost memtest with the fill workload (no Docker needed), no host pressure
# (no swap here: pressure cannot take QEMU's anonymous memory), a real limactl stop.
# VMCOST_LIMA_RESULTS=DIR keeps the reports there as memtest-lima-LABEL-DATE.{md,json,svg}.
memtest_run() {
	mkdir -p "$tmp/results-$1"
	chown "$LIMA_TEST_USER" "$tmp/results-$1" 2>/dev/null
	lima_vmcost memtest "$LIMA_INSTANCE" --yes --workload fill --size 768M --pressure none \
		--results "$tmp/results-$1" --json >"$tmp/memtest-$1.json" 2>"$tmp/memtest-$1.err"
	rc=$?
	[ -n "${VMCOST_LIMA_RESULTS:-}" ] && keep_results "$1"
	return $rc
}

keep_results() { # label
	mkdir -p "$VMCOST_LIMA_RESULTS"
	for f in "$tmp/results-$1/memtest-$LIMA_INSTANCE-"*; do
		[ -f "$f" ] || continue
		name=$(basename "$f" | sed "s/^memtest-$LIMA_INSTANCE-/memtest-lima-$1-/")
		sed "s/memtest-$LIMA_INSTANCE-/memtest-lima-$1-/g" "$f" >"$VMCOST_LIMA_RESULTS/$name"
		echo "  kept $VMCOST_LIMA_RESULTS/$name"
	done
}

memtest_summary() { # label
	jq -c '.result | {footprint_before_stop, peak_footprint, ram_freed_by_stop}' \
		"$tmp/memtest-$1.json" 2>/dev/null | sed "s/^/  memtest $1: /"
}

memtest_figure() { # label key
	jq -e ".result.$2" "$tmp/memtest-$1.json" 2>/dev/null
}

stopped_checks() {
	check "limactl list: Stopped" test "$(lima_status)" = Stopped
	for c in footprint idle disk wakeups doctor trim balloon memtest; do
		check "$c when stopped: exit 4" test "$(rc lima_vmcost "$c" "$LIMA_INSTANCE")" -eq 4
	done
	msg=$(lima_vmcost footprint "$LIMA_INSTANCE" 2>&1)
	case $msg in
	*"limactl start $LIMA_INSTANCE"*) ok "stopped: the message says: limactl start $LIMA_INSTANCE" ;;
	*) fail "stopped: message without the way out: $msg" ;;
	esac
	check "env works for a stopped instance" test "$(rc lima_vmcost env "$LIMA_INSTANCE")" -eq 0
}

# ---- 1. the recipe: free-page reporting returns a freed GiB --------------------------------------
lima_up fpr
check "QEMU runs with the recipe's device (free-page-reporting=on, through qemu-tcg)" \
	test "$(lima_balloon)" = fpr
# shellcheck disable=SC2046 # three numbers
if set -- $(free_one_gib); then
	echo "  fpr: QEMU VmRSS $(($1 / 1024)) -> $(($2 / 1024)) MiB after the fill, lowest $(($3 / 1024)) MiB in the 30 s after the delete"
	check "fpr: the fill took >= 768 MiB of host memory" test $(($2 - $1)) -ge $((768 * 1024))
	check "fpr: >= 80 % of the freed GiB back within 30 s ($((($2 - $3) / 1024)) MiB)" \
		test $(($2 - $3)) -ge $((GIB_KB * 8 / 10))
else
	fail "fpr: filling and freeing 1 GiB in the guest"
fi

# ---- 2. memtest with free-page reporting, then the stopped instance ------------------------------
guest_kernel=$(lima_shell uname -r)
if memtest_run fpr; then ok "memtest (fpr): exit 0"; else
	fail "memtest (fpr): exit $?: $(tail -n 5 "$tmp/memtest-fpr.err")"
fi
memtest_summary fpr
check "memtest (fpr): the report names the real Lima" \
	sh -c "grep -q 'limactl version $LIMA_VERSION' '$tmp/results-fpr'/memtest-*.md"
check "memtest (fpr): the report names the guest's kernel (${guest_kernel:-?})" \
	sh -c "grep -q '^- Guest kernel: ${guest_kernel:-?}, ' '$tmp/results-fpr'/memtest-*.md"
stopped_checks

# ---- 3. the ratchet: no balloon device, nothing comes back ---------------------------------------
lima_up plain
check "QEMU runs without a balloon device" test "$(lima_balloon)" = none
# shellcheck disable=SC2046 # three numbers
if set -- $(free_one_gib); then
	echo "  no balloon: QEMU VmRSS $(($1 / 1024)) -> $(($2 / 1024)) MiB after the fill, lowest $(($3 / 1024)) MiB in the 30 s after the delete"
	check "no balloon: the fill took >= 768 MiB of host memory" test $(($2 - $1)) -ge $((768 * 1024))
	check "no balloon: < 10 % of what the fill took came back ($((($2 - $3) / 1024)) MiB): the ratchet" \
		test $(($2 - $3)) -lt $((($2 - $1) / 10))
else
	fail "no balloon: filling and freeing 1 GiB in the guest"
fi
check "balloon without a device: exit 9" test "$(rc lima_vmcost balloon "$LIMA_INSTANCE")" -eq 9

# ---- 4. memtest without a balloon ----------------------------------------------------------------
if memtest_run nob; then ok "memtest (no balloon): exit 0"; else
	fail "memtest (no balloon): exit $?: $(tail -n 5 "$tmp/memtest-nob.err")"
fi
memtest_summary nob
check "memtest stopped the instance with limactl stop" test "$(lima_status)" = Stopped
fpr_fp=$(memtest_figure fpr footprint_before_stop) || fpr_fp=0
nob_fp=$(memtest_figure nob footprint_before_stop) || nob_fp=0
check "memtest both ways: without a balloon the VM holds >= 400 MiB more before the stop" \
	test "$nob_fp" -ge $((fpr_fp + 400 * 1048576))
# The host-free gain at the stop is in the reports, not asserted: on a shared machine other
# processes move host memory by more than the difference.

# ---- 5. broken: the real hostagent killed ------------------------------------------------------
# No need to wait for a whole boot: once the hostagent has started QEMU, kill it.
as_lima env QEMU_SYSTEM_X86_64="$LIMA_WRAPPER" limactl start --tty=false "$LIMA_INSTANCE" \
	>"$tmp/start-broken.log" 2>&1 &
starter=$!
both_up() {
	[ -n "$(lima_ha_pid)" ] && [ -n "$(lima_qemu_pid)" ] && kill -0 "$(lima_qemu_pid)" 2>/dev/null
}
i=0
while ! both_up && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
ha=$(lima_ha_pid)
kill -9 "$ha" 2>/dev/null
wait "$starter" 2>/dev/null
sleep 1
check "limactl list: Broken once the hostagent ($ha) is gone and QEMU ($(lima_qemu_pid)) runs on" \
	test "$(lima_status)" = Broken
for c in footprint trim memtest; do
	check "$c when broken: exit 4" test "$(rc lima_vmcost "$c" "$LIMA_INSTANCE")" -eq 4
done
msg=$(lima_vmcost footprint "$LIMA_INSTANCE" 2>&1)
case $msg in
*broken*"limactl stop -f $LIMA_INSTANCE"*) ok "broken: the message says: limactl stop -f $LIMA_INSTANCE" ;;
*) fail "broken: message without the way out: $msg" ;;
esac
out=$(lima_vmcost list --json 2>/dev/null)
listed_broken() {
	printf '%s' "$out" | jq -e ".instances[] | select(.name == \"$LIMA_INSTANCE\") | .status == \"Broken\"" >/dev/null
}
check "vmcost list shows it Broken" listed_broken
lima_ctl stop -f "$LIMA_INSTANCE" >/dev/null 2>&1
check "limactl stop -f recovers it: Stopped" test "$(lima_status)" = Stopped
summary
