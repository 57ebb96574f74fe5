#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The templates' provision scripts run on a fake Alpine root with apk, OpenRC, mount, fstrim,
# grub-mkconfig, addgroup, chown and wget stubbed (tests/sh/provision-stubs), with busybox's
# applets next on PATH when busybox is installed (as on Alpine). Each script must
# produce the expected files, and a second run must change nothing (Lima runs them every boot).
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
stubs=$repo/tests/sh/provision-stubs
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT


# Alpine runs these with busybox's applets: put them on PATH when busybox is here. The shell stays
# /bin/sh: a busybox shell built with "prefer applets" would bypass the stubs and, as root, really
# mount filesystems.
# The lab's static busybox (make lab downloads it) serves when the host has none.
path=$stubs:$PATH
busybox=$(command -v busybox || true)
lab_busybox=${VMCOST_LAB_CACHE:-$HOME/.cache/vmcost-lab}/busybox
[ -n "$busybox" ] || [ ! -x "$lab_busybox" ] || busybox=$lab_busybox
if [ -n "$busybox" ]; then
	mkdir "$tmp/busybox"
	"$busybox" --install -s "$tmp/busybox"
	rm -f "$tmp/busybox/sh" "$tmp/busybox/ash" "$tmp/busybox/hush"
	for stub in "$stubs"/*; do
		rm -f "$tmp/busybox/${stub##*/}"
	done
	path=$stubs:$tmp/busybox:$PATH
	echo "note: the scripts run with busybox's applets ($busybox)"
else
	skip "the scripts with busybox's applets (as on Alpine): busybox is missing (make deps); they run with the host's tools"
fi
for cmd in apk rc-update rc-service mount fstrim grub-mkconfig addgroup chown wget apt-get apt-mark \
	dpkg dpkg-query rpm dnf systemctl userdel deluser cloud-init reboot; do
	if [ "$(PATH=$path /bin/sh -c "command -v $cmd")" != "$stubs/$cmd" ]; then
		echo "FAIL refusing to run: $cmd would not be the stub"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
done

# setsid gives a run its own process group, so that a test can end it with all it started (the
# first boot's reboot script, which blocks; the kill test). The host's: busybox's cannot wait.
setsid_wait=$(command -v setsid || true)
"$setsid_wait" --help 2>&1 | grep -q -- --wait || setsid_wait=""

# Lima renders {{.User}} (and the other guest fields) in a provision script before running it.
render() { # script -> path of the rendered copy
	out=$tmp/rendered-$(basename "$1")
	sed -e 's/{{\.User}}/tester/g' -e 's/{{\.UID}}/1000/g' -e 's/{{\.Home}}/\/home\/tester.linux/g' \
		"$1" >"$out"
	echo "$out"
}

# run NAME ROOT SCRIPT [VAR=VALUE...]: runs the rendered script on ROOT, output in $tmp/NAME.out,
# stub calls in $tmp/NAME.log; returns the script's status.
run() {
	run_name=$1 run_root=$2 run_script=$3
	shift 3
	: >"$tmp/$run_name.log"
	env PATH="$path" VMCOST_ROOT="$run_root" STUB_LOG="$tmp/$run_name.log" "$@" \
		/bin/sh "$(render "$run_script")" >"$tmp/$run_name.out" 2>&1
}

# Everything a second boot could change: type, mode, size, mtime, content, link targets.
snapshot() { # root
	(
		cd "$1" || exit 1
		find . -exec stat -c '%n %F %a %s %y' {} + | LC_ALL=C sort
		find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2
		find . -type l -exec sh -c 'for l; do echo "$l -> $(readlink "$l")"; done' sh {} +
	)
}

# check_idempotent NAME ROOT SCRIPT [VAR=VALUE...]: a second run must change no file.
check_idempotent() {
	idem_name=$1
	shift
	snapshot "$1" >"$tmp/$idem_name.before"
	if ! run "$idem_name-again" "$@"; then
		fail "$idem_name: the second run failed"
		sed 's/^/    /' "$tmp/$idem_name-again.out"
		return
	fi
	snapshot "$1" >"$tmp/$idem_name.after"
	if cmp -s "$tmp/$idem_name.before" "$tmp/$idem_name.after"; then
		ok "$idem_name: a second run changes no file"
	else
		fail "$idem_name: a second run changed files:"
		diff "$tmp/$idem_name.before" "$tmp/$idem_name.after" | sed 's/^/    /' | head -20
	fi
}

