#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# provision/idle-sysctls.sh (the template fragment's idle sysctls, on every guest it serves) on
# fake roots: what it writes to /etc/sysctl.d and /proc/sys, that a key the guest's own sysctl
# configuration sets (any spelling systemd-sysctl and busybox accept) or that the kernel lacks is
# left alone, that a comment does not count, and that a second run changes no file.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

guest() { # dir: a kernel with both keys, at the defaults
	rm -rf "$1"
	mkdir -p "$1/proc/sys/kernel" "$1/proc/sys/vm" "$1/etc/sysctl.d"
	echo 1 >"$1/proc/sys/kernel/watchdog"
	echo 20 >"$1/proc/sys/vm/compaction_proactiveness"
}

run() { # root
	VMCOST_ROOT=$1 sh provision/idle-sysctls.sh >"$1.out" 2>&1
}

values() { # root: "watchdog compaction"
	echo "$(cat "$1/proc/sys/kernel/watchdog") $(cat "$1/proc/sys/vm/compaction_proactiveness")"
}

r=$tmp/guest
conf=$r/etc/sysctl.d/60-vmcost-idle.conf
guest "$r"
check "runs" run "$r"
check "writes both settings for the next boots" sh -c \
	"grep -qx 'kernel.watchdog = 0' '$conf' && grep -qx 'vm.compaction_proactiveness = 0' '$conf'"
check "... and sets them now" test "$(values "$r")" = "0 0"
check "the file names where its settings were measured" grep -q 'results/idle-tunings-lab-2026-12-02.md' "$conf"
before=$(stat -c '%Y %i' "$conf")
sleep 1.1
run "$r"
check "a second run rewrites nothing" test "$(stat -c '%Y %i' "$conf")" = "$before"
check "... and says nothing" test ! -s "$r.out"

# A key the guest's own files set is theirs, whatever the spelling.
for line in 'kernel.watchdog = 1' 'kernel.watchdog=1' '  kernel/watchdog = 1' '-kernel.watchdog = 1'; do
	guest "$r"
	printf '%s\n' "$line" >"$r/etc/sysctl.d/99-mine.conf"
	run "$r"
	check "set by the guest as \"$line\": left out of ours" sh -c \
		"! grep -q watchdog '$conf' && grep -qx 'vm.compaction_proactiveness = 0' '$conf'"
	check "... and not changed now (\"$line\")" test "$(values "$r")" = "1 0"
done
check "... saying so" grep -q 'kernel.watchdog: set by the guest' "$r.out"
guest "$r"
printf 'vm.compaction_proactiveness = 10\n' >"$r/etc/sysctl.conf"
run "$r"
check "set in /etc/sysctl.conf: left to it" sh -c "! grep -q compaction '$conf'"
check "... and not changed now" test "$(values "$r")" = "0 20"
guest "$r"
printf '# kernel.watchdog = 1\n#vm.compaction_proactiveness=10\n' >"$r/etc/sysctl.d/99-mine.conf"
run "$r"
check "a commented-out line is not a setting" test "$(values "$r")" = "0 0"

# A kernel without proactive compaction (before 5.9): that key is left out.
guest "$r"
rm "$r/proc/sys/vm/compaction_proactiveness"
run "$r"
check "a key the kernel lacks is left out of the file" sh -c \
	"grep -qx 'kernel.watchdog = 0' '$conf' && ! grep -q compaction '$conf'"
check "... saying so" grep -q 'vm.compaction_proactiveness: not in this kernel' "$r.out"

# Nothing left to set: our file goes.
printf 'kernel.watchdog = 1\n' >"$r/etc/sysctl.d/99-mine.conf"
run "$r"
check "nothing left to set: the file is removed" test ! -e "$conf"
check "no /etc/sysctl.d at all and nothing to set: exits 0" sh -c \
	"rm -rf '$r/etc' && VMCOST_ROOT='$r' sh provision/idle-sysctls.sh"
suite_summary
