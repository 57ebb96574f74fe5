#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every vmcost command against the real Lima 2.2.0 instance (real hostagent, qemu.pid written by
# QEMU, Lima's qmp.sock, ssh-forwarded sockets), each figure checked against a second reading:
# limactl list --json, /proc of the real QEMU and hostagent, QMP spoken directly with socat,
# the guest's /proc through limactl shell, the size of ha.stderr.log. Then the README's exit
# codes for an unknown instance, a malformed lima.yaml and a missing agent socket (the stopped
# and broken cases need the instance stopped: tests/lima/lifecycle.sh).
# shellcheck disable=SC2016 # single-quoted scripts run in the guest or in an inner shell
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"
lima_init
lima_up any

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; lima_cleanup' EXIT

# rc CMD...: the exit status, output thrown away.
rc() {
	"$@" >/dev/null 2>&1
	echo $?
}

# json_of MSG CMD...: runs CMD, keeps stdout in $out; passes when it exits 0 with valid JSON.
json_of() {
	msg=$1
	shift
	out=$("$@" 2>"$tmp/err")
	status=$?
	if [ "$status" -eq 0 ] && printf '%s' "$out" | jq -e . >/dev/null 2>&1; then
		ok "$msg: exit 0, --json parses"
	else
		fail "$msg: exit $status: $(printf '%s' "$out" | head -c 300) $(head -c 600 "$tmp/err")"
	fi
}

# jq_check MSG FILTER: the filter holds on $out.
jq_check() {
	if printf '%s' "$out" | jq -e "$2" >/dev/null 2>&1; then ok "$1"; else
		fail "$1"
		printf '%s\n' "$out" | head -c 1500
		echo
	fi
}

# within PCT A B: |A - B| <= PCT % of B.
within() {
	awk -v p="$1" -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}

# between LOW X HIGH (numbers).
between() {
	awk -v l="$1" -v x="$2" -v h="$3" 'BEGIN { exit !(l <= x && x <= h) }'
}

proc_kb() { # pid: VmRSS + VmSwap in KiB
	awk '/^VmRSS:/ {r = $2} /^VmSwap:/ {s = $2} END {print r + s}' "/proc/$1/status"
}