# A fake root shaped like Lima's Alpine 3.23 cloud image at first boot.
make_cloud_root() { # dir
	r=$1
	mkdir -p "$r/etc/conf.d" "$r/etc/init.d" "$r/etc/default" "$r/etc/runlevels/boot" \
		"$r/etc/runlevels/default" "$r/etc/apk" "$r/proc" "$r/run/openrc/started" "$r/var/log" \
		"$r/var/run" "$r/boot/grub" "$r/usr/bin" "$r/usr/local/bin" "$r/sys/class/tty/tty1" \
		"$r/sys/class/tty/ttyS0" "$r/sys/class/tty/ttyS1" "$r/sys/class/tty/hvc0"
	printf 'LABEL=/\t/\text4\trw,relatime\t0 1\nLABEL=EFI\t/boot/efi\tvfat\tdefaults\t0 2\n' >"$r/etc/fstab"
	cat >"$r/proc/mounts" <<'EOF'
/dev/vda2 / ext4 rw,relatime 0 0
devtmpfs /dev devtmpfs rw,nosuid,size=10240k,mode=755 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
tmpfs /run tmpfs rw,nosuid,nodev,size=1219928k,mode=755 0 0
/dev/vda1 /boot/efi vfat rw,relatime,fmask=0022,dmask=0022 0 0
cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0
EOF
	echo 'BOOT_IMAGE=/boot/vmlinuz-virt root=LABEL=/ modules=sd-mod,usb-storage,ext4 console=ttyS0 rootfstype=ext4' >"$r/proc/cmdline"
	mkdir -p "$r/proc/sys/kernel" "$r/proc/sys/vm"
	echo 1 >"$r/proc/sys/kernel/watchdog"
	echo 20 >"$r/proc/sys/vm/compaction_proactiveness"
	echo "cloud-init: first boot log" >"$r/var/log/cloud-init.log"
	cat >"$r/etc/inittab" <<'EOF'
# /etc/inittab

::sysinit:/sbin/openrc sysinit
::sysinit:/sbin/openrc boot
::wait:/sbin/openrc default

# Set up a couple of getty's
#tty1::respawn:/sbin/getty 38400 tty1
ttyS0::respawn:/sbin/getty -L 0 ttyS0 vt100
ttyAMA0::respawn:/sbin/getty -L 0 ttyAMA0 vt100
hvc0::respawn:/sbin/getty -L 0 hvc0 vt100

::ctrlaltdel:/sbin/reboot
::shutdown:/sbin/openrc shutdown
EOF
	echo 4 >"$r/sys/class/tty/ttyS0/type"
	echo 0 >"$r/sys/class/tty/ttyS1/type"
	printf '# Options to pass to syslogd\n# See syslogd --help for list of options\nSYSLOGD_OPTS="-t"\n' >"$r/etc/conf.d/syslog"
	for svc in syslog acpid cloud-init-hotplugd sshd; do
		printf '#!/sbin/openrc-run\n' >"$r/etc/init.d/$svc"
	done
	ln -s /etc/init.d/syslog "$r/etc/runlevels/boot/syslog"
	ln -s /etc/init.d/acpid "$r/etc/runlevels/default/acpid"
	ln -s /etc/init.d/cloud-init-hotplugd "$r/etc/runlevels/default/cloud-init-hotplugd"
	: >"$r/run/openrc/started/syslog"
	mkdir -p "$r/proc/4242"
	printf '%s\0' /sbin/syslogd -t -n >"$r/proc/4242/cmdline"
	echo 4242 >"$r/run/syslogd.pid"
	cat >"$r/etc/default/grub" <<'EOF'
GRUB_CMDLINE_LINUX_DEFAULT="modules=sd-mod,usb-storage,ext4 console=ttyS0 rootfstype=ext4"
GRUB_DISABLE_RECOVERY=true
GRUB_DISABLE_SUBMENU=y
GRUB_TIMEOUT=10
EOF
	echo "set timeout=10" >"$r/boot/grub/grub.cfg"
	touch -d '2026-01-01 00:00' "$r/boot/grub/grub.cfg"
	touch -d '2025-12-31 00:00' "$r/etc/default/grub"
	printf 'root:x:0:root\nwheel:x:10:root,tester\ntester:x:1000:\n' >"$r/etc/group"
	printf 'alpine-base\nopenrc\n' >"$r/etc/apk/world"
	echo 3.23.4 >"$r/etc/alpine-release"
	mkdir -p "$r/sbin"
	printf '#!/bin/sh\n' >"$r/sbin/openrc-run"
}

# The same root as the alpine-lima ISO has it: / is a tmpfs, no GRUB, no cloud-init.
make_iso_root() { # dir
	make_cloud_root "$1"
	sed -i -e 's|^/dev/vda2 / ext4 rw,relatime 0 0$|tmpfs / tmpfs rw,relatime 0 0\n/dev/vdb1 /mnt/data ext4 rw,relatime 0 0\n/dev/vdb1 /var/lib ext4 rw,relatime 0 0|' \
		-e '\|/boot/efi|d' "$1/proc/mounts"
	rm -rf "$1/etc/default/grub" "$1/boot/grub" "$1/etc/init.d/cloud-init-hotplugd" \
		"$1/etc/runlevels/default/cloud-init-hotplugd"
}

# ---- boot-quiet-disk.sh ------------------------------------------------------------------------
boot_tests() {
	r=$tmp/boot
	make_cloud_root "$r"
	if run boot "$r" provision/boot-quiet-disk.sh; then ok "boot: runs"; else
		fail "boot: runs"
		sed 's/^/    /' "$tmp/boot.out"
	fi
	check "boot: /var/log is mounted tmpfs" grep -Eq '^tmpfs /var/log tmpfs .*size=64m' "$r/proc/mounts"
	check "boot: / is remounted with commit=60" grep -Eq '^/dev/vda2 / ext4 [^ ]*commit=60' "$r/proc/mounts"
	check "boot: what was logged so far is kept" grep -q 'first boot log' "$r/var/log/cloud-init.log"
	check "boot: fstab mounts /var/log on tmpfs from the next boot on" \
		test "$(grep -Ec '^tmpfs[[:space:]]+/var/log[[:space:]]+tmpfs[[:space:]]+nosuid,nodev,noexec,mode=0755,size=64m' "$r/etc/fstab")" = 1
	check "boot: fstab's root line gets commit=60 and keeps its options" \
		grep -Eq '^LABEL=/[[:space:]]+/[[:space:]]+ext4[[:space:]]+rw,relatime,commit=60[[:space:]]' "$r/etc/fstab"
	check "boot: fstab's other lines are untouched" grep -q "$(printf 'LABEL=EFI\t/boot/efi\tvfat\tdefaults\t0 2')" "$r/etc/fstab"
	check_idempotent boot "$r" provision/boot-quiet-disk.sh
	check "boot: the second run mounts nothing" sh -c "! grep -q mount '$tmp/boot-again.log'"

	# Not ext4 (e.g. a user's own image): the root is left alone.
	r=$tmp/boot-xfs
	make_cloud_root "$r"
	sed -i 's|^/dev/vda2 / ext4|/dev/vda2 / xfs|' "$r/proc/mounts"
	sed -i 's|/\text4|/\txfs|' "$r/etc/fstab"
	run boot-xfs "$r" provision/boot-quiet-disk.sh
	check "boot: a non-ext4 root is not remounted" sh -c "! grep -q remount '$tmp/boot-xfs.log'"
	check "boot: a non-ext4 root keeps its fstab options" sh -c "! grep -q commit '$r/etc/fstab'"
}

