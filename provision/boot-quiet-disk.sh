#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: boot`: an idle guest that writes 0 bytes to its disk.
#
# Measured reason (docs/published-measurements.md#idle-disk-writes): the only writer in an idle
# guest is lima-guestagent logging "SyncTime: ... drift" every 10 s; ~600 B/min of log becomes
# ~25 KB/min of block writes through the ext4 journal. /var/log on tmpfs plus ext4 commit=60 gave
# 0 bytes in 180-240 s of idle. This must be a boot script: at the first boot cloud-init runs it
# (bootcmd) before Lima's boot scripts install and start lima-guestagent, while from a `system`
# script the agent would keep writing to the on-disk inode it already opened. From the next boot
# on the agent is an OpenRC service that may start before cloud-init's bootcmd; what protects
# those boots is the fstab line this script adds, which OpenRC's localmount mounts before any
# service starts. cloud-init still runs the script at every boot; it then changes nothing.
#
# cloud-init concatenates every bootcmd into one /bin/sh script, so the body runs in a subshell:
# `set -e` and early returns stay inside it. Idempotent: a second run changes nothing.
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
(
    set -eu
    root=${VMCOST_ROOT:-}
    # 64 MiB caps RAM use; lima-guestagent's log grows ~1 MB a day, dockerd's by events only.
    varlog_opts=nosuid,nodev,noexec,mode=0755,size=64m
    say() { echo "vmcost boot: $*"; }

    # fstype and options mounted at a mount point ("" if not mounted); the last mount wins.
    mounted() { # mountpoint, field (3 = type, 4 = options)
        awk -v m="$1" -v f="$2" '$2 == m { v = $f } END { print v }' "$root/proc/mounts"
    }

    # Replace file with new content only when it differs. The new content goes to a file beside
    # it, with its mode and owner, renamed over it: a boot killed here (power loss) leaves the old
    # /etc/fstab or the new one, never a half-written one.
    update_file() { # file, new-content-file
        if cmp -s "$1" "$2"; then
            rm -f "$2" "$1.vmcost-new"
            return 1
        fi
        cp -p "$1" "$1.vmcost-new"
        cat "$2" >"$1.vmcost-new"
        mv -f "$1.vmcost-new" "$1"
        rm -f "$2"
    }

    # 1. /var/log on tmpfs now, with what was logged so far (cloud-init.log) copied over.
    if [ "$(mounted /var/log 3)" != tmpfs ]; then
        seed=$(mktemp -d "$root/run/vmcost-varlog.XXXXXX")
        cp -a "$root/var/log/." "$seed/"
        mount -t tmpfs -o "$varlog_opts" tmpfs "$root/var/log"
        cp -a "$seed/." "$root/var/log/"
        rm -rf "$seed"
        say "/var/log is on tmpfs"
    fi

    # ... and from the next boot on before anything starts (OpenRC localmount reads fstab).
    if ! awk '$1 !~ /^#/ && $2 == "/var/log" { found = 1 } END { exit !found }' "$root/etc/fstab"; then
        printf 'tmpfs\t/var/log\ttmpfs\t%s\t0 0\n' "$varlog_opts" >>"$root/etc/fstab"
        say "added /var/log tmpfs to /etc/fstab"
    fi

    # 2. The root ext4 commits its journal every 60 s instead of every 5 s.
    if [ "$(mounted / 3)" = ext4 ]; then
        case ",$(mounted / 4)," in
        *,commit=60,*) ;;
        *)
            mount -o remount,commit=60 "$root/"
            say "remounted / with commit=60"
            ;;
        esac
        new=$(mktemp)
        awk '$1 !~ /^#/ && $2 == "/" && $3 == "ext4" && $4 !~ /(^|,)commit=/ {
            $4 = $4 ",commit=60"
        } { print }' "$root/etc/fstab" >"$new"
        if update_file "$root/etc/fstab" "$new"; then
            say "added commit=60 to / in /etc/fstab"
        fi
    fi
)
