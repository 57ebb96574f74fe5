#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost (host) against real lab VMs (issue 4, acceptance 2): footprint agrees with QEMU's own
# /proc figures within 1 %, idle gives sane figures, trim on a --fpr VM makes the footprint
# fall, balloon drives QMP, every command's --json parses, and the exit codes are the README's
# (unknown 3, stopped 4, agent not reachable 5, no balloon device 9).
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

MIB_KB=1024

# rc CMD...: the exit status, output thrown away.
rc() {
	"$@" >/dev/null 2>&1
	echo $?
}

# jq_check MSG FILTER: the filter holds on $out (the last JSON document).
jq_check() {
	if printf '%s' "$out" | jq -e "$2" >/dev/null 2>&1; then ok "$1"; else
		fail "$1"
		printf '%s\n' "$out" | head -c 2000
		echo
	fi
}

# json_of MSG CMD...: runs CMD, keeps stdout in $out, checks it parses and the exit code is 0.
json_of() {
	msg=$1
	shift
	out=$("$@" 2>/tmp/host-lab.$$.err)
	status=$?
	if [ "$status" -eq 0 ] && printf '%s' "$out" | jq -e . >/dev/null 2>&1; then
		ok "$msg: exit 0, --json parses"
	else
		fail "$msg: exit $status, output: $(printf '%s' "$out" | head -c 300) $(cat /tmp/host-lab.$$.err)"
	fi
}

# within PCT A B: |A - B| <= PCT % of B (integers).
within() {
	awk -v p="$1" -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}

lab_start t1 --fpr
qemu=$(lab_qemu_pid t1)
check "vmcost is the freshly built host/vmcost" test "$(command -v vmcost)" = "$LAB_TEST_REPO/host/vmcost"

# ---- footprint vs QEMU's own /proc figures --------------------------------------------------
json_of "footprint t1" vmcost footprint t1 --json
proc_kb=$(awk '/^VmRSS:/ {r = $2} /^VmSwap:/ {s = $2} END {print r + s}' "/proc/$qemu/status")
rollup_kb=$(awk '/^Rss:/ {print $2}' "/proc/$qemu/smaps_rollup")
fp_kb=$(($(printf '%s' "$out" | jq .process.footprint) / 1024))
exact_kb=$(($(printf '%s' "$out" | jq .process.rss_exact) / 1024))
echo "footprint $((fp_kb / MIB_KB)) MiB; /proc VmRSS+VmSwap $((proc_kb / MIB_KB)) MiB; smaps_rollup Rss $((rollup_kb / MIB_KB)) MiB"
check "footprint = VmRSS + VmSwap of QEMU within 1 % ($fp_kb vs $proc_kb kB)" within 1 "$fp_kb" "$proc_kb"
check "exact rss = smaps_rollup Rss within 1 % ($exact_kb vs $rollup_kb kB)" within 1 "$exact_kb" "$rollup_kb"
jq_check "the process is qemu.pid ($qemu)" ".process.pid == $qemu and .process.method == \"qemu.pid\""
jq_check "it is QEMU" '.process.name | startswith("qemu-system")'
jq_check "the hostagent is accounted" ".hostagent.pid == $(cat "$LIMA_HOME/t1/ha.pid")"
jq_check "configured memory 2 GiB" '.configured_memory == 2147483648'
check "footprint human form" sh -c 'vmcost footprint t1 | grep -q "chosen by qemu.pid"'
out=$(timeout -s INT 3 vmcost footprint t1 --watch 1 --json)
watch_lines() { printf '%s\n' "$out" | jq -se 'length >= 2 and all(.process.footprint > 0)' >/dev/null; }
check "footprint --watch --json prints JSON Lines until Ctrl-C" watch_lines

# ---- list -------------------------------------------------------------------------------------
json_of "list" vmcost list --json
jq_check "list: t1 Running with pid, footprint and a ratchet gap from the agent" \
	".instances[] | select(.name == \"t1\") | .status == \"Running\" and .pid == $qemu and .footprint > 0 and (.ratchet_gap | type == \"number\")"