# ---- boot-kernel-args.sh -----------------------------------------------------------------------
kernel_args_tests() {
	r=$tmp/kargs
	make_cloud_root "$r"
	if run kargs "$r" provision/boot-kernel-args.sh; then ok "kernel args: runs"; else
		fail "kernel args: runs"
		sed 's/^/    /' "$tmp/kargs.out"
	fi
	args=$(sed -n 's/^[[:space:]]*kernel_args="\(.*\)"$/\1/p' provision/boot-kernel-args.sh)
	check "kernel args: the arguments are defined ($args)" test -n "$args"
	check "kernel args: GRUB_TIMEOUT=0, once" sh -c "test \"\$(grep -c '^GRUB_TIMEOUT=' '$r/etc/default/grub')\" = 1 && grep -qx 'GRUB_TIMEOUT=0' '$r/etc/default/grub'"
	check "kernel args: GRUB's command line keeps its arguments and adds $args" \
		grep -qx "GRUB_CMDLINE_LINUX_DEFAULT=\"modules=sd-mod,usb-storage,ext4 console=ttyS0 rootfstype=ext4 $args\"" "$r/etc/default/grub"
	check "kernel args: the other GRUB settings stay" grep -qx 'GRUB_DISABLE_SUBMENU=y' "$r/etc/default/grub"
	check "kernel args: grub.cfg is regenerated with them" grep -q "console=ttyS0 rootfstype=ext4 $args\$" "$r/boot/grub/grub.cfg"
	check "kernel args: grub.cfg has timeout 0" grep -qx 'set timeout=0' "$r/boot/grub/grub.cfg"
	check "kernel args: nothing is set at runtime (the command line does it)" sh -c \
		"test ! -e '$r/etc/sysctl.d/60-vmcost-idle.conf' && test \"\$(cat '$r/proc/sys/vm/compaction_proactiveness')\" = 20"
	check_idempotent kargs "$r" provision/boot-kernel-args.sh
	check "kernel args: grub-mkconfig runs once" sh -c "! grep -q grub-mkconfig '$tmp/kargs-again.log'"

	# A value the user chose stays, a missing GRUB_TIMEOUT is added.
	r=$tmp/kargs-user
	make_cloud_root "$r"
	sed -i 's/^GRUB_CMDLINE_LINUX_DEFAULT="/&init_on_free=0 /; /^GRUB_TIMEOUT/d' "$r/etc/default/grub"
	run kargs-user "$r" provision/boot-kernel-args.sh
	check "kernel args: a user's init_on_free=0 is kept, not duplicated" \
		sh -c "grep -q 'init_on_free=0' '$r/etc/default/grub' && ! grep -q 'init_on_free=1' '$r/etc/default/grub'"
	check "kernel args: a missing GRUB_TIMEOUT is added as 0" grep -qx 'GRUB_TIMEOUT=0' "$r/etc/default/grub"
	check_idempotent kargs-user "$r" provision/boot-kernel-args.sh

	# No GRUB (an image that boots its kernel directly): nothing to do, nothing fails.
	r=$tmp/kargs-iso
	make_iso_root "$r"
	if run kargs-iso "$r" provision/boot-kernel-args.sh; then ok "kernel args: runs without GRUB"; else
		fail "kernel args: runs without GRUB"
	fi
	check "kernel args: ... and says the command line is fixed" grep -q 'fixed by the image' "$tmp/kargs-iso.out"
}

# ---- boot-docker-group.sh ----------------------------------------------------------------------
docker_group_tests() {
	r=$tmp/dgroup
	make_cloud_root "$r"
	sed -i '/^tester:/d' "$r/etc/group" # at the first boot the Lima user does not exist yet
	if run dgroup "$r" provision/boot-docker-group.sh; then ok "docker group: runs"; else
		fail "docker group: runs"
		sed 's/^/    /' "$tmp/dgroup.out"
	fi
	check "docker group: the group is created" grep -qx 'addgroup -S docker' "$tmp/dgroup.log"
	check "docker group: the user (not created yet) is a member by name" grep -q '^docker:x:[0-9]*:tester$' "$r/etc/group"
	check "docker group: other groups are untouched" grep -qx 'wheel:x:10:root,tester' "$r/etc/group"
	check_idempotent dgroup "$r" provision/boot-docker-group.sh

	# The group exists with members (a later boot, Docker installed): the user is added once.
	r=$tmp/dgroup-have
	make_cloud_root "$r"
	echo 'docker:x:101:root' >>"$r/etc/group"
	run dgroup-have "$r" provision/boot-docker-group.sh
	check "docker group: an existing group keeps its members and gains the user" grep -qx 'docker:x:101:root,tester' "$r/etc/group"
	check "docker group: ... without creating another group" sh -c "! grep -q addgroup '$tmp/dgroup-have.log'"
	check_idempotent dgroup-have "$r" provision/boot-docker-group.sh
}

# ---- boot-first-reboot.sh ----------------------------------------------------------------------
# The cloud image's own user, as Lima's Alpine image has it at its first boot (before cloud-init
# has created the Lima user), with cloud-init's state of that boot.
add_image_user() { # root
	printf 'root:x:0:0:root:/root:/bin/sh\nalpine:x:1000:1000:Linux User,,,:/home/alpine:/bin/sh\n' \
		>"$1/etc/passwd"
	printf 'root:*::0:::::\nalpine:!::0:::::\n' >"$1/etc/shadow"
	sed -i '/^tester:/d; s/,tester//; s/^wheel:x:10:root$/&,alpine/' "$1/etc/group"
	echo 'alpine:x:1000:' >>"$1/etc/group"
	mkdir -p "$1/home/alpine" "$1/var/lib/cloud/instance"
	echo '# the image user' >"$1/home/alpine/.profile"
	echo iid-first >"$1/var/lib/cloud/instance/instance-id"
}

# cloud-init creates the Lima user at the boot after the reboot.
add_lima_user() { # root
	echo 'tester:x:1000:1000::/home/tester.linux:/bin/sh' >>"$1/etc/passwd"
	echo 'tester:x:1000:' >>"$1/etc/group"
}

# Lima's 00-alpine-user-group.sh reboots when `id -u alpine` is 1000 (and the Lima user is not
# alpine): true if it would.
lima_would_reboot() { # root
	[ "$(awk -F: '$1 == "alpine" { print $3 }' "$1/etc/passwd")" = 1000 ]
}

# run_bounded NAME ROOT SCRIPT [VAR=VALUE...]: run in a process group of its own; a run still
# going 1 s after it asked for the reboot blocks, as a boot that waits for its shutdown: it is
# ended with all it started and run_status is 124. A run that hangs otherwise is ended after
# 120 s (status 125).
run_bounded() {
	run_name=$1 run_root=$2 run_script=$3
	shift 3
	: >"$tmp/$run_name.log"
	rm -f "$tmp/$run_name.group"
	# shellcheck disable=SC2016 # expanded by that shell
	"$setsid_wait" -w /bin/sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$tmp/$run_name.group" \
		env PATH="$path" VMCOST_ROOT="$run_root" STUB_LOG="$tmp/$run_name.log" "$@" \
		/bin/sh "$(render "$run_script")" >"$tmp/$run_name.out" 2>&1 &
	bounded_pid=$!
	bounded_ticks=0 run_status=""
	while kill -0 "$bounded_pid" 2>/dev/null; do
		if grep -q '^reboot' "$tmp/$run_name.log"; then
			sleep 1
			kill -0 "$bounded_pid" 2>/dev/null && run_status=124
			break
		fi
		bounded_ticks=$((bounded_ticks + 1))
		[ "$bounded_ticks" -lt 600 ] || {
			run_status=125
			break
		}
		sleep 0.2
	done
	if [ -n "$run_status" ]; then
		read -r bounded_group <"$tmp/$run_name.group"
		kill -s KILL -- "-$bounded_group" 2>/dev/null
		wait "$bounded_pid" 2>/dev/null
	else
		wait "$bounded_pid"
		run_status=$?
	fi
	return "$run_status"
}

