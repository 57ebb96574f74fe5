#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The templates' provision scripts on a real kernel. boot-quiet-disk.sh, boot-kernel-args.sh and
# idle-tunings.sh run in the lab guest with busybox (as on Alpine), chrooted into the guest's ext4
# scratch disk: inside the chroot that disk is "/", so the tmpfs on /var/log, the remount with
# commit=60, /sys/class/tty and fstrim are the kernel's own. OpenRC and GRUB are stubbed. Then a
# guest boots with the template's kernel arguments, and each of them must be in effect.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init
repo=$LAB_TEST_REPO
vm=$repo/lab/vm
work=$(mktemp -d)
trap 'rm -rf "$work"; lab_cleanup' EXIT

lab_start tpl
in_guest() { "$vm" shell tpl -- "$@"; }
in_chroot() { "$vm" shell tpl -- chroot /mnt/scratch /bin/busybox env PATH=/stubs:/bin "$@"; }

# The chroot: busybox, stand-ins for OpenRC and grub-mkconfig, and the files of Lima's Alpine
# cloud image that the scripts edit.
cat >"$work/setup.sh" <<'EOF'
set -eu
r=/mnt/scratch
mkdir -p "$r/bin" "$r/stubs" "$r/proc" "$r/sys" "$r/dev" "$r/run" "$r/tmp" "$r/var/log" "$r/etc/conf.d" \
	"$r/etc/init.d" "$r/etc/default" "$r/etc/runlevels/default" "$r/etc/runlevels/boot" "$r/boot/grub"
cp /bin/busybox "$r/bin/busybox"
chroot "$r" /bin/busybox --install -s /bin
for s in rc-update rc-service; do
	printf '#!/bin/sh\necho "%s $*" >>/stub.log\n' "$s" >"$r/stubs/$s"
