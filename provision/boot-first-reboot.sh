#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: boot` (cloud image): the first boot's reboot, done before the Lima
# user exists, so that nobody logs in to a boot that is going down.
#
# Lima's Alpine cloud image ships a user `alpine` with uid 1000. Lima's boot.essential script
# 00-alpine-user-group.sh removes it, runs `cloud-init clean --logs` and reboots, so that
# cloud-init creates the Lima user at the next boot. Lima runs that script late (cloud-init's
# final stage) and busybox `reboot` returns at once, so Lima's boot script goes on: it tells the
# host the guest is ready for SSH, and the host agent can open its SSH master connection, and with
# it the docker.sock and vmcost-agent.sock forwards, in the boot that is shutting down. Lima 2.2.0
# sets those forwards up once per `limactl start`: they stay dead until the next start
# (docs/templates.md#the-first-boot has the sources).
#
# This script does the same removal first: cloud-init runs bootcmd before it creates users or
# writes Lima's boot script, so in this boot the Lima user does not exist and nobody can log in.
# After `reboot` it waits for the shutdown to end it, so cloud-init goes no further in this boot.
# At the next boot the image user is gone: Lima's script finds nothing to do and does not reboot,
# and the SSH master logs in to the boot that stays up. The boot scripts listed before this one in
# the template (the kernel command line) have run: their settings are live after this reboot.
#
# Order: cloud-init's state, then the home, then the user, then reboot. A boot killed before
# userdel (power loss) finds the user again next time and does it all again; one killed after it
# has nothing left to do but the reboot it was about to make.
#
# cloud-init concatenates every bootcmd into one /bin/sh script, so the body runs in a subshell.
# From the second boot on it changes nothing and returns at once.
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
(
    set -eu
    root=${VMCOST_ROOT:-}
    # Lima renders this template field with the instance's user name.
    user="{{.User}}"
    image_user=alpine
    home=$root/home/$image_user
    # The reboot takes as long as OpenRC's shutdown; past this something is wrong: go on.
    wait_seconds=600
    say() { echo "vmcost boot: $*"; }

    # A Lima user named alpine is the image's user: Lima keeps it, and so does this script.
    [ "$user" != "$image_user" ] || exit 0
    # What Lima's script tests (`id -u alpine` is 1000), read from the file.
    uid=$(awk -F: -v u="$image_user" '$1 == u { print $3 }' "$root/etc/passwd")
    [ "$uid" = 1000 ] || exit 0

    say "first boot of the cloud image: removing its user $image_user and rebooting before $user exists"
    cloud-init clean --logs
    rm -rf "$home"
    if command -v userdel >/dev/null 2>&1; then
        userdel "$image_user"
    else
        deluser "$image_user"
    fi
    reboot
    sleep "$wait_seconds"
    say "no reboot within $wait_seconds s: this boot goes on, the kernel arguments take effect after \`limactl restart\`"
    exit 1
)
