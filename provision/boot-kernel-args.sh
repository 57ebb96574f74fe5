#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: boot` (cloud image): the kernel command line and the GRUB timeout.
#
# Kernel arguments, added to GRUB's command line when their key is absent:
#   init_on_free=1  the guest zeroes what it frees; the VM's real RAM cost after a pgbench+FDB load
#                   (host RAM freed by stopping it) fell from 4193 to 2054 MB: XNU compresses
#                   zeroed pages ~18x (docs/published-measurements.md#the-lima-write-up)
#   psi=1           Alpine builds PSI disabled by default; vmcost-agent's idle test reads it
#   nowatchdog      no soft-lockup hrtimer every 4 s per CPU: idle guest timer interrupts
#                   9.9 -> 8.3 /s (lab, 2 vCPUs, mean of 3; results/idle-tunings-lab-2026-12-02.md)
#   sysctl.vm.compaction_proactiveness=0
#                   kcompactd stops waking every 500 ms: 9.9 -> 5.4 /s; both: 8.9 -> 4.0 /s
# Measured and left out (no gain beyond run-to-run noise): tsc=reliable, transparent_hugepage=madvise.
# GRUB_TIMEOUT=0: the Lima write-up found GRUB_TIMEOUT=10 on Alpine's 3.23.4 cloud image, 10 s in
# the boot menu at every boot (docs/published-measurements.md#the-lima-write-up). Alpine's image
# builds take the value from a build setting, so another image may have 0 already: then nothing
# changes.
#
# Why a boot script: cloud-init runs it (bootcmd) at every boot, and on the first boot of Lima's
# Alpine cloud image the template lists it before provision/boot-first-reboot.sh, which removes
# the image's `alpine` user and reboots. The new command line is therefore live after that
# reboot: no manual `limactl restart`. (An image without that user boots only once: the
# arguments then wait for the next restart; `vmcost doctor` shows which are active.)
#
# cloud-init concatenates every bootcmd into one /bin/sh script, so the body runs in a subshell.
# Idempotent: a boot that changes nothing writes nothing and runs no grub-mkconfig.
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
(
    set -eu
    root=${VMCOST_ROOT:-}
    kernel_args="init_on_free=1 psi=1 nowatchdog sysctl.vm.compaction_proactiveness=0"
    conf=$root/etc/default/grub
    cfg=$root/boot/grub/grub.cfg
    say() { echo "vmcost boot: $*"; }

    if [ ! -f "$conf" ]; then
        say "no /etc/default/grub: the kernel command line is fixed by the image"
        exit 0
    fi
    new=$(mktemp)
    awk -v args="$kernel_args" '
        function merge(value,   n, words, have, i, key, m, want) {
            n = split(value, words, /[ \t]+/)
            for (i = 1; i <= n; i++) {
                key = words[i]
                sub(/=.*/, "", key)
                if (key != "") have[key] = 1
            }
            m = split(args, want, " ")
            for (i = 1; i <= m; i++) {
                key = want[i]
                sub(/=.*/, "", key)
                if (!(key in have)) value = value == "" ? want[i] : value " " want[i]
            }
            return value
        }
        /^GRUB_TIMEOUT=/ { print "GRUB_TIMEOUT=0"; timeout = 1; next }
        /^GRUB_CMDLINE_LINUX_DEFAULT=/ {
            value = $0
            sub(/^GRUB_CMDLINE_LINUX_DEFAULT=/, "", value)
            q = substr(value, 1, 1)
            if (q == "\"" || q == "\047") {
                value = substr(value, 2)
                sub(/["\047][ \t]*$/, "", value)
            }
            print "GRUB_CMDLINE_LINUX_DEFAULT=\"" merge(value) "\""
            cmdline = 1
            next
        }
        { print }
        END {
            if (!timeout) print "GRUB_TIMEOUT=0"
            if (!cmdline) print "GRUB_CMDLINE_LINUX_DEFAULT=\"" merge("") "\""
        }' "$conf" >"$new"
    changed=0
    if ! cmp -s "$conf" "$new"; then
        # Beside it with its mode and owner, then renamed over it: a kill leaves the old file
        # or the new one. (A kill before grub-mkconfig leaves grub.cfg older than the file: the
        # next boot regenerates it.)
        cp -p "$conf" "$conf.vmcost-new"
        cat "$new" >"$conf.vmcost-new"
        mv -f "$conf.vmcost-new" "$conf"
        changed=1
    fi
    rm -f "$new" "$conf.vmcost-new"
    if [ "$changed" = 1 ] || [ ! -f "$cfg" ] || [ -n "$(find "$conf" -newer "$cfg")" ]; then
        if command -v grub-mkconfig >/dev/null 2>&1; then
            grub-mkconfig -o "$cfg"
        elif command -v update-grub >/dev/null 2>&1; then
            update-grub
        else
            say "neither grub-mkconfig nor update-grub found: $cfg not regenerated"
            exit 0
        fi
        say "GRUB: timeout 0, kernel arguments: $kernel_args (live from the next boot)"
    fi
)