done
cat >"$r/stubs/grub-mkconfig" <<'STUB'
#!/bin/sh
echo "grub-mkconfig $*" >>/stub.log
. /etc/default/grub
printf 'set timeout=%s\nlinux /vmlinuz %s\n' "$GRUB_TIMEOUT" "$GRUB_CMDLINE_LINUX_DEFAULT" >"$2"
STUB
chmod 755 "$r"/stubs/*
printf '/dev/vda\t/\text4\trw,relatime\t0 1\n' >"$r/etc/fstab"
cat >"$r/etc/inittab" <<'TAB'
::sysinit:/sbin/openrc sysinit
::wait:/sbin/openrc default
tty1::respawn:/sbin/getty 38400 tty1
ttyS0::respawn:/sbin/getty -L 0 ttyS0 vt100
ttyS1::respawn:/sbin/getty -L 0 ttyS1 vt100
ttyAMA0::respawn:/sbin/getty -L 0 ttyAMA0 vt100
::shutdown:/sbin/openrc shutdown
TAB
echo 'SYSLOGD_OPTS="-t"' >"$r/etc/conf.d/syslog"
for s in syslog acpid; do printf '#!/sbin/openrc-run\n' >"$r/etc/init.d/$s"; done
ln -sf /etc/init.d/acpid "$r/etc/runlevels/default/acpid"
printf 'GRUB_TIMEOUT=10\nGRUB_CMDLINE_LINUX_DEFAULT="console=ttyS0"\n' >"$r/etc/default/grub"
echo "first boot log" >"$r/var/log/cloud-init.log"
mount -t proc proc "$r/proc"
mount -t sysfs sys "$r/sys"
mount -t devtmpfs dev "$r/dev"
mount -t tmpfs run "$r/run"
EOF
"$vm" push tpl "$work/setup.sh" /tmp/setup.sh
for f in boot-quiet-disk.sh boot-kernel-args.sh idle-tunings.sh idle-sysctls.sh; do
	"$vm" push tpl "$repo/provision/$f" "/tmp/$f"
done
check "chroot on the scratch disk is set up" in_guest sh -c \
	'sh /tmp/setup.sh && cp /tmp/boot-quiet-disk.sh /tmp/boot-kernel-args.sh /tmp/idle-tunings.sh /tmp/idle-sysctls.sh /mnt/scratch/'
check "inside the chroot the scratch ext4 is /" matches "$(in_chroot cat /proc/mounts)" '^/dev/vda / ext4 '

# ---- boot-quiet-disk.sh --------------------------------------------------------------------------
if out=$(in_chroot sh /boot-quiet-disk.sh 2>&1); then ok "boot-quiet-disk.sh runs"; else
	fail "boot-quiet-disk.sh runs"
	echo "$out" | sed 's/^/    /'
fi
mounts=$(in_chroot cat /proc/mounts)
check "/var/log is a 64 MiB tmpfs" matches "$mounts" '^tmpfs /var/log tmpfs .*size=65536k'
check "the root ext4 commits every 60 s" matches "$mounts" '^/dev/vda / ext4 .*commit=60'
check "what was logged before the mount is in the tmpfs" \
	matches "$(in_chroot cat /var/log/cloud-init.log)" '^first boot log$'
fstab=$(in_chroot cat /etc/fstab)
check "fstab mounts /var/log on tmpfs from the next boot" \
	matches "$fstab" '^tmpfs[[:space:]]+/var/log[[:space:]]+tmpfs'
check "fstab's root line has commit=60" \
	matches "$fstab" '^/dev/vda[[:space:]]+/[[:space:]]+ext4[[:space:]]+rw,relatime,commit=60'
before=$(in_chroot sh -c 'md5sum /etc/fstab; grep -c " /var/log " /proc/mounts')
in_chroot sh /boot-quiet-disk.sh >/dev/null 2>&1
after=$(in_chroot sh -c 'md5sum /etc/fstab; grep -c " /var/log " /proc/mounts')
check "a second boot mounts nothing twice and leaves fstab alone" test "$before" = "$after"

# ---- boot-kernel-args.sh -------------------------------------------------------------------------
if out=$(in_chroot sh /boot-kernel-args.sh 2>&1); then ok "boot-kernel-args.sh runs"; else
	fail "boot-kernel-args.sh runs"
	echo "$out" | sed 's/^/    /'
fi
args=$(sed -n 's/^[[:space:]]*kernel_args="\(.*\)"$/\1/p' "$repo/provision/boot-kernel-args.sh")
check "grub.cfg carries the kernel arguments ($args)" \
	matches "$(in_chroot cat /boot/grub/grub.cfg)" "^linux /vmlinuz console=ttyS0 $args\$"
check "grub.cfg waits for nobody" matches "$(in_chroot cat /boot/grub/grub.cfg)" '^set timeout=0$'
before=$(in_chroot sh -c 'find /etc /boot -type f | sort | xargs md5sum')
in_chroot sh /boot-kernel-args.sh >/dev/null 2>&1
after=$(in_chroot sh -c 'find /etc /boot -type f | sort | xargs md5sum')
check "a second boot changes no file" test "$before" = "$after"

# ---- idle-tunings.sh -----------------------------------------------------------------------------
if out=$(in_chroot sh /idle-tunings.sh 2>&1); then ok "idle-tunings.sh runs"; else
	fail "idle-tunings.sh runs"
	echo "$out" | sed 's/^/    /'
fi
echo "$out" | sed 's/^/    /'
tab=$(in_chroot cat /etc/inittab)
check "getty kept on ttyS0 (a 16550A)" matches "$tab" '^ttyS0::'
check "getty kept on tty1 (a virtual terminal)" matches "$tab" '^tty1::'
check "getty removed from ttyS1 (registered, no UART)" matches "$tab" '^#vmcost-no-console# ttyS1::'
check "getty removed from ttyAMA0 (absent)" matches "$tab" '^#vmcost-no-console# ttyAMA0::'
check "syslogd ring buffer" matches "$(in_chroot cat /etc/conf.d/syslog)" '^SYSLOGD_OPTS="-t -C64"$'
check "fstrim ran on the ext4 root" matches "$out" '^/: |fstrim / failed'
before=$(in_chroot sh -c 'find /etc /boot -type f | sort | xargs md5sum')
in_chroot sh /idle-tunings.sh >/dev/null 2>&1
after=$(in_chroot sh -c 'find /etc /boot -type f | sort | xargs md5sum')
check "a second boot changes no file" test "$before" = "$after"

# The ISO has no GRUB: the sysctl-able arguments are set in the running kernel instead, by the
# agent fragment's idle-sysctls.sh (a base of both templates: Lima runs its scripts first).
in_chroot sh -c 'rm /etc/default/grub; echo 1 >/proc/sys/kernel/watchdog'
if out=$(in_chroot sh /idle-sysctls.sh 2>&1) && out=$out$(in_chroot sh /idle-tunings.sh 2>&1); then
	ok "the fragment's idle-sysctls.sh, then idle-tunings.sh, run without GRUB"
else
	fail "the fragment's idle-sysctls.sh, then idle-tunings.sh, run without GRUB"
	echo "$out" | sed 's/^/    /'
fi
check "without GRUB: the kernel's lockup watchdog is turned off" \
	matches "$(in_guest cat /proc/sys/kernel/watchdog)" '^0$'
check "without GRUB: proactive compaction is turned off" \
	matches "$(in_guest cat /proc/sys/vm/compaction_proactiveness)" '^0$'
check "without GRUB: /etc/sysctl.d keeps both for the next boot" \
	matches "$(in_chroot cat /etc/sysctl.d/60-vmcost-idle.conf)" '^vm.compaction_proactiveness = 0$'
in_guest sh -c 'umount /mnt/scratch/var/log /mnt/scratch/run /mnt/scratch/dev /mnt/scratch/sys /mnt/scratch/proc'
"$vm" stop tpl >/dev/null 2>&1

# ---- the kernel arguments ------------------------------------------------------------------------
lab_start tpl-args --cmdline "$args"
in_args_guest() { "$vm" shell tpl-args -- "$@"; }
cmdline=$(in_args_guest cat /proc/cmdline | tr ' ' '\n')
for arg in $args; do
	check "booted with $arg" matches "$cmdline" "^$arg\$"
	case $arg in
	init_on_free=1)
		check "init_on_free=1: freed pages are zeroed" matches "$(in_args_guest dmesg)" 'heap free:on'
		;;
	psi=1)
		check "psi=1: /proc/pressure/cpu is readable" \
			matches "$(in_args_guest cat /proc/pressure/cpu)" '^some avg10='
		;;
	nowatchdog)
		check "nowatchdog: the lockup watchdog is off" \
			matches "$(in_args_guest cat /proc/sys/kernel/watchdog)" '^0$'
		;;
	sysctl.vm.compaction_proactiveness=0)
		check "proactive compaction is off" \
			matches "$(in_args_guest cat /proc/sys/vm/compaction_proactiveness)" '^0$'
		;;
	transparent_hugepage=madvise)
		check "THP only on madvise" \
			matches "$(in_args_guest cat /sys/kernel/mm/transparent_hugepage/enabled)" '\[madvise\]'
		;;
	tsc=reliable)
		check "tsc=reliable: the TSC is the clocksource" matches "$(in_args_guest cat \
			/sys/devices/system/clocksource/clocksource0/current_clocksource)" '^tsc$'
		;;
	*) fail "no check for kernel argument $arg: add one here" ;;
	esac
done
"$vm" stop tpl-args >/dev/null 2>&1
summary
