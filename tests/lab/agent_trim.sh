#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The agent's trim for real (agent issue, acceptance 4). In a --fpr lab VM: fill page cache on
# the scratch disk, POST /v1/trim through $LIMA_HOME/NAME/sock/vmcost-agent.sock, and QEMU's RSS
# must fall by at least 80 % of that cache within 30 s. In a VM without a balloon the same trim
# frees guest memory, the host gets nothing back, and `vmcost-agent check` (through limactl
# shell) says why.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

# The default 128 MiB floor stays cached by design; 1200 MiB keeps it a small share of the fill.
FILL_MIB=${AGENT_TRIM_FILL_MIB:-1200}

api() { # name method path [json body]
	if [ $# -ge 4 ]; then
		curl -sS --max-time 120 --unix-socket "$LIMA_HOME/$1/sock/vmcost-agent.sock" \
			-X "$2" -H 'Content-Type: application/json' -d "$4" "http://agent$3"
	else
		curl -sS --max-time 120 --unix-socket "$LIMA_HOME/$1/sock/vmcost-agent.sock" \
			-X "$2" "http://agent$3"
	fi
}

# Page cache of the guest in KiB: Active(file) + Inactive(file).
guest_cache_kb() {
	limactl shell "$1" cat /proc/meminfo |
		awk '/^(Active|Inactive)\(file\):/ {s += $2} END {print s + 0}'
}

guest_free_kb() {
	limactl shell "$1" cat /proc/meminfo | awk '/^MemFree:/ {print $2}'
}

# Writes FILL_MIB of file data on the ext4 scratch disk; sync makes it clean, droppable cache.
fill_cache() {
	limactl shell "$1" sh -c "rm -f /mnt/scratch/fill; sync; \
		dd if=/dev/zero of=/mnt/scratch/fill bs=1M count=$FILL_MIB 2>/dev/null && sync"
}

jcheck() { # message json jq-expression (an empty document fails: jq -e passes on no input)
	if [ -n "$2" ] && printf '%s' "$2" | jq -e "$3" >/dev/null 2>&1; then
		ok "$1"
	else
		fail "$1: $(printf '%s' "$2" | jq -c "$3" 2>&1 | head -c 300)"
	fi
}

# ---- with free-page reporting -------------------------------------------------------------------
lab_start trimfpr --fpr
status=$(api trimfpr GET /v1/status)
jcheck "GET /v1/status through the instance socket" "$status" '.memory.total > 0'
jcheck "status: page reporting active" "$status" '.page_reporting.active == true'

# The guest runs the agent as Alpine would: the musl-static build (mk/musl.mk; for an aarch64
# lab, VMCOST_LAB_ARCH=aarch64, make agent-static-arm64), unless VMCOST_AGENT_STATIC put another
# build in the lab (lab/build).
if [ "${VMCOST_LAB_ARCH:-x86_64}" = aarch64 ]; then
	agent_bin=${VMCOST_AGENT_STATIC_ARM64:-$LAB_TEST_REPO/guest-agent/vmcost-agent-static-arm64}
else
	agent_bin=${VMCOST_AGENT_STATIC:-$LAB_TEST_REPO/guest-agent/vmcost-agent-static}
fi
guest_sum=$(limactl shell trimfpr sha256sum /usr/bin/vmcost-agent | cut -d' ' -f1)
check "the guest runs ${agent_bin#"$LAB_TEST_REPO"/} (else: make lab)" \
	test "$guest_sum" = "$(sha256sum <"$agent_bin" | cut -d' ' -f1)"
without_glibc() { # binary: no glibc ABI note, no glibc tunables
	! readelf -n "$1" | grep -q NT_GNU_ABI_TAG && ! grep -q GLIBC_TUNABLES "$1"
}
if [ -n "${VMCOST_AGENT_STATIC:-}" ]; then
	skip "the musl agent: VMCOST_AGENT_STATIC put $VMCOST_AGENT_STATIC in the guest"
else
	check "the guest's agent is linked with musl, not glibc" without_glibc "$agent_bin"
fi

before_fill=$(guest_cache_kb trimfpr)
fill_cache trimfpr
cache_kb=$(($(guest_cache_kb trimfpr) - before_fill))
echo "filled $((cache_kb / 1024)) MiB of page cache"
check "at least 600 MiB of page cache filled" test "$cache_kb" -ge $((600 * 1024))
# Let the dd's own freed buffers finish reporting before taking the baseline.
sleep 6
rss_before=$(lab_qemu_rss_kb trimfpr)

dry=$(api trimfpr POST /v1/trim '{"dry_run": true, "force": true}')
jcheck "dry run changes nothing" "$dry" '.decision == "dry-run" and .ran == false'
check "dry run left the cache" test "$(guest_cache_kb trimfpr)" -ge $((cache_kb * 9 / 10))

start=$(date +%s)
trim=$(api trimfpr POST /v1/trim '{"force": true}')
echo "$trim" | jq -c '{decision, reason, method, reclaim_format, steps: [.steps[] | .wrote + " " + .result], compacted, freed_bytes}'
jcheck "POST /v1/trim trimmed" "$trim" '.decision == "trimmed" and .ran == true'
jcheck "through memory.reclaim on the root cgroup" "$trim" '.method == "memory.reclaim"'
jcheck "6.1: swappiness= refused (EINVAL), bytes only" "$trim" \
	'.reclaim_format == "<bytes>" and .steps[0].result == "EINVAL"'
jcheck "steps bounded by the step size" "$trim" '[.steps[] | (.wrote | split(" ")[0] | tonumber) <= 268435456] | all'
jcheck "compacted because reporting is active" "$trim" '.compacted == true'
jcheck "the floor stays cached" "$trim" '.file_cache_after >= .floor_bytes * 0.8'

want=$((cache_kb * 8 / 10))
dropped_enough() {
	[ $((rss_before - $(lab_qemu_rss_kb trimfpr))) -ge "$want" ]
}
if lab_wait_until 30 dropped_enough; then
	ok "QEMU RSS fell by >= 80 % of the cache within 30 s ($(($(date +%s) - start)) s)"
else
	fail "QEMU RSS fell by >= 80 % of the cache within 30 s"
fi
rss_after=$(lab_qemu_rss_kb trimfpr)
echo "QEMU RSS $((rss_before / 1024)) -> $((rss_after / 1024)) MiB: -$(((rss_before - rss_after) / 1024)) MiB for $((cache_kb / 1024)) MiB of cache ($(((rss_before - rss_after) * 100 / cache_kb)) %)"

again=$(api trimfpr POST /v1/trim '{}')
jcheck "an unforced trim right after is rate-limited" "$again" \
	'.decision == "skipped" and (.reason | test("last trim"))'
status=$(api trimfpr GET /v1/status)
jcheck "status shows the trim in its history" "$status" \
	'.trim.last_trim.method == "memory.reclaim" and (.trim.history | length) >= 1'
human=$(limactl shell trimfpr vmcost-agent status)
check "vmcost-agent status (CLI) sees the daemon's trim" \
	sh -c "printf '%s' \"\$1\" | grep -q 'last trim .*via memory.reclaim'" sh "$human"
"$LAB_TEST_REPO/lab/vm" stop trimfpr >/dev/null 2>&1

# ---- without a balloon --------------------------------------------------------------------------
lab_start trimnob --no-balloon
before_fill=$(guest_cache_kb trimnob)
fill_cache trimnob
cache_kb=$(($(guest_cache_kb trimnob) - before_fill))
sleep 3
rss_before=$(lab_qemu_rss_kb trimnob)
free_before=$(guest_free_kb trimnob)
trim=$(api trimnob POST /v1/trim '{"force": true}')
jcheck "no balloon: the trim still runs" "$trim" '.decision == "trimmed"'
jcheck "no balloon: no compaction (it would be wasted)" "$trim" \
	'.compacted == false and (.compact_note | test("not active"))'
freed_kb=$(($(guest_free_kb trimnob) - free_before))
check "no balloon: guest MemFree grew by >= 80 % of the cache ($((freed_kb / 1024)) MiB)" \
	test "$freed_kb" -ge $((cache_kb * 8 / 10))
sleep 10
rss_after=$(lab_qemu_rss_kb trimnob)
echo "no balloon: QEMU RSS $((rss_before / 1024)) -> $((rss_after / 1024)) MiB after freeing $((freed_kb / 1024)) MiB in the guest"
check "no balloon: the host gets (almost) nothing back" \
	test $((rss_before - rss_after)) -lt $((cache_kb / 10))
doctor=$(limactl shell trimnob vmcost-agent check --json)
jcheck "check: balloon warns" "$doctor" '.checks[] | select(.id == "balloon") | .status == "warn"'
jcheck "check: says why the host gets nothing back" "$doctor" \
	'.checks[] | select(.id == "balloon") | .why | test("cannot get any freed guest memory back")'
jcheck "check: names the QEMU fix" "$doctor" \
	'.checks[] | select(.id == "balloon") | .fix | test("free-page-reporting=on")'
human=$(limactl shell trimnob vmcost-agent check)
check "check (human) lists the balloon warning with its fix" \
	sh -c "printf '%s' \"\$1\" | grep -q '^warn balloon: without a balloon'" sh "$human"

summary