# ---- idle t1 20 5 -----------------------------------------------------------------------------
json_of "idle t1 20 5" vmcost idle t1 20 5 --json
jq_check "idle: 4 intervals of ~5 s" '(.samples | length) == 4 and all(.samples[]; .seconds > 4.5 and .seconds < 6)'
jq_check "idle: CPU % of one core within 0..200 (2 vCPUs)" \
	'.summary.cpu_percent.min >= 0 and .summary.cpu_percent.max <= 200 and .summary.cpu_percent.median > 0'
jq_check "idle: min <= median <= max" \
	'.summary.cpu_percent.min <= .summary.cpu_percent.median and .summary.cpu_percent.median <= .summary.cpu_percent.max'
jq_check "idle: QEMU's threads switch (context switches/s > 0)" '.summary.context_switches_per_s.median > 0'
echo "idle: $(printf '%s' "$out" | jq -c .summary.cpu_percent)"

# ---- disk, wakeups, doctor, env -----------------------------------------------------------------
json_of "disk t1 5" vmcost disk t1 5 --json
jq_check "disk: host, guest and log figures" \
	'(.host.vm_process.bytes | type == "number") and (.guest.source | type == "string") and (.guest.disks | length >= 1) and (.ha_stderr_log | type == "object")'
json_of "wakeups t1 3" vmcost wakeups t1 3 --json
# The timer is LOC on x86_64 and the GIC's arch_timer line on aarch64 (VMCOST_LAB_ARCH).
if [ "${VMCOST_LAB_ARCH:-x86_64}" = aarch64 ]; then
	timer_is='(.guest.totals.timer.description | test("arch_timer"))'
	qemu_var=QEMU_SYSTEM_AARCH64
else
	timer_is='.guest.totals.timer.name == "LOC"'
	qemu_var=QEMU_SYSTEM_X86_64
fi
jq_check "wakeups: guest interrupts ranked, timer named, host view" \
	".guest.totals.interrupts_per_s > 0 and (.guest.interrupts | length > 0) and $timer_is and .host.cpu_percent >= 0"
out=$(vmcost doctor t1 --json 2>/dev/null)
status=$?
jq_check "doctor --json parses" '.instance == "t1"'
failed=$(printf '%s' "$out" | jq .failed)
doctor_status_ok() { if [ "$failed" -gt 0 ]; then [ "$status" -eq 1 ]; else [ "$status" -eq 0 ]; fi; }
check "doctor: exit 1 exactly when a check fails (failed=$failed, exit $status)" doctor_status_ok
jq_check "doctor: 6 host checks (2 of them the forwarded sockets) and the guest's checks" '(.host | length) == 6 and (.guest.checks | length) > 10'
jq_check "doctor: reporting works, so the vmType check is ok" '.host[] | select(.id == "vm-type") | .status == "ok"'
json_of "env t1" vmcost env t1 --json
jq_check "env: DOCKER_HOST and testcontainers" \
	".env.DOCKER_HOST == \"unix://$LIMA_HOME/t1/sock/docker.sock\" and .env.TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE == \"/var/run/docker.sock\""

# ---- trim on a --fpr VM: the footprint falls ---------------------------------------------------
limactl shell t1 sh -c 'dd if=/dev/urandom of=/mnt/scratch/cache bs=1M count=600 2>/dev/null && sync && cat /mnt/scratch/cache >/dev/null'
before_kb=$(lab_qemu_rss_kb t1)
json_of "trim t1" vmcost trim t1 --json
after_kb=$(lab_qemu_rss_kb t1)
echo "trim: QEMU RSS $((before_kb / MIB_KB)) -> $((after_kb / MIB_KB)) MiB; vmcost says $(printf '%s' "$out" | jq -c '{guest_freed, footprint_before, footprint_after, waited_s}')"
jq_check "trim: the guest freed >= 400 MiB of page cache" '.guest_freed >= 400 * 1048576'
jq_check "trim: the footprint fell by >= 80 % of it, settled" \
	'.footprint_before - .footprint_after >= .guest_freed * 0.8 and .settled'
