#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: boot` (cloud image): the Lima user is a member of the `docker`
# group before its first login.
#
# Lima forwards docker.sock with `ssh -O forward` over its SSH master connection, so the socket is
# opened by that login's session, whose groups were fixed when it logged in: once the boot scripts
# are done, before any `system` script runs. A group added by a system script reaches only later
# logins, so dockerd re-creating its socket (root:docker 0660) after a restart would lock the host
# out until the next boot. cloud-init runs this (bootcmd) at every boot before it creates the user
# (first boot) and before sshd lets anybody in, so the membership is in /etc/group for every login
# of the Lima user: the user is added by name even when it does not exist yet, which is what
# /etc/group holds anyway. Docker's own package only creates the group if it is missing.
#
# cloud-init concatenates every bootcmd into one /bin/sh script, so the body runs in a subshell.
# Idempotent: a boot that changes nothing writes nothing.
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
(
    set -eu
    root=${VMCOST_ROOT:-}
    # Lima renders this template field with the instance's user name.
    user="{{.User}}"
    group=docker
    file=$root/etc/group
    say() { echo "vmcost boot: $*"; }

    if ! grep -q "^$group:" "$file"; then
        addgroup -S "$group"
        say "created the $group group"
    fi
    new=$(mktemp)
    awk -F: -v OFS=: -v g="$group" -v u="$user" '
        $1 == g {
            n = split($4, m, ",")
            for (i = 1; i <= n; i++) if (m[i] == u) found = 1
            if (!found) $4 = $4 == "" ? u : $4 "," u
        }
        { print }' "$file" >"$new"
    if cmp -s "$file" "$new"; then
        rm -f "$new" "$file.vmcost-new"
    else
        # Beside it with its mode and owner, then renamed over it: a boot killed here (power
        # loss) leaves the old /etc/group or the new one, never a half-written one.
        cp -p "$file" "$file.vmcost-new"
        cat "$new" >"$file.vmcost-new"
        mv -f "$file.vmcost-new" "$file"
        rm -f "$new"
        say "$user is in the $group group from its first login on"
    fi
)
