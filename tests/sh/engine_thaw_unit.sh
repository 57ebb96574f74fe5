#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# provision/systemd/vmcost-engine-thaw.service under a real systemd (a user manager, as
# tests/sh/autostop_service.sh runs one) and the real cgroup v2 freezer (issue 21): with the
# cgroups of a stand-in docker.service and containerd.service frozen, `systemctl stop docker`
# runs the unit's ExecStop= (a stand-in vmcost-agent that thaws them) before docker gets its
# SIGTERM, and the stop ends at once instead of at its timeout. And the control that shows why it
# is a unit of its own: the same ExecStop= in a drop-in of the frozen service itself is started
# in that service's frozen cgroup, freezes, and the stop times out.
#
# The user manager runs as nobody, in a mount namespace of its own and in a cgroup made for it
# and delegated to nobody; both are removed at the end.
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
# shellcheck source=tests/suite.sh
. tests/suite.sh

unit=$repo/provision/systemd/vmcost-engine-thaw.service
if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd-analyze verify: systemd is not installed"
else
	vdir=$(mktemp -d)
	cp "$unit" "$vdir/"
	if (cd "$vdir" && systemd-analyze verify --man=no ./vmcost-engine-thaw.service) >"$vdir/out" 2>&1 &&
		! grep -v 'docker.service\|containerd.service' "$vdir/out" | grep -q .; then
		ok "systemd-analyze verify accepts vmcost-engine-thaw.service"
	else
		fail "systemd-analyze verify: $(cat "$vdir/out")"
	fi
	rm -rf "$vdir"
fi

why_not=""
[ "$(id -u)" = 0 ] || why_not="needs root (a mount namespace, a delegated cgroup, freezing)"
for tool in unshare nsenter setpriv systemctl timeout; do
	[ -n "$why_not" ] || command -v "$tool" >/dev/null 2>&1 || why_not="$tool is missing"
done
[ -n "$why_not" ] || [ -x /lib/systemd/systemd ] || why_not="/lib/systemd/systemd is missing"
if [ -z "$why_not" ]; then
	if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		hierarchies=/sys/fs/cgroup unified=/sys/fs/cgroup
	elif [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/systemd ]; then
		hierarchies="/sys/fs/cgroup/unified /sys/fs/cgroup/systemd" unified=/sys/fs/cgroup/unified
	else
		why_not="no cgroup2 hierarchy to delegate"
	fi
fi
cg=vmcost-thaw-unit-$$
if [ -z "$why_not" ]; then
	if mkdir "$unified/$cg" 2>/dev/null; then
		[ -e "$unified/$cg/cgroup.freeze" ] || why_not="no cgroup v2 freezer (cgroup.freeze; Linux 5.2 or later)"
		rmdir "$unified/$cg"
	else
		why_not="cannot create a cgroup in $unified"
	fi
fi
if [ -n "$why_not" ]; then
	skip "the unit under a real systemd and the cgroup freezer: $why_not"
	suite_summary
	exit $?
fi

uid=$(id -u nobody) gid=$(id -g nobody)
tmp=$(mktemp -d /tmp/vmcost-thaw-unit.XXXXXX)
chmod 755 "$tmp"
home=$tmp/home
state=$home/state
units=$home/.config/systemd/user
mkdir -p "$home/bin" "$state" "$units/wrong.service.d" "$home/run"
chmod 700 "$home/run"

# A daemon that notes its SIGTERM (a frozen one notes it only once thawed).
cat >"$home/bin/fake-daemon" <<EOF
#!/bin/sh
trap 'echo "\$1 got SIGTERM" >>$state/order; exit 0' TERM
while :; do sleep 0.1; done
EOF
# vmcost-agent engine thaw: writes 0 to every cgroup.freeze the test listed for it.
cat >"$home/bin/vmcost-agent" <<EOF
#!/bin/sh
echo "agent \$*" >>$state/order
while read -r f; do echo 0 >"\$f"; done <"$state/cgroups\${3:+-\$3}"
EOF
chmod 755 "$home/bin/fake-daemon" "$home/bin/vmcost-agent"
for svc in docker containerd; do
	printf '[Service]\nExecStart=%s/bin/fake-daemon %s\nDelegate=yes\nTimeoutStopSec=20\n' \
		"$home" "$svc" >"$units/$svc.service"
done
sed "s|/usr/local/bin/vmcost-agent|$home/bin/vmcost-agent|" "$unit" >"$units/vmcost-engine-thaw.service"
# The control: the thaw as an ExecStop= of the frozen service itself.
printf '[Service]\nExecStart=%s/bin/fake-daemon wrong\nDelegate=yes\nTimeoutStopSec=3\n' \
	"$home" >"$units/wrong.service"
printf '[Service]\nExecStop=-%s/bin/vmcost-agent engine thaw wrong\n' "$home" \
	>"$units/wrong.service.d/thaw.conf"
chown -R "$uid:$gid" "$home"

as_user() {
	nsenter -t "$(cat "$tmp/manager.pid")" -m setpriv --reuid="$uid" --regid="$gid" \
		--clear-groups env -i HOME="$home" XDG_RUNTIME_DIR="$home/run" PATH=/usr/bin:/bin "$@"
}

frozen_cgroups() { # the cgroup.freeze files of the services given
	for svc; do
		echo "$unified$(as_user systemctl --user show -p ControlGroup --value "$svc.service")/cgroup.freeze"
	done
}