first_reboot_tests() {
	if [ -z "$setsid_wait" ]; then
		skip "first reboot: util-linux setsid (--wait) is missing"
		return
	fi
	r=$tmp/reboot
	make_cloud_root "$r"
	add_image_user "$r"
	run_bounded reboot "$r" provision/boot-first-reboot.sh
	check "first reboot: asks for the reboot, then blocks (the boot goes no further)" test "$run_status" = 124
	check "first reboot: cloud-init's state first, the image user last, then reboot" \
		test "$(tr '\n' ';' <"$tmp/reboot.log")" = "cloud-init clean --logs;userdel alpine;reboot;"
	check "first reboot: the image user is gone (passwd, shadow, its group, wheel)" sh -c \
		"! grep -q '^alpine:' '$r/etc/passwd' '$r/etc/shadow' '$r/etc/group' && grep -qx 'wheel:x:10:root' '$r/etc/group'"
	check "first reboot: ... with its home" test ! -e "$r/home/alpine"
	if lima_would_reboot "$r"; then
		fail "first reboot: ... so Lima's own reboot script finds nothing to do"
	else
		ok "first reboot: ... so Lima's own reboot script finds nothing to do"
	fi
	check "first reboot: cloud-init starts over at the next boot (state and logs cleaned)" \
		sh -c "test ! -e '$r/var/lib/cloud' && test ! -e '$r/var/log/cloud-init.log'"
	check "first reboot: says what it does" grep -q 'rebooting before tester exists' "$tmp/reboot.out"

	# The boot after: the image user is gone, the Lima user exists; nothing to do.
	add_lima_user "$r"
	snapshot "$r" >"$tmp/reboot.before"
	run_bounded reboot-again "$r" provision/boot-first-reboot.sh
	check "first reboot: the next boot returns at once" test "$run_status" = 0
	check "first reboot: ... and calls nothing" test ! -s "$tmp/reboot-again.log"
	snapshot "$r" >"$tmp/reboot.after"
	check "first reboot: ... and changes no file" cmp -s "$tmp/reboot.before" "$tmp/reboot.after"

	# A Lima user named alpine is the image's user: Lima keeps it, and so does the script.
	r=$tmp/reboot-alpine
	make_cloud_root "$r"
	add_image_user "$r"
	sed 's/{{\.User}}/alpine/g' provision/boot-first-reboot.sh >"$tmp/boot-first-reboot-alpine.sh"
	run_bounded reboot-alpine "$r" "$tmp/boot-first-reboot-alpine.sh"
	check "first reboot: a Lima user named alpine is left alone, no reboot" \
		sh -c "test '$run_status' = 0 && test ! -s '$tmp/reboot-alpine.log' && grep -q '^alpine:x:1000:' '$r/etc/passwd'"

	# An alpine user that is not the image's (another uid): not ours to delete.
	r=$tmp/reboot-other
	make_cloud_root "$r"
	add_image_user "$r"
	sed -i 's/^alpine:x:1000:1000:/alpine:x:1001:1001:/' "$r/etc/passwd"
	run_bounded reboot-other "$r" provision/boot-first-reboot.sh
	check "first reboot: an alpine user with another uid is left alone, no reboot" \
		sh -c "test '$run_status' = 0 && test ! -s '$tmp/reboot-other.log'"
}

# ---- what Lima's first boot of the cloud template does -----------------------------------------
# The template's `mode: boot` scripts (cloud-init bootcmd) in their order, on the image as it first
# boots, with its own `alpine` user: one of them removes that user and reboots, and blocks, so no
# user is created and nobody logs in during the boot that goes down (Lima's SSH master, and with
# it the socket forwards, would die with it). After the reboot Lima's boot.essential script finds
# no image user and does not reboot again; cloud-init creates the Lima user; Lima's SSH master
# logs in (its groups are fixed now) before any system script runs.
boot_scripts_of() { # template -> the file: of each mode: boot entry, in order
	awk '/^- /{ boot = 0 } /^-? *mode: boot$/{ boot = 1 } boot && /^  file: /{ print $2 }' "$1"
}

login_groups() { # root user -> the groups a login of user gets from /etc/group (sorted)
	awk -F: -v u="$2" '{ n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) print $1 }
		$1 == u { print $1 }' "$1/etc/group" | LC_ALL=C sort -u | tr '\n' ' '
}

# boot_all NAME ROOT: the template's boot scripts in order, as one bootcmd: a script that blocks
# stops the rest. Stub calls go to $tmp/NAME.log; sets blocked_by.
boot_all() {
	: >"$tmp/$1.log"
	blocked_by=""
	for s in $scripts; do
		run_bounded "$1-step" "$2" "templates/$s"
		cat "$tmp/$1-step.log" >>"$tmp/$1.log"
		case $run_status in
		0) ;;
		124)
			blocked_by=$s
			return
			;;
		*)
			fail "$1: $s failed"
			sed 's/^/    /' "$tmp/$1-step.out"
			;;
		esac
	done
}

lima_first_boot_tests() {
	r=$tmp/first
	make_cloud_root "$r"
	add_image_user "$r"
	scripts=$(boot_scripts_of templates/minimal-docker.yaml)
	check "first boot: the cloud template has boot scripts ($(echo "$scripts" | tr '\n' ' '))" test -n "$scripts"
	if [ -z "$setsid_wait" ]; then
		skip "first boot: util-linux setsid (--wait) is missing"
		return
	fi
	boot_all first "$r"
	check "first boot: a boot script reboots the image before the Lima user exists" grep -qx reboot "$tmp/first.log"
	check "first boot: ... and blocks, so no login happens in the boot that goes down (blocked: ${blocked_by:-none})" \
		test -n "$blocked_by"
	check "first boot: ... after GRUB was told the kernel arguments" \
		awk '/^grub-mkconfig /{ g = NR } /^reboot$/{ r = NR } END { exit !(g && r && g < r) }' "$tmp/first.log"
	# What the machine boots with after the reboot: the command line GRUB was told before it.
	args=$(sed -n 's/^[[:space:]]*kernel_args="\(.*\)"$/\1/p' provision/boot-kernel-args.sh)
	check "first boot: grub.cfg carries the kernel arguments before the reboot ($args)" \
		sh -c "[ -n '$args' ] && grep -q '$args\$' '$r/boot/grub/grub.cfg'"
	check "first boot: ... and no boot menu wait" grep -qx 'set timeout=0' "$r/boot/grub/grub.cfg"
	if lima_would_reboot "$r"; then
		fail "first boot: Lima's own reboot (00-alpine-user-group.sh, in the boot Lima logs into) does not run"
	else
		ok "first boot: Lima's own reboot (00-alpine-user-group.sh, in the boot Lima logs into) does not run"
	fi

	# The second boot: cloud-init creates the user after the boot scripts; Lima's SSH master logs in.
	boot_all second "$r"
	check "second boot: the boot scripts run through, no reboot" \
		sh -c "test -z '$blocked_by' && ! grep -q '^reboot' '$tmp/second.log'"
	add_lima_user "$r"
	groups=$(login_groups "$r" tester)
	case " $groups" in
	*" docker "*) ok "second boot: Lima's SSH login has the docker group (docker.sock stays reachable when dockerd re-creates it)" ;;
	*) fail "second boot: Lima's SSH login has the docker group (it has: $groups)" ;;
	esac
}

