#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot): the idle tunings of the minimal Docker host.
# Each one carries the measurement that justifies it
# (docs/published-measurements.md#the-lima-write-up: Lima 2.2, vz, Alpine 3.23, host CPU of the VM
# process while idle: 1.31 % of a core as shipped, 1.00 % after these; results/idle-tunings-lab-*.md
# for the kernel arguments measured in the lab).
# Idempotent: a second run changes no file; killed anywhere, the next run ends as a clean one
# would. Works on the cloud image and on the alpine-lima ISO
# (whose kernel command line is baked into the image and cannot change).
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
set -eu
root=${VMCOST_ROOT:-}

# The kernel command line (init_on_free=1 psi=1 nowatchdog sysctl.vm.compaction_proactiveness=0)
# and GRUB_TIMEOUT=0 are set by a boot script on the cloud image (provision/boot-kernel-args.sh),
# so the first boot's reboot (provision/boot-first-reboot.sh) makes them live.
# Where the command line cannot change (the ISO), what sysctl can set of it (kernel.watchdog=0,
# vm.compaction_proactiveness=0) is set by the template fragment's installer on every guest it
# serves, these templates' included (provision/idle-sysctls.sh, in the agent's tarball).

say() { echo "vmcost idle-tunings: $*"; }

# Replaces file with the content of new only when it differs; true if it changed. A boot that
# changes nothing writes nothing. The new content goes to a file beside the old one, with its mode
# and owner, which is then renamed over it: a shutdown can kill this script anywhere, and a kill
# leaves the old file or the new one, never an empty /etc/inittab (busybox init would start
# nothing).
update_file() { # file, new-content-file
    if [ -f "$1" ] && cmp -s "$1" "$2"; then
        rm -f "$2" "$1.vmcost-new"
        return 1
    fi
    [ ! -e "$1" ] || cp -p "$1" "$1.vmcost-new"
    cat "$2" >"$1.vmcost-new"
    mv -f "$1.vmcost-new" "$1"
    rm -f "$2"
}