freeze() { # list file: freezes each, true once all report frozen 1
	while read -r f; do echo 1 >"$f"; done <"$1"
	i=0
	while [ $i -lt 50 ]; do
		all=1
		while read -r f; do
			grep -qx 'frozen 1' "${f%/cgroup.freeze}/cgroup.events" || all=0
		done <"$1"
		[ $all = 1 ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

cleanup() {
	for f in "$state"/cgroups*; do
		[ -f "$f" ] || continue
		while read -r c; do [ -e "$c" ] && echo 0 >"$c"; done <"$f"
	done
	if [ -f "$tmp/manager.pid" ]; then
		kill "$(cat "$tmp/manager.pid")" 2>/dev/null
		i=0
		while kill -0 "$(cat "$tmp/manager.pid")" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	for h in $hierarchies; do
		[ -d "$h/$cg" ] && find "$h/$cg" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for h in $hierarchies; do
	mkdir "$h/$cg" && chown -R "$uid:$gid" "$h/$cg"
done
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private sh -c '
	mount -t tmpfs tmpfs /run/systemd && mkdir -p /run/systemd/system || exit 1
	for h in $1; do echo $$ >"$h/$2/cgroup.procs" || exit 1; done
	exec setpriv --reuid="$3" --regid="$4" --clear-groups env -i HOME="$5" \
		XDG_RUNTIME_DIR="$5/run" PATH=/usr/bin:/bin /lib/systemd/systemd --user
' sh "$hierarchies" "$cg" "$uid" "$gid" "$home" >"$tmp/manager.log" 2>&1 &
echo $! >"$tmp/manager.pid"
running=""
i=0
while [ $i -lt 100 ]; do
	st=$(as_user systemctl --user is-system-running 2>/dev/null)
	case $st in running | degraded) running=$st; break ;; esac
	sleep 0.2
	i=$((i + 1))
done
if [ -z "$running" ]; then
	fail "a systemd user manager runs as nobody: $(tail -5 "$tmp/manager.log")"
	suite_summary
	exit $?
fi
ok "a systemd user manager runs as nobody in a cgroup of its own ($running)"

as_user systemctl --user enable vmcost-engine-thaw.service >"$tmp/enable.out" 2>&1
check "enabling the unit links it into docker.service.wants and containerd.service.wants" sh -c \
	"test -L '$units/docker.service.wants/vmcost-engine-thaw.service' && test -L '$units/containerd.service.wants/vmcost-engine-thaw.service'"
as_user systemctl --user start containerd.service docker.service
check "starting docker starts it (WantedBy=)" test "$(as_user systemctl --user is-active vmcost-engine-thaw.service)" = active
frozen_cgroups docker containerd >"$state/cgroups"
chown "$uid:$gid" "$state/cgroups"
if freeze "$state/cgroups"; then ok "docker's and containerd's cgroups are frozen (frozen 1)"; else
	fail "freezing the stand-in engine: $(cat "$state/cgroups")"
fi

t0=$(date +%s)
timeout 60 nsenter -t "$(cat "$tmp/manager.pid")" -m setpriv --reuid="$uid" --regid="$gid" \
	--clear-groups env -i HOME="$home" XDG_RUNTIME_DIR="$home/run" PATH=/usr/bin:/bin \
	systemctl --user stop docker.service
took=$(($(date +%s) - t0))
check "systemctl stop docker of a frozen engine ends at once (${took} s; its timeout is 20 s)" test "$took" -lt 10
first=$(head -n 1 "$state/order" 2>/dev/null)
check "the thaw unit's ExecStop= ran first ($first)" test "$first" = "agent engine thaw"
check "... then docker got its SIGTERM" test "$(sed -n 2p "$state/order")" = "docker got SIGTERM"
check "docker.service stopped cleanly" test "$(as_user systemctl --user show -p Result --value docker.service)" = success
check "the thaw unit stopped with it (PartOf=)" test "$(as_user systemctl --user is-active vmcost-engine-thaw.service)" = inactive
as_user systemctl --user start docker.service
check "starting docker again starts it again" test "$(as_user systemctl --user is-active vmcost-engine-thaw.service)" = active
as_user systemctl --user stop docker.service containerd.service

# The control: the thaw in an ExecStop= of the frozen service is itself frozen.
: >"$state/order"
as_user systemctl --user start wrong.service
frozen_cgroups wrong >"$state/cgroups-wrong"
chown "$uid:$gid" "$state/cgroups-wrong"
freeze "$state/cgroups-wrong"
t0=$(date +%s)
timeout 60 nsenter -t "$(cat "$tmp/manager.pid")" -m setpriv --reuid="$uid" --regid="$gid" \
	--clear-groups env -i HOME="$home" XDG_RUNTIME_DIR="$home/run" PATH=/usr/bin:/bin \
	systemctl --user stop wrong.service 2>/dev/null
took=$(($(date +%s) - t0))
check "control: an ExecStop= drop-in on the frozen service waits out its timeout (${took} s of 3)" test "$took" -ge 3
check "control: ... and the stop ends in a timeout, not a clean exit" \
	test "$(as_user systemctl --user show -p Result --value wrong.service)" != success
check "control: ... its SIGTERM never reached the daemon" sh -c "! grep -q 'wrong got SIGTERM' '$state/order'"
suite_summary