# ---- idle-tunings.sh ---------------------------------------------------------------------------
tunings_tests() {
	r=$tmp/tune
	make_cloud_root "$r"
	cp "$r/etc/inittab" "$tmp/inittab.orig"
	if run tune "$r" provision/idle-tunings.sh; then ok "tunings: runs"; else
		fail "tunings: runs"
		sed 's/^/    /' "$tmp/tune.out"
	fi
	check "tunings: syslogd logs to a 64 KiB ring buffer" \
		test "$(grep -c '^SYSLOGD_OPTS=' "$r/etc/conf.d/syslog")" = 1
	check "tunings: SYSLOGD_OPTS is -t -C64" grep -qx 'SYSLOGD_OPTS="-t -C64"' "$r/etc/conf.d/syslog"
	check "tunings: conf.d/syslog keeps its comments" grep -q '^# See syslogd' "$r/etc/conf.d/syslog"
	check "tunings: the running syslogd is restarted" grep -qx 'rc-service --ifstarted syslog restart' "$tmp/tune.log"
	check "tunings: the getty on the absent ttyAMA0 is disabled" \
		grep -qx '#vmcost-no-console# ttyAMA0::respawn:/sbin/getty -L 0 ttyAMA0 vt100' "$r/etc/inittab"
	check "tunings: gettys on present consoles stay (ttyS0 with hardware, hvc0)" \
		sh -c "grep -qx 'ttyS0::respawn:/sbin/getty -L 0 ttyS0 vt100' '$r/etc/inittab' && grep -qx 'hvc0::respawn:/sbin/getty -L 0 hvc0 vt100' '$r/etc/inittab'"
	check "tunings: nothing else in inittab changes" \
		sh -c "sed 's/^#vmcost-no-console# //' '$r/etc/inittab' | cmp -s - '$tmp/inittab.orig'"
	check "tunings: cloud-init-hotplugd leaves the default runlevel" \
		test ! -e "$r/etc/runlevels/default/cloud-init-hotplugd"
	check "tunings: acpid stays (graceful limactl stop)" test -L "$r/etc/runlevels/default/acpid"
	check "tunings: GRUB is left to the boot script" sh -c \
		"grep -qx 'GRUB_TIMEOUT=10' '$r/etc/default/grub' && ! grep -q grub-mkconfig '$tmp/tune.log'"
	check "tunings: with GRUB nothing is set at runtime (the command line does it)" sh -c \
		"test ! -e '$r/etc/sysctl.d/60-vmcost-idle.conf' && test \"\$(cat '$r/proc/sys/vm/compaction_proactiveness')\" = 20"
	check "tunings: fstrim runs on the root and EFI filesystems" \
		sh -c "grep -qx 'fstrim -v / ' '$tmp/tune.log' && grep -qx 'fstrim -v /boot/efi ' '$tmp/tune.log'"
	check "tunings: fstrim leaves virtual filesystems alone" test "$(grep -c '^fstrim' "$tmp/tune.log")" = 2
	check "tunings: the running syslogd has the ring buffer (-C64)" \
		sh -c "tr '\\0' ' ' <'$r/proc/4242/cmdline' | grep -q ' -C64 '"
	check_idempotent tune "$r" provision/idle-tunings.sh
	check "tunings: the second run only trims" sh -c "! grep -v '^fstrim' '$tmp/tune-again.log' | grep -q ."

	# inittab and conf.d/syslog are replaced whole (a new file renamed over the old one): a boot
	# killed halfway leaves the old file or the new one, never an empty one. Their mode stays.
	r=$tmp/tune-atomic
	make_cloud_root "$r"
	chmod 0600 "$r/etc/inittab"
	chmod 0640 "$r/etc/conf.d/syslog"
	# Each file against its own old inode: the file system may give one file's freed inode to the
	# other's replacement.
	inittab_inode=$(stat -c %i "$r/etc/inittab")
	syslog_inode=$(stat -c %i "$r/etc/conf.d/syslog")
	run tune-atomic "$r" provision/idle-tunings.sh
	check "tunings: inittab and conf.d/syslog are replaced by a rename, not rewritten in place" \
		test "$(stat -c %i "$r/etc/inittab")" != "$inittab_inode" -a \
		"$(stat -c %i "$r/etc/conf.d/syslog")" != "$syslog_inode"
	check "tunings: ... keeping their modes (0600, 0640)" \
		test "$(stat -c %a "$r/etc/inittab" "$r/etc/conf.d/syslog" | tr '\n' ' ')" = "600 640 "
	check "tunings: ... and leaving no temporary file behind" \
		sh -c "test -z \"\$(find '$r/etc' -name '*vmcost*' ! -name '60-vmcost-idle.conf')\""

	# A value the user chose stays; a console that appears gets its getty back; acpid returns.
	r=$tmp/tune-user
	make_cloud_root "$r"
	sed -i 's|^ttyAMA0::|#vmcost-no-console# ttyAMA0::|' "$r/etc/inittab"
	mkdir "$r/sys/class/tty/ttyAMA0"
	rm "$r/etc/runlevels/default/acpid"
	rm "$r/etc/conf.d/syslog"
	run tune-user "$r" provision/idle-tunings.sh
	check "tunings: a getty comes back when its console exists" \
		grep -qx 'ttyAMA0::respawn:/sbin/getty -L 0 ttyAMA0 vt100' "$r/etc/inittab"
	check "tunings: acpid is put back in the default runlevel" test -L "$r/etc/runlevels/default/acpid"
	check "tunings: a missing conf.d/syslog is created" grep -qx 'SYSLOGD_OPTS="-t -C64"' "$r/etc/conf.d/syslog"
	check_idempotent tune-user "$r" provision/idle-tunings.sh

	# vz has no 8250 hardware: a registered ttyS0 of type 0 gets no getty.
	r=$tmp/tune-vz
	make_cloud_root "$r"
	echo 0 >"$r/sys/class/tty/ttyS0/type"
	run tune-vz "$r" provision/idle-tunings.sh
	check "tunings: no getty on a ttyS0 without hardware" grep -q '^#vmcost-no-console# ttyS0::' "$r/etc/inittab"

	# The ISO: no GRUB, no cloud-init; the rest still applies and nothing fails.
	r=$tmp/tune-iso
	make_iso_root "$r"
	if run tune-iso "$r" provision/idle-tunings.sh; then ok "tunings (ISO): runs"; else
		fail "tunings (ISO): runs"
		sed 's/^/    /' "$tmp/tune-iso.out"
	fi
	check "tunings (ISO): says the command line is fixed by the image" grep -q 'fixed by the image' "$tmp/tune-iso.out"
	check "tunings (ISO): does not ask for a restart" sh -c "! grep -q 'limactl restart' '$tmp/tune-iso.out'"
	check "tunings (ISO): trims the data disk once" sh -c "grep -qx 'fstrim -v /mnt/data ' '$tmp/tune-iso.log' && test \"\$(grep -c '^fstrim' '$tmp/tune-iso.log')\" = 1"
	check "tunings (ISO): syslog ring buffer" grep -qx 'SYSLOGD_OPTS="-t -C64"' "$r/etc/conf.d/syslog"
	# What sysctl can set of the command line is the fragment's (idle-sysctls.sh), on every guest:
	# one writer of /etc/sysctl.d/60-vmcost-idle.conf (tests/sh/idle_sysctls.sh).
	check "tunings (ISO): the sysctls are left to the agent's installer, and said so" sh -c \
		"test ! -e '$r/etc/sysctl.d/60-vmcost-idle.conf' && test \"\$(cat '$r/proc/sys/vm/compaction_proactiveness')\" = 20 && grep -q 'the agent.s installer sets what sysctl can' '$tmp/tune-iso.out'"
	check_idempotent tune-iso "$r" provision/idle-tunings.sh

	# Every later ISO boot: OpenRC starts syslogd from the image's /etc before the data volume's
	# /etc (with the ring buffer in conf.d/syslog) is mounted over it. The file is right, the
	# running syslogd is not: it is restarted.
	printf '%s\0' /sbin/syslogd -t -n >"$r/proc/4242/cmdline"
	run tune-iso-reboot "$r" provision/idle-tunings.sh
	check "tunings (ISO): at a later boot a syslogd without the ring buffer is restarted" \
		grep -qx 'rc-service --ifstarted syslog restart' "$tmp/tune-iso-reboot.log"
	check "tunings (ISO): ... and runs with it" sh -c "tr '\\0' ' ' <'$r/proc/4242/cmdline' | grep -q ' -C64 '"
	run tune-iso-again "$r" provision/idle-tunings.sh
	check "tunings (ISO): a syslogd with the ring buffer is left running" \
		sh -c "! grep -q 'syslog' '$tmp/tune-iso-again.log'"
}