in_any_runlevel() { # service
    for link in "$root"/etc/runlevels/*/"$1"; do
        [ -L "$link" ] || [ -e "$link" ] && return 0
    done
    return 1
}

# busybox syslogd to a fixed 64 KiB ring buffer read with `logread`: nothing reaches the disk and
# RAM use is bounded. Measured with cloud-init-hotplugd off: 1.31 -> 1.27 % of a host core.
# (`rc-update del syslog` does not stick: sshd's `use logger` brings it back when Lima restarts
# sshd at the end of boot.)
tune_syslog() {
    [ -e "$root/etc/init.d/syslog" ] || return 0
    conf=$root/etc/conf.d/syslog
    want='SYSLOGD_OPTS="-t -C64"'
    new=$(mktemp)
    if [ -f "$conf" ]; then
        awk -v want="$want" '
            /^[ \t]*SYSLOGD_OPTS=/ { if (!done) print want; done = 1; next }
            { print }
            END { if (!done) print want }' "$conf" >"$new"
    else
        echo "$want" >"$new"
    fi
    if update_file "$conf" "$new"; then
        say "syslogd logs to a 64 KiB ring buffer (logread)"
        rc-service --ifstarted syslog restart
    elif ! syslogd_has_ring_buffer; then
        say "the running syslogd has no ring buffer: restarted with $want"
        rc-service --ifstarted syslog restart
    fi
}

# False when a syslogd runs without a ring buffer (-C). The file alone does not tell: on the ISO,
# OpenRC starts syslog (boot runlevel) from the image's /etc before the data volume's /etc, where
# the file above persists, is mounted over it, so every boot after the first starts syslogd with
# the image's options and the file is already right. A boot killed between the file and the
# restart leaves the same state.
syslogd_has_ring_buffer() {
    # Alpine's syslog service keeps the pid here.
    pidfile=$root/run/syslogd.pid
    [ -f "$pidfile" ] && read -r pid <"$pidfile" && [ -r "$root/proc/$pid/cmdline" ] || return 0
    case " $(tr '\0' ' ' <"$root/proc/$pid/cmdline")" in
    *" -C"*) return 0 ;;
    esac
    return 1
}

# A console exists when the kernel registered its tty. 8250 serial ports are registered even
# without hardware; those report type 0 (PORT_UNKNOWN).
console_exists() { # tty name
    [ -e "$root/sys/class/tty/$1" ] || return 1
    case $1 in
    ttyS*) [ "$(cat "$root/sys/class/tty/$1/type" 2>/dev/null || echo 0)" != 0 ] ;;
    esac
}

# No getty on a console the VM does not have: busybox init respawns it forever. The cloud image's
# getty on ttyAMA0 (absent on vz) cost 0.3 % of a host core, 1.27 -> 1.00 %: the largest single
# drop measured. Lines are commented out with a marker, and restored if the console appears.
mark='#vmcost-no-console# '
tune_inittab() {
    tab=$root/etc/inittab
    [ -f "$tab" ] || return 0
    new=$(mktemp)
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in
        "$mark"*)
            orig=${line#"$mark"}
            if console_exists "${orig%%:*}"; then line=$orig; fi
            ;;
        '#'* | '') ;;
        *)
            id=${line%%:*}
            action=$(printf '%s\n' "$line" | cut -d: -f3)
            case $action in
            respawn | askfirst)
                case $id in
                tty* | hvc*) console_exists "$id" || line=$mark$line ;;
                esac
                ;;
            esac
            ;;
        esac
        printf '%s\n' "$line"
    done <"$tab" >"$new"
    if update_file "$tab" "$new"; then
        say "getty disabled on consoles this VM does not have: $(grep -c "^$mark" "$tab" || true)"
    fi
    # Reload even when unchanged: on the ISO, init read the image's inittab before /etc was
    # mounted from the data volume. HUP makes busybox init drop the removed respawn entries.
    if [ -z "$root" ] && grep -q "^$mark" "$tab"; then
        kill -HUP 1
    fi
}

# cloud-init-hotplugd: a daemon for NIC hotplug, which a Lima VM never sees.
# Measured together with the syslog change: 1.31 -> 1.27 %.
disable_hotplugd() {
    for link in "$root"/etc/runlevels/*/cloud-init-hotplugd; do
        [ -L "$link" ] || [ -e "$link" ] || continue
        level=${link%/cloud-init-hotplugd}
        rc-update del cloud-init-hotplugd "${level##*/}"
        rc-service --ifstarted cloud-init-hotplugd stop
        say "cloud-init-hotplugd disabled"
    done
}

# Keep acpid: `limactl stop` asks for an ACPI power-off; without acpid it becomes a hard kill
# followed by fsck at the next boot.
keep_acpid() {
    [ -e "$root/etc/init.d/acpid" ] || return 0
    in_any_runlevel acpid && return 0
    rc-update add acpid default
    say "acpid enabled (graceful limactl stop)"
}

# The ISO has no GRUB and its command line cannot change: the fragment's idle-sysctls.sh sets
# what sysctl can of it (it runs before this script: Lima runs a base's scripts first). With
# GRUB the boot script has set the command line already.
tune_kernel() {
    [ ! -f "$root/etc/default/grub" ] || return 0
    say "no /etc/default/grub: the kernel command line is fixed by the image (the ISO bakes it in); the agent's installer sets what sysctl can of it"
}

# Trim every mounted block filesystem at every boot: deleted images and volumes go back to the
# host; once it returned 2 GB at once. (`fstrim -a` is util-linux only; busybox fstrim needs a
# mount point.)
trim_filesystems() {
    command -v fstrim >/dev/null 2>&1 || return 0
    awk '$1 ~ /^\/dev\// && $3 ~ /^(ext4|xfs|btrfs|vfat)$/ && !seen[$1]++ { print $2 }' \
        "$root/proc/mounts" | while read -r mountpoint; do
        fstrim -v "$root$mountpoint" || say "fstrim $mountpoint failed (no discard support?)"
    done
}

tune_syslog
tune_inittab
disable_hotplugd
keep_acpid
tune_kernel
trim_filesystems
