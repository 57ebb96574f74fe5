#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# idle-sysctls.sh, in the agent's source tarball (provision/idle-sysctls.sh in the repository):
# the kernel settings that make an idle guest wake less without changing what it does, on every
# guest the template fragment serves: the vmcost templates' own and any other (Lima's debian,
# ubuntu, fedora...). Run by install.sh at every boot. It writes
# /etc/sysctl.d/60-vmcost-idle.conf for the boots to come and /proc/sys now: on the alpine-lima
# ISO, OpenRC's sysctl service reads /etc/sysctl.d before the data volume's /etc is mounted, so
# the file alone would not reach it. A key the guest's own configuration sets (/etc/sysctl.conf,
# another /etc/sysctl.d file) is left to it, and so is one this kernel does not have.
# Idempotent: a second run changes no file. VMCOST_ROOT (tests only) prefixes every path.
set -eu
root=${VMCOST_ROOT:-}
conf=/etc/sysctl.d/60-vmcost-idle.conf

# Each setting with its measured effect, in the lab: Debian's 6.1 cloud kernel, 2 vCPUs, idle
# guest timer interrupts per second, 3 runs each (results/idle-tunings-lab-2026-12-02.md).
# They were measured as the kernel arguments the vmcost templates put on the command line;
# the same settings made with sysctl once the guest runs were not measured separately.
#   kernel.watchdog=0 (nowatchdog): no soft-lockup watchdog hrtimer on every vCPU every 4 s
#     (watchdog_thresh x 2/5): 9.9 -> 8.3 /s. In a VM a vCPU the host did not run looks like
#     a lockup to it anyway.
#   vm.compaction_proactiveness=0 (sysctl.vm.compaction_proactiveness=0): kcompactd stops
#     waking every 500 ms per node to measure fragmentation: 9.9 -> 5.4 /s. Compaction on
#     demand stays, and vmcost-agent compacts after a trim when free-page reporting is on.
#   Both: 8.9 -> 4.0 /s.
settings="kernel.watchdog=0 vm.compaction_proactiveness=0"

say() { echo "vmcost idle-sysctls: $*"; }

# The /proc/sys file of a key (dots or slashes).
proc_file() { # key
	echo "$root/proc/sys/$(echo "$1" | tr . /)"
}

# True when the guest's own configuration sets key: /etc/sysctl.conf or an /etc/sysctl.d file
# other than ours ("key = value", "key=value", "-key = value", with dots or slashes).
set_elsewhere() { # key
	pattern="^[[:space:]]*-?$(echo "$1" | sed 's/[./]/[.\/]/g')[[:space:]]*="
	for f in "$root/etc/sysctl.conf" "$root"/etc/sysctl.d/*.conf; do
		if [ -f "$f" ] && [ "$f" != "$root$conf" ] && grep -Eq "$pattern" "$f"; then
			return 0
		fi
	done
	return 1
}

mine=""
for kv in $settings; do
	key=${kv%%=*}
	if [ ! -f "$(proc_file "$key")" ]; then
		say "$key: not in this kernel, left out"
	elif set_elsewhere "$key"; then
		say "$key: set by the guest's own sysctl configuration, left to it"
	else
		mine="$mine $kv"
	fi
done

if [ -z "$mine" ]; then
	[ ! -e "$root$conf" ] || { rm -f "$root$conf" && say "removed $conf: nothing left to set"; }
	exit 0
fi
new=$(mktemp)
{
	echo "# vmcost idle tunings (provision/idle-sysctls.sh, the template fragment's): fewer idle"
	echo "# wakeups, measured in results/idle-tunings-lab-2026-12-02.md. Your own sysctl files win:"
	echo "# a key set there is left out of this one."
	for kv in $mine; do
		echo "${kv%%=*} = ${kv#*=}"
	done
} >"$new"
if [ -f "$root$conf" ] && cmp -s "$root$conf" "$new"; then
	rm -f "$new"
else
	mkdir -p "$root${conf%/*}"
	cat "$new" >"$root$conf.vmcost-new"
	rm -f "$new"
	mv -f "$root$conf.vmcost-new" "$root$conf"
	say "wrote $conf:$mine"
fi
for kv in $mine; do
	file=$(proc_file "${kv%%=*}")
	[ "$(cat "$file")" = "${kv#*=}" ] || echo "${kv#*=}" >"$file"
done