# ---- docker.sh ---------------------------------------------------------------------------------
# What openrc-run does with a conf.d file before it stops the service: read it, RC_CMD set to
# the command. The thaw must come then (issue 21), once per file, and only for a stop or restart.
thaw_checks() { # name, conf.d file
	printf '#!/bin/sh\necho "$*" >>"%s/thaw-calls"\n' "$tmp" >"$tmp/fake-agent"
	chmod 755 "$tmp/fake-agent"
	sed "s|/usr/local/bin/vmcost-agent|$tmp/fake-agent|g" "$2" >"$tmp/conf.d-as-read"
	rm -f "$tmp/thaw-calls"
	RC_CMD=start sh -c ". '$tmp/conf.d-as-read'"
	RC_CMD=status sh -c ". '$tmp/conf.d-as-read'"
	check "$1: reading conf.d for a start or a status thaws nothing" test ! -e "$tmp/thaw-calls"
	RC_CMD=stop sh -c ". '$tmp/conf.d-as-read'"
	check "$1: reading conf.d for a stop thaws the engine first" grep -qx 'engine thaw' "$tmp/thaw-calls"
	RC_CMD=restart sh -c ". '$tmp/conf.d-as-read'"
	check "$1: ... and for a restart" test "$(grep -c 'engine thaw' "$tmp/thaw-calls")" = 2
	check "$1: the thaw lines are there once" test "$(grep -c '^# vmcost: thaw the engine before this service stops$' "$2")" = 1
	# No agent (yet): the stop goes on.
	sed "s|/usr/local/bin/vmcost-agent|$tmp/no-such-agent|g" "$2" >"$tmp/conf.d-as-read"
	check "$1: without the agent a stop reads conf.d as before" env RC_CMD=stop sh -c ". '$tmp/conf.d-as-read'"
}