cpu_ticks() { # pid: utime + stime
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# QMP on Lima's own socket, as the test user (it owns the socket).
qmp() { # command JSON...
	for c in "$@"; do printf '%s\n' "$c"; done >"$tmp/qmp.in"
	chmod 755 "$tmp"
	chmod 644 "$tmp/qmp.in"
	as_lima sh -c '{ echo "{\"execute\":\"qmp_capabilities\"}"; cat "$1"; sleep 1; } |
		socat -t 3 - "UNIX-CONNECT:$2"' sh "$tmp/qmp.in" "$dir/qmp.sock"
}

qmp_balloon_actual() {
	qmp '{"execute":"query-balloon"}' | sed -n 's/.*"actual": *\([0-9]*\).*/\1/p' | tail -n 1
}

guest_meminfo_kb() { # field
	lima_shell awk -v f="$1:" '$1 == f {print $2}' /proc/meminfo
}

dir=$(lima_dir)
qemu=$(lima_qemu_pid)
ha=$(lima_ha_pid)
echo "# instance $LIMA_INSTANCE in $dir: qemu.pid $qemu, ha.pid $ha ($LIMACTL_VERSION_LINE)"

# ---- list: with limactl on PATH and without it ---------------------------------------------
# Lima 2.2.0's --json runs each instance's line through a 64 KiB bufio.Scanner: the instance's
# lima.yaml stays small (the agent's sources are a download, tests/lima/fragment_agent.sh), so
# --json works.
json_of "limactl list --json $LIMA_INSTANCE" lima_ctl list --json "$LIMA_INSTANCE"
json_of "limactl list --format '{{json .}}' $LIMA_INSTANCE" lima_ctl list --format '{{json .}}' "$LIMA_INSTANCE"
lima_json=$out
jq_check "limactl: Running, hostAgentPID = ha.pid, driverPID = qemu.pid" \
	".status == \"Running\" and .hostAgentPID == $ha and .driverPID == $qemu"
json_of "vmcost list (limactl on PATH)" lima_vmcost list --json
with=$(printf '%s' "$out" | jq -c ".instances[] | select(.name == \"$LIMA_INSTANCE\") | {name, status, vm_type, configured_memory, dir, pid, method}")
jq_check "list: Running, qemu, 2 GiB, pid = qemu.pid, by qemu.pid" \
	".instances[] | select(.name == \"$LIMA_INSTANCE\") | .status == \"Running\" and .vm_type == \"qemu\" and .configured_memory == 2147483648 and .pid == $qemu and .method == \"qemu.pid\" and .footprint > 0"
nolimactl_path="$LIMA_TEST_STAGE/nolimactl:/usr/bin:/bin"
mkdir -p "$LIMA_TEST_STAGE/nolimactl"
cp "$LIMA_TEST_STAGE/bin/vmcost" "$LIMA_TEST_STAGE/nolimactl/vmcost"
json_of "vmcost list (no limactl on PATH)" as_lima env PATH="$nolimactl_path" vmcost list --json
without=$(printf '%s' "$out" | jq -c ".instances[] | select(.name == \"$LIMA_INSTANCE\") | {name, status, vm_type, configured_memory, dir, pid, method}")
echo "  with limactl:    $with"
echo "  without limactl: $without"
check "list: the same instance, status, vmType, memory, dir and pid either way" test "$with" = "$without"
limactl_memory=$(printf '%s' "$lima_json" | jq .memory)
check "list: memory = limactl's ($limactl_memory)" test "$(printf '%s' "$with" | jq .configured_memory)" = "$limactl_memory"

# ---- footprint = /proc of the real qemu.pid --------------------------------------------------
before_kb=$(proc_kb "$qemu")
json_of "footprint" lima_vmcost footprint "$LIMA_INSTANCE" --json
after_kb=$(proc_kb "$qemu")
fp_kb=$(($(printf '%s' "$out" | jq .process.footprint) / 1024))
echo "  footprint $fp_kb kB; /proc VmRSS+VmSwap $before_kb kB before, $after_kb kB after"
lo=$((before_kb < after_kb ? before_kb : after_kb))
hi=$((before_kb > after_kb ? before_kb : after_kb))
check "footprint within the /proc readings around it (1 % slack)" \
	between "$((lo - lo / 100))" "$fp_kb" "$((hi + hi / 100))"
jq_check "footprint: qemu.pid, QEMU, the real hostagent" \
	".process.pid == $qemu and .process.method == \"qemu.pid\" and (.process.name | startswith(\"qemu-system\")) and .hostagent.pid == $ha"
exact_kb=$(($(printf '%s' "$out" | jq .process.rss_exact) / 1024))
rollup_kb=$(awk '/^Rss:/ {print $2}' "/proc/$qemu/smaps_rollup")
check "exact rss = smaps_rollup Rss within 2 % ($exact_kb vs $rollup_kb kB)" within 2 "$exact_kb" "$rollup_kb"
ha_kb=$(($(printf '%s' "$out" | jq .hostagent.footprint) / 1024))
check "hostagent footprint = its /proc VmRSS within 10 % ($ha_kb vs $(proc_kb "$ha") kB)" \
	within 10 "$ha_kb" "$(proc_kb "$ha")"

# ---- idle: includes the real hostagent's share ---------------------------------------------
ha_t0=$(cpu_ticks "$ha")
q_t0=$(cpu_ticks "$qemu")
t0=$(date +%s.%N)
json_of "idle 20 5" lima_vmcost idle "$LIMA_INSTANCE" 20 5 --json
t1=$(date +%s.%N)
ha_t1=$(cpu_ticks "$ha")
q_t1=$(cpu_ticks "$qemu")
hz=$(getconf CLK_TCK)
ha_pct=$(awk -v a="$ha_t0" -v b="$ha_t1" -v s="$t0" -v e="$t1" -v hz="$hz" 'BEGIN {printf "%.2f", (b - a) / hz / (e - s) * 100}')
q_pct=$(awk -v a="$q_t0" -v b="$q_t1" -v s="$t0" -v e="$t1" -v hz="$hz" 'BEGIN {printf "%.2f", (b - a) / hz / (e - s) * 100}')
mean_ha=$(printf '%s' "$out" | jq '[.samples[].hostagent_cpu_percent] | add / length')
mean_q=$(printf '%s' "$out" | jq '[.samples[].cpu_percent] | add / length')
echo "  vmcost: VM $mean_q %, hostagent $mean_ha % (means); /proc around it: VM $q_pct %, hostagent $ha_pct %"
jq_check "idle: 4 intervals, the hostagent is ha.pid with a share in every interval" \
	"(.samples | length) == 4 and .hostagent_pid == $ha and all(.samples[]; .hostagent_cpu_percent >= 0)"
check "idle: the hostagent's mean agrees with /proc (±1 point + 30 %)" \
	awk -v a="$mean_ha" -v b="$ha_pct" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1 + b * 0.3) }'
check "idle: the VM's mean agrees with /proc (±2 points + 30 %)" \
	awk -v a="$mean_q" -v b="$q_pct" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 2 + b * 0.3) }'

