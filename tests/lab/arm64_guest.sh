#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The static aarch64 agent in an aarch64 guest (lab/arm64-guest: Debian's arm64 cloud kernel,
# qemu-system-aarch64 -machine virt under TCG, virtio-balloon-pci with free-page reporting). One
# boot: the balloon on PCI with reporting negotiated, wakeups naming the architected timer
# (arch_timer, on the GIC) as the tick, and a forced trim that drops page cache written to a disk.
# shellcheck source-path=SCRIPTDIR source=../suite.sh
. "$(dirname "$0")/../suite.sh"
repo=$(cd "$(dirname "$0")/../.." && pwd)

if ! command -v qemu-system-aarch64 >/dev/null 2>&1; then
	skip "no qemu-system-aarch64 (make deps: qemu-system-arm)"
	suite_summary
	exit
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 400 MiB written and synced on an ext2 disk stay as clean page cache, above the 128 MiB floor.
cat >"$tmp/guest.sh" <<'GUEST'
echo "@@ balloon"; vmcost-agent --json balloon
echo "@@ wakeups"; vmcost-agent --json wakeups 5s 2>/dev/null
mkdir -p /mnt && mount /dev/vda /mnt &&
	dd if=/dev/zero of=/mnt/fill bs=1M count=400 2>/dev/null && sync
echo "@@ cached $(awk '/^(Active|Inactive)\(file\):/ {s += $2} END {print s}' /proc/meminfo)"
echo "@@ trim"; vmcost-agent --json trim --force
echo "@@ cached $(awk '/^(Active|Inactive)\(file\):/ {s += $2} END {print s}' /proc/meminfo)"
echo "@@ end"
GUEST
if ! "$repo/lab/arm64-guest" --fpr --disk 600 "$tmp/guest.sh" >"$tmp/out" 2>&1; then
	fail "the aarch64 guest did not run: $(tail -n 5 "$tmp/out")"
	suite_summary
	exit
fi
# The serial console ends lines with CR LF.
tr -d '\r' <"$tmp/out" >"$tmp/guest.out"
mv "$tmp/guest.out" "$tmp/out"
# section NAME: the JSON between "@@ NAME" and the next "@@", into $tmp/NAME.json (for json).
section() {
	awk -v s="@@ $1" '$0 == s {f = 1; next} /^@@ / {f = 0} f' "$tmp/out" >"$tmp/$1.json"
}
check "the guest ran the script to its end" test "$(grep -c '^@@ end' "$tmp/out")" -eq 1

section balloon
json "the balloon is a virtio-pci device on the virt machine" "$tmp/balloon.json" \
	'.device.transport == "pci"'
json "free-page reporting negotiated" "$tmp/balloon.json" '.page_reporting == true'

section wakeups
tick=$(jq -r '[.interrupts[] | select(.timer)] | .[0].description' "$tmp/wakeups.json")
case $tick in
*arch_timer*) ok "wakeups names the tick: $tick" ;;
*) fail "wakeups timer row: $tick (expected arch_timer)" ;;
esac

before=$(sed -n 's/^@@ cached //p' "$tmp/out" | sed -n 1p)
after=$(sed -n 's/^@@ cached //p' "$tmp/out" | sed -n 2p)
section trim
json "the forced trim ran" "$tmp/trim.json" '.ran == true'
# Without cgroup2 the trim falls back to drop_caches, which drops clean cache whole: at least 200
# of the 400 MiB must go.
if [ -n "$before" ] && [ -n "$after" ] && [ $((before - after)) -ge $((200 * 1024)) ]; then
	ok "page cache fell from $((before / 1024)) MiB to $((after / 1024)) MiB"
else
	fail "page cache before ${before:-?} KiB, after ${after:-?} KiB: less than 200 MiB dropped"
fi
[ "$SUITE_FAILED" -eq 0 ] || { echo "-- guest output:"; grep -v '^ *"' "$tmp/out" | tail -n 30; }
suite_summary