docker_tests() {
	r=$tmp/docker
	make_cloud_root "$r"
	if run docker "$r" provision/docker.sh; then ok "docker: runs"; else
		fail "docker: runs"
		sed 's/^/    /' "$tmp/docker.out"
	fi
	check "docker: installs Alpine's docker package" grep -qx 'apk add docker docker-openrc' "$tmp/docker.log"
	check "docker: daemon.json is valid JSON" json_true "$r/etc/docker/daemon.json" .
	check "docker: container logs rotate (3 x 10m)" \
		json_true "$r/etc/docker/daemon.json" '."log-driver" == "json-file" and ."log-opts"."max-size" == "10m" and ."log-opts"."max-file" == "3"'
	check "docker: BuildKit garbage collection at 10GB" \
		json_true "$r/etc/docker/daemon.json" '.builder.gc.enabled == true and .builder.gc.defaultKeepStorage == "10GB"'
	check "docker: the user is in the docker group" grep -qx 'docker:x:101:tester' "$r/etc/group"
	check "docker: dockerd is in the default runlevel" test -L "$r/etc/runlevels/default/docker"
	check "docker: dockerd is started" test -e "$r/run/openrc/started/docker"
	check "docker: no chown of the socket (the boot script gave the login the group)" \
		sh -c "! grep -q '^chown' '$tmp/docker.log'"
	check_idempotent docker "$r" provision/docker.sh
	check "docker: the second run installs nothing" sh -c "! grep -Eq '^apk (add|del)' '$tmp/docker-again.log'"

	# Alpine's docker service rotates its log (log_proxy) at 100 MiB by default; /var/log is a
	# tmpfs of boot-quiet-disk.sh's size: the current log and the rotated ones fit in half of it.
	tmpfs_mib=$(sed -n 's/.*varlog_opts=.*size=\([0-9]*\)m.*/\1/p' provision/boot-quiet-disk.sh)
	rotation=$(sh -c ". '$r/etc/conf.d/docker' && echo \"\${LOGPROXY_ROTATION_SIZE:-104857600} \${LOGPROXY_ROTATED_FILES:-5}\"")
	check "docker: log rotation (${rotation:-?} bytes x files) fits in half the ${tmpfs_mib:-?} MiB /var/log tmpfs" \
		sh -c "[ -n '$tmpfs_mib' ] && set -- $rotation && [ \$((\$1 * (\$2 + 1))) -le $((tmpfs_mib * 1024 * 1024 / 2)) ]"
	check "docker: conf.d/docker keeps the package's lines" grep -qx 'DOCKER_OPTS=""' "$r/etc/conf.d/docker"
	thaw_checks docker "$r/etc/conf.d/docker"

	# A boot killed while apk extracted Docker: dockerd is on disk, the database lists nothing and
	# docker-openrc (the service) is missing. The next boot installs the packages.
	r=$tmp/docker-half
	make_cloud_root "$r"
	printf '#!/bin/sh\necho "Docker version 29.0.0-apk, build stub"\n' >"$r/usr/bin/dockerd"
	chmod 755 "$r/usr/bin/dockerd"
	if run docker-half "$r" provision/docker.sh; then ok "docker: a half-installed Docker: runs"; else
		fail "docker: a half-installed Docker: runs"
		sed 's/^/    /' "$tmp/docker-half.out"
	fi
	check "docker: ... the package database decides: apk installs docker and docker-openrc" \
		grep -qx 'apk add docker docker-openrc' "$tmp/docker-half.log"
	check "docker: ... and dockerd is started" test -e "$r/run/openrc/started/docker"

	# The user's own daemon.json wins.
	r=$tmp/docker-own
	make_cloud_root "$r"
	mkdir -p "$r/etc/docker"
	echo '{"debug": true}' >"$r/etc/docker/daemon.json"
	run docker-own "$r" provision/docker.sh
	check "docker: an existing daemon.json is kept as it is" grep -qx '{"debug": true}' "$r/etc/docker/daemon.json"

	# The ISO: the static bundle of param dockerVersion in /usr/local/bin, an OpenRC service.
	r=$tmp/docker-iso
	make_iso_root "$r"
	if run docker-iso "$r" provision/docker.sh PARAM_dockerVersion=29.8.1; then ok "docker (ISO): runs"; else
		fail "docker (ISO): runs"
		sed 's/^/    /' "$tmp/docker-iso.out"
	fi
	check "docker (ISO): downloads the static bundle of that version" \
		grep -q "^wget -q -O .* https://download.docker.com/linux/static/stable/$(uname -m)/docker-29.8.1.tgz\$" "$tmp/docker-iso.log"
	check "docker (ISO): installs it in /usr/local/bin" \
		sh -c "'$r/usr/local/bin/dockerd' --version | grep -q 'Docker version 29.8.1,' && test -x '$r/usr/local/bin/containerd'"
	check "docker (ISO): no apk package" sh -c "! grep -q '^apk' '$tmp/docker-iso.log'"
	check "docker (ISO): an OpenRC service runs /usr/local/bin/dockerd under supervise-daemon" \
		sh -c "grep -qx 'command=/usr/local/bin/dockerd' '$r/etc/init.d/docker' && grep -qx 'supervisor=supervise-daemon' '$r/etc/init.d/docker' && test -x '$r/etc/init.d/docker'"
	# shellcheck disable=SC2016 # the service file's own expansions, literally
	check "docker (ISO): the service has the package's ulimits (-n 1048576)" \
		grep -qx 'rc_ulimit="${DOCKER_ULIMIT:--c unlimited -n 1048576 -u unlimited}"' "$r/etc/init.d/docker"
	# shellcheck disable=SC2016 # the service file's own expansions, literally
	check "docker (ISO): ... and its stop retry (TERM, 60 s, KILL)" \
		grep -qx 'retry="${DOCKER_RETRY:-TERM/60/KILL/10}"' "$r/etc/init.d/docker"
	check "docker (ISO): the docker group exists with the user in it" grep -qx 'docker:x:102:tester' "$r/etc/group"
	check "docker (ISO): started" test -e "$r/run/openrc/started/docker"
	check "docker (ISO): the socket is handed to the user for this boot (Lima logged in before the group)" \
		grep -qx 'chown tester /var/run/docker.sock' "$tmp/docker-iso.log"
	thaw_checks "docker (ISO)" "$r/etc/conf.d/docker"
	check_idempotent docker-iso "$r" provision/docker.sh PARAM_dockerVersion=29.8.1
	check "docker (ISO): the second run downloads nothing" sh -c "! grep -q '^wget' '$tmp/docker-iso-again.log'"

	# A version that does not exist: a clear error, the installed Docker untouched.
	if run docker-iso-bad "$r" provision/docker.sh PARAM_dockerVersion=29.99.0 STUB_DOCKER_VERSIONS=29.8.1; then
		fail "docker (ISO): a missing version fails"
	else
		ok "docker (ISO): a missing version fails"
	fi
	check "docker (ISO): ... saying which URL and how to pick another version" \
		sh -c "grep -q 'docker-29.99.0.tgz' '$tmp/docker-iso-bad.out' && grep -q 'dockerVersion' '$tmp/docker-iso-bad.out'"
	check "docker (ISO): ... and leaves the installed bundle alone" \
		sh -c "'$r/usr/local/bin/dockerd' --version | grep -q 'Docker version 29.8.1,'"
	if run docker-iso-empty "$r" provision/docker.sh; then
		fail "docker (ISO): no dockerVersion param fails"
	else
		ok "docker (ISO): no dockerVersion param fails"
	fi
	check "docker (ISO): ... naming the param" grep -q 'param dockerVersion is empty' "$tmp/docker-iso-empty.out"
	run docker-iso-up "$r" provision/docker.sh PARAM_dockerVersion=29.9.0
	check "docker (ISO): a new dockerVersion is installed at the next boot" \
		sh -c "'$r/usr/local/bin/dockerd' --version | grep -q 'Docker version 29.9.0,'"
}