# ---- disk: includes ha.stderr.log growth ---------------------------------------------------
size0=$(stat -c %s "$dir/ha.stderr.log")
json_of "disk 25" lima_vmcost disk "$LIMA_INSTANCE" 25 --json
size1=$(stat -c %s "$dir/ha.stderr.log")
growth=$(printf '%s' "$out" | jq .ha_stderr_log.bytes)
echo "  ha.stderr.log: vmcost growth $growth B; stat $size0 -> $size1 B around it; $(printf '%s' "$out" | jq -c '{guest: .guest.source, disks: [.guest.disks[]? | .name]}')"
check "disk: the hostagent's log grew (Lima logs a time-sync line every 10 s) and vmcost saw it" \
	test "${growth:-0}" -gt 0
check "disk: growth <= what stat saw around the run ($growth <= $((size1 - size0)))" \
	test "${growth:-0}" -le $((size1 - size0))
jq_check "disk: the log size is the file's" ".ha_stderr_log.size >= $size0 and .ha_stderr_log.size <= $size1"
jq_check "disk: host (VM process, hostagent) and guest disks" \
	"(.host.vm_process.bytes | type == \"number\") and .host.hostagent.pid == $ha and (.guest.disks | length >= 1)"

# ---- wakeups (guest through the agent, host /proc) ----------------------------------------------
json_of "wakeups 5" lima_vmcost wakeups "$LIMA_INSTANCE" 5 --json
jq_check "wakeups: the guest's 2 CPUs, interrupts with the timer named, the host's view of qemu.pid" \
	".guest.cpus == 2 and .guest.totals.interrupts_per_s > 0 and (.guest.totals.timer.name | type == \"string\") and .host.pid == $qemu"

# ---- doctor (host and guest) --------------------------------------------------------------------
out=$(lima_vmcost doctor "$LIMA_INSTANCE" --json 2>"$tmp/err")
status=$?
jq_check "doctor --json parses" ".instance == \"$LIMA_INSTANCE\""
failed=$(printf '%s' "$out" | jq '.failed // 0')
doctor_status_ok() { if [ "$failed" -gt 0 ]; then [ "$status" -eq 1 ]; else [ "$status" -eq 0 ]; fi; }
check "doctor: exit 1 exactly when a check fails (failed=$failed, exit $status)" doctor_status_ok
jq_check "doctor: the Lima version check reads the real limactl (2.2.0, ok)" \
	'.host[] | select(.id == "lima-version") | .status == "ok" and (.observed | contains("2.2.0"))'
log_size=$(stat -c %s "$dir/ha.stderr.log")
jq_check "doctor: reporting is on (fpr), the vmType check is ok" '.host[] | select(.id == "vm-type") | .status == "ok"'
jq_check "doctor: the guest's checks came from the agent" '(.guest.checks | length) > 10'
echo "  doctor: $(printf '%s' "$out" | jq -c '[.host[] | {id, status}]'); ha.stderr.log $log_size B"

# ---- trim and balloon through Lima's qmp.sock ---------------------------------------------------
lima_shell sh -c 'dd if=/dev/urandom of=/var/tmp/vmcost-cache bs=1M count=400 2>/dev/null && sync &&
	echo 3 | sudo tee /proc/sys/vm/drop_caches >/dev/null && cat /var/tmp/vmcost-cache >/dev/null'
cache_before=$(guest_meminfo_kb Cached)
json_of "trim" lima_vmcost trim "$LIMA_INSTANCE" --json
cache_after=$(guest_meminfo_kb Cached)
echo "  guest Cached $((cache_before / 1024)) -> $((cache_after / 1024)) MiB; vmcost: $(printf '%s' "$out" | jq -c '{guest_freed, footprint_before, footprint_after, settled}')"
# The agent keeps a floor of cache (128 MiB by default) and asks memory.reclaim for the rest, and
# it counts what it freed by MemFree, which the rest of the guest moves too: of a 336 MiB target
# it reclaimed 335 MiB and counted 290 MiB freed in one run.
jq_check "trim: the 400 MiB file was in the agent's target (cache above its floor >= 300 MiB)" \
	'.trim.target_bytes >= 300 * 1048576'
jq_check "trim: the guest freed >= 75 % of that target" '.guest_freed >= .trim.target_bytes * 0.75'
check "trim: the guest's own Cached fell by >= 300 MiB" test $((cache_before - cache_after)) -ge $((300 * 1024))
check "trim: what the agent counted freed is the guest's Cached drop within 25 %" \
	within 25 "$(($(printf '%s' "$out" | jq .guest_freed) / 1024))" $((cache_before - cache_after))