check "trim: QEMU's own RSS fell by >= 300 MiB" test $((before_kb - after_kb)) -ge $((300 * MIB_KB))

# ---- balloon drives QMP -------------------------------------------------------------------------
json_of "balloon t1" vmcost balloon t1 --json
jq_check "balloon: target = 2 GiB, guest MemTotal known" '.now.actual == 2147483648 and .now.guest_mem_total > 0'
json_of "balloon t1 1GiB" vmcost balloon t1 1GiB --json
jq_check "balloon: the guest shrank to 1 GiB" \
	'.reached and .after.actual == 1073741824 and .after.guest_mem_total < 1100000000 and .before.guest_mem_total > 1900000000'
json_of "balloon t1 max" vmcost balloon t1 max --json
jq_check "balloon max: back to 2 GiB" '.after.actual == 2147483648'

# ---- exit codes: unknown instance, agent not reachable ------------------------------------------
for c in footprint idle disk wakeups doctor trim balloon env; do
	check "$c ghost: exit 3 (unknown instance)" test "$(rc vmcost "$c" ghost)" -eq 3
done
out=$(vmcost footprint ghost --json 2>/dev/null)
jq_check "errors are JSON with --json" '.error.code == 3 and (.error.message | contains("unknown instance"))'
limactl shell t1 lab-agent stop
for c in trim wakeups doctor; do
	check "$c t1 with the agent stopped: exit 5" test "$(rc vmcost "$c" t1)" -eq 5
done
json_of "list with the agent stopped" vmcost list --json
jq_check "list: no gap without the agent, footprint still there" \
	'.instances[] | select(.name == "t1") | (.ratchet_gap == null) and .footprint > 0'
check "footprint does not need the agent" test "$(rc vmcost footprint t1)" -eq 0
limactl shell t1 lab-agent start

# ---- a VM without a balloon: nothing to drive, nothing returned --------------------------------
lab_start t2 --no-balloon --memory 1GiB
check "balloon t2 (no device): exit 9" test "$(rc vmcost balloon t2)" -eq 9
check "balloon t2 says how to add one" sh -c 'vmcost balloon t2 2>&1 | grep -q "virtio-balloon-pci,free-page-reporting=on"'
limactl shell t2 sh -c 'dd if=/dev/urandom of=/mnt/scratch/cache bs=1M count=400 2>/dev/null && sync && cat /mnt/scratch/cache >/dev/null'
json_of "trim t2 (no reporting)" vmcost trim t2 --json
jq_check "trim t2: the guest freed cache, the host got (almost) nothing back, the note says why" \
	'.guest_freed >= 200 * 1048576 and .host_returned < .guest_freed / 10 and (.page_reporting | not) and (.note | contains("no free-page reporting"))'
out=$(vmcost doctor t2 --json 2>/dev/null)
jq_check "doctor t2: the vmType check warns and says how to add a balloon" \
	".host[] | select(.id == \"vm-type\") | .status == \"warn\" and (.fix | contains(\"$qemu_var\"))"

# ---- stopped instance -------------------------------------------------------------------------
limactl stop t1 >/dev/null 2>&1
for c in footprint idle disk wakeups doctor trim balloon; do
	check "$c t1 when stopped: exit 4" test "$(rc vmcost "$c" t1)" -eq 4
done
check "stopped: the message says how to start it" \
	sh -c 'vmcost footprint t1 2>&1 | grep -q "start it with limactl start t1"'
check "env works for a stopped instance" test "$(rc vmcost env t1)" -eq 0
json_of "list with t1 stopped" vmcost list --json
jq_check "list: t1 Stopped, t2 Running" \
	'(.instances[] | select(.name == "t1") | .status == "Stopped" and .footprint == null) and (.instances[] | select(.name == "t2") | .status == "Running")'
limactl stop t2 >/dev/null 2>&1
rm -f /tmp/host-lab.$$.err
summary