# ---- killed partway, run again ------------------------------------------------------------------
# A shutdown during provisioning (Lima's own first-boot reboot, limactl stop) or a power loss can
# kill a provision script anywhere; the next boot runs it again. Kill points: every stub call,
# every package apk extracts, every cat (a `cat >file` has emptied its file already) and every mv
# (a wrapper counts, then runs the real one). For each point k the script runs on a fresh root and
# is killed (SIGKILL to its process group) at k; what lives in RAM is reset (the next boot); the
# script runs again; the files must be those of one clean run.
kill_wrapped="cat mv"

# Type, mode, size, content and link targets; not mtimes, not /proc and /run (gone at a reboot).
persistent_snapshot() { # root
	(
		cd "$1" || exit 1
		find . \( -path ./proc -o -path ./run -o -path ./var/run \) -prune -o -exec stat -c '%n %F %a %s' {} + |
			LC_ALL=C sort
		find . \( -path ./proc -o -path ./run -o -path ./var/run \) -prune -o -type f -exec sha256sum {} + |
			LC_ALL=C sort -k2
		find . -type l -exec sh -c 'for l; do echo "$l -> $(readlink "$l")"; done' sh {} + | LC_ALL=C sort
	)
}

next_boot() { # initial-root root: what is in RAM comes back as it was at boot
	for d in proc run var/run; do
		rm -rf "${2:?}/$d"
		[ ! -e "$1/$d" ] || cp -a "$1/$d" "$2/$d"
	done
}

# run_killed NAME ROOT SCRIPT K [VAR=VALUE...]: the run, killed at kill point K ("none": count).
run_killed() {
	kill_name=$1 kill_root=$2 kill_script=$3 kill_at=$4
	shift 4
	rm -f "$tmp/$kill_name.count"
	: >"$tmp/$kill_name.log"
	# The group leader writes its pid, then becomes the script (env, then /bin/sh).
	# shellcheck disable=SC2016 # expanded by that shell
	"$setsid_wait" -w /bin/sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$tmp/$kill_name.group" \
		env PATH="$tmp/killpoints:$path" VMCOST_ROOT="$kill_root" STUB_LOG="$tmp/$kill_name.log" \
		STUB_KILL_COUNT="$tmp/$kill_name.count" STUB_KILL_AT="$kill_at" \
		STUB_KILL_GROUP="$tmp/$kill_name.group" "$@" \
		/bin/sh "$(render "$kill_script")" >"$tmp/$kill_name.out" 2>&1
	kill_count=0
	[ ! -f "$tmp/$kill_name.count" ] || read -r kill_count <"$tmp/$kill_name.count"
}

# kill_test NAME MAKE-ROOT SCRIPT [VAR=VALUE...]
kill_test() {
	kt_name=$1 kt_make=$2 kt_script=$3
	shift 3
	base=$tmp/kill-$kt_name
	"$kt_make" "$base.init"
	cp -a "$base.init" "$base.clean"
	if ! run "kill-$kt_name-clean" "$base.clean" "$kt_script" "$@"; then
		fail "killed: $kt_name: the clean run failed"
		sed 's/^/    /' "$tmp/kill-$kt_name-clean.out"
		return
	fi
	persistent_snapshot "$base.clean" >"$base.clean.snap"
	rm -rf "$base.count-root"
	cp -a "$base.init" "$base.count-root"
	run_killed "kill-$kt_name" "$base.count-root" "$kt_script" none "$@"
	total=$kill_count
	bad="" unkilled="" failed=""
	k=1
	while [ "$k" -le "$total" ]; do
		rm -rf "$base.k"
		cp -a "$base.init" "$base.k"
		run_killed "kill-$kt_name" "$base.k" "$kt_script" "$k" "$@"
		[ "$kill_count" = "$k" ] || unkilled="$unkilled $k"
		next_boot "$base.init" "$base.k"
		if ! run "kill-$kt_name-rerun" "$base.k" "$kt_script" "$@"; then
			[ -n "$failed" ] || cp "$tmp/kill-$kt_name-rerun.out" "$base.failed.out"
			failed="$failed $k"
		else
			persistent_snapshot "$base.k" >"$base.k.snap"
			if ! cmp -s "$base.clean.snap" "$base.k.snap"; then
				[ -n "$bad" ] || diff "$base.clean.snap" "$base.k.snap" >"$base.diff"
				bad="$bad $k"
			fi
		fi
		k=$((k + 1))
	done
	check "killed: $kt_name has kill points ($total)" test "$total" -ge 2
	check "killed: $kt_name: each of the $total runs was killed at its point${unkilled:+ (not:$unkilled)}" \
		test -z "$unkilled"
	if [ -z "$failed" ]; then
		ok "killed: $kt_name: the run after each kill succeeds"
	else
		fail "killed: $kt_name: the run after each kill succeeds (failed after kill points$failed)"
		sed 's/^/    /' "$base.failed.out" | tail -5
	fi
	if [ -z "$bad" ]; then
		ok "killed: $kt_name: after each kill and a new run, the files are those of a clean run"
	else
		fail "killed: $kt_name: after each kill and a new run, the files are those of a clean run (not after kill points$bad)"
		sed 's/^/    /' "$base.diff" | head -10
	fi
}

kill_tests() {
	if [ -z "$setsid_wait" ]; then
		skip "killed partway: util-linux setsid (--wait) is missing"
		return
	fi
	mkdir -p "$tmp/killpoints"
	for cmd in $kill_wrapped; do
		real=$(PATH=$path command -v "$cmd") || continue
		printf '#!/bin/sh\n. "%s/common.sh"\nexec "%s" "$@"\n' "$stubs" "$real" >"$tmp/killpoints/$cmd"
		chmod 755 "$tmp/killpoints/$cmd"
	done
	kill_test boot-quiet-disk make_cloud_root provision/boot-quiet-disk.sh
	kill_test boot-kernel-args make_cloud_root provision/boot-kernel-args.sh
	kill_test boot-docker-group make_cloud_root provision/boot-docker-group.sh
	kill_test idle-tunings make_cloud_root provision/idle-tunings.sh
	kill_test idle-tunings-iso make_iso_root provision/idle-tunings.sh
	kill_test docker make_cloud_root provision/docker.sh
	kill_test docker-iso make_iso_root provision/docker.sh PARAM_dockerVersion=29.8.1
}
boot_tests
kernel_args_tests
docker_group_tests
first_reboot_tests
lima_first_boot_tests
tunings_tests
docker_tests
kill_tests
suite_summary