# Reporting hands back free 2 MiB blocks only: of 306 MiB freed, 210 came back in one run.
jq_check "trim: with free-page reporting the footprint fell by >= 50 % of it" \
	'.footprint_before - .footprint_after >= .guest_freed * 0.5'
lima_shell rm -f /var/tmp/vmcost-cache

json_of "balloon" lima_vmcost balloon "$LIMA_INSTANCE" --json
actual=$(qmp_balloon_actual)
jq_check "balloon: target = QMP query-balloon on qmp.sock ($actual)" ".now.actual == ${actual:-0}"
json_of "balloon 1GiB" lima_vmcost balloon "$LIMA_INSTANCE" 1GiB --json
actual=$(qmp_balloon_actual)
total=$(guest_meminfo_kb MemTotal)
check "balloon 1GiB: QMP says 1 GiB ($actual)" test "${actual:-0}" = 1073741824
check "balloon 1GiB: the guest's MemTotal shrank below 1.1 GB ($total kB)" test "${total:-0}" -lt 1074000
jq_check "balloon 1GiB: reached" '.reached and .after.actual == 1073741824'
json_of "balloon max" lima_vmcost balloon "$LIMA_INSTANCE" max --json
check "balloon max: QMP says 2 GiB again" test "$(qmp_balloon_actual)" = 2147483648

# ---- env: the forwarded docker.sock answers ------------------------------------------------------
json_of "env" lima_vmcost env "$LIMA_INSTANCE" --json
jq_check "env: DOCKER_HOST is the instance's sock/docker.sock" \
	".env.DOCKER_HOST == \"unix://$dir/sock/docker.sock\" and .env.TESTCONTAINERS_HOST_OVERRIDE == \"127.0.0.1\""
# dockerd starts on the first connection (docker.socket): under TCG that takes a minute or two.
ping=$(as_lima curl -s --max-time 300 --unix-socket "$dir/sock/docker.sock" http://localhost/_ping)
check "env: dockerd answers /_ping on that socket through Lima's forward ($ping)" test "$ping" = OK

# ---- exit codes: unknown instance, malformed lima.yaml, missing agent socket --------------------
for path in "" "$nolimactl_path"; do
	how="limactl on PATH"
	[ -n "$path" ] && how="no limactl"
	run() { if [ -n "$path" ]; then as_lima env PATH="$path" vmcost "$@"; else lima_vmcost "$@"; fi; }
	for c in footprint idle disk wakeups doctor trim balloon; do
		check "$c ghost ($how): exit 3 (unknown instance)" test "$(rc run "$c" ghost)" -eq 3
	done
done

# A malformed lima.yaml: Lima itself cannot load it either.
as_lima sh -c 'mkdir -p "$LIMA_HOME/badyaml" && printf "vmType: [qemu\ncpus: {\n" >"$LIMA_HOME/badyaml/lima.yaml"'
out=$(lima_ctl list --json badyaml 2>"$tmp/err")
echo "  limactl list --json badyaml: exit $?; $(printf '%s' "$out" | jq -c '{name, status, errors}' 2>/dev/null) $(tail -n 1 "$tmp/err")"
for path in "" "$nolimactl_path"; do
	how="limactl on PATH"
	[ -n "$path" ] && how="no limactl"
	run() { if [ -n "$path" ]; then as_lima env PATH="$path" vmcost "$@"; else lima_vmcost "$@"; fi; }
	for c in footprint trim; do
		check "$c badyaml ($how): exit 8 (malformed lima.yaml)" test "$(rc run "$c" badyaml)" -eq 8
	done
	out=$(run list --json 2>/dev/null)
	jq_check "list ($how): badyaml is listed with the reason, $LIMA_INSTANCE still Running" \
		"(.instances[] | select(.name == \"badyaml\") | .problem | type == \"string\") and (.instances[] | select(.name == \"$LIMA_INSTANCE\") | .status == \"Running\")"
done
as_lima rm -rf "$LIMA_HOME/badyaml"

# The agent socket missing (moved away and back: Lima's ssh forward keeps listening on it).
as_lima mv "$dir/sock/vmcost-agent.sock" "$dir/sock/vmcost-agent.sock.away"
for c in trim wakeups doctor; do
	check "$c with no agent socket: exit 5" test "$(rc lima_vmcost "$c" "$LIMA_INSTANCE")" -eq 5
done
check "footprint does not need the agent" test "$(rc lima_vmcost footprint "$LIMA_INSTANCE")" -eq 0
as_lima mv "$dir/sock/vmcost-agent.sock.away" "$dir/sock/vmcost-agent.sock"
check "the agent answers again through the same socket" test "$(rc lima_vmcost wakeups "$LIMA_INSTANCE" 1)" -eq 0
summary
