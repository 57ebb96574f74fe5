#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost autostop as a service (issue 12, Lifecycle): the systemd user units in host/autostop/
# pass systemd-analyze verify and then run under a real systemd user manager, socket activation
# included: the first client starts the service, which starts the (fake) VM; stopping the
# service exits 0 and leaves the VM running while systemd keeps the socket; the next client
# starts the service again. The launchd plist is checked as far as Linux can: well-formed XML
# once filled in, a Listener socket entry that vmcost takes (launchd itself cannot run here).
#
# The user manager runs as nobody, in a mount namespace of its own (where /run/systemd/system
# exists, so systemd agrees to run) and in a cgroup made for it and delegated to nobody, as
# user@.service would: it cannot touch any other process's cgroup. Both are removed at the end.
# A "VM" here is socat answering /_ping on the instance's docker.sock, started by a fake limactl.
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
# shellcheck source=tests/suite.sh
. tests/suite.sh
units=$repo/host/autostop

# ---- the launchd agent (no launchd here: what can be checked without it) -----------------------
plist_checks() {
	tmpp=$(mktemp -d)
	sed -e "s|@NAME@|dev|g" -e "s|@HOME@|/Users/me|g" -e "s|@VMCOST@|/opt/homebrew/bin/vmcost|g" \
		"$units/vmcost-autostop.plist.in" >"$tmpp/p.plist"
	if grep -q '@[A-Z]*@' "$tmpp/p.plist"; then
		fail "the plist has placeholders the README's sed line does not fill"
	else
		ok "the README's sed line fills every placeholder of the plist"
	fi
	if ! command -v xmllint >/dev/null 2>&1; then
		skip "plist is well-formed XML: xmllint is missing (make deps installs libxml2-utils)"
	elif xmllint --noout "$tmpp/p.plist" 2>"$tmpp/err"; then
		ok "the filled-in plist is well-formed XML"
	else
		fail "the filled-in plist is not well-formed: $(cat "$tmpp/err")"
	fi
	# The Sockets entry must be the name cmd_autostop.c asks launchd for.
	if grep -q '<key>Listener</key>' "$tmpp/p.plist" &&
		grep -q 'platform_activated_socket("Listener")' "$repo/host/commands/cmd_autostop.c"; then
		ok "the plist's Sockets entry is \"Listener\", the one vmcost asks launch_activate_socket for"
	else
		fail "plist Sockets entry and platform_activated_socket() name differ"
	fi
	if grep -q '<string>/Users/me/.lima/dev/sock/docker-autostop.sock</string>' "$tmpp/p.plist" &&
		grep -A1 SockPathMode "$tmpp/p.plist" | grep -q '<integer>384</integer>'; then
		ok "the socket is \$HOME/.lima/NAME/sock/docker-autostop.sock, mode 0600 (384)"
	else
		fail "plist socket path or mode"
	fi
	rm -rf "$tmpp"
}
plist_checks

# ---- the systemd units ---------------------------------------------------------------------
if ! command -v systemd-analyze >/dev/null 2>&1; then
	skip "systemd-analyze verify: systemd is not installed"
else
	vdir=$(mktemp -d)
	mkdir -p "$vdir/run" && chmod 700 "$vdir/run"
	cp "$units/vmcost-autostop@.socket" "$units/vmcost-autostop@.service" "$vdir/"
	printf '[Service]\nExecStart=not-absolute\nNoSuchKey=1\n' >"$vdir/broken@.service"
	if (cd "$vdir" && XDG_RUNTIME_DIR=$vdir/run systemd-analyze verify --user \
		vmcost-autostop@dev.socket vmcost-autostop@dev.service) >"$vdir/out" 2>&1; then
		ok "systemd-analyze verify accepts vmcost-autostop@.socket and @.service"
	else
		fail "systemd-analyze verify: $(cat "$vdir/out")"
	fi
	if (cd "$vdir" && XDG_RUNTIME_DIR=$vdir/run systemd-analyze verify --user broken@x.service) \
		>/dev/null 2>&1; then
		fail "systemd-analyze verify accepted a broken unit: the check above proves nothing"
	else
		ok "systemd-analyze verify rejects a broken unit (the check can fail)"
	fi
	rm -rf "$vdir"
fi

# ---- a real systemd user manager ---------------------------------------------------------------
why_not=""
[ "$(id -u)" = 0 ] || why_not="needs root (a mount namespace and a delegated cgroup)"
for tool in unshare nsenter setpriv systemctl socat curl; do
	[ -n "$why_not" ] || command -v "$tool" >/dev/null 2>&1 || why_not="$tool is missing"
done
[ -n "$why_not" ] || [ -x /lib/systemd/systemd ] || why_not="/lib/systemd/systemd is missing"
[ -n "$why_not" ] || [ -x host/vmcost ] || why_not="host/vmcost is not built (make)"
if [ -z "$why_not" ]; then
	if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		hierarchies=/sys/fs/cgroup
	elif [ -d /sys/fs/cgroup/unified ] && [ -d /sys/fs/cgroup/systemd ]; then
		hierarchies="/sys/fs/cgroup/unified /sys/fs/cgroup/systemd"
	else
		why_not="no cgroup2 hierarchy to delegate"
	fi
fi
if [ -n "$why_not" ]; then
	skip "the units under a real systemd user manager: $why_not"
	suite_summary
	exit $?
fi

uid=$(id -u nobody) gid=$(id -g nobody)
tmp=$(mktemp -d /tmp/vmcost-units.XXXXXX)
chmod 755 "$tmp"
home=$tmp/home
cg=vmcost-autostop-units-$$
inst=$home/.lima/dev
sock=$inst/sock/docker-autostop.sock
mkdir -p "$home/bin" "$home/state" "$inst/sock" "$home/.config/systemd/user" "$home/run"
chmod 700 "$home/run"
# The manager's user may not reach the checkout (a clone in root's home or in a mktemp -d
# directory is mode 700): it runs a copy of vmcost from its own home.
cp host/vmcost "$home/bin/vmcost"
echo "vmType: qemu" >"$inst/lima.yaml"

# The "VM": socat answering Docker's /_ping and /containers/json on docker.sock.
cat >"$home/bin/fake-dockerd-conn" <<'EOF'
#!/bin/sh
IFS= read -r request
cr=$(printf '\r')
while IFS= read -r header; do
	[ "$header" = "$cr" ] && break
	[ -z "$header" ] && break
done
case $request in
"GET /_ping "*) body=OK ;;
"GET /containers/json"*) body='[]' ;;
*) body='{}' ;;
esac
printf 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %s\r\nConnection: close\r\n\r\n%s' \
	"${#body}" "$body"
EOF
cat >"$home/bin/limactl" <<EOF
#!/bin/sh
state=$home/state
echo "\$*" >>"\$state/calls"
alive() { [ -f "\$state/dockerd.pid" ] && kill -0 "\$(cat "\$state/dockerd.pid")" 2>/dev/null; }
case \$1 in
list)
	st=Stopped
	alive && st=Running
	printf '{"name":"dev","status":"%s","dir":"%s","vmType":"qemu"}\n' "\$st" "$inst" ;;
start)
	alive && exit 0
	socat UNIX-LISTEN:$inst/sock/docker.sock,fork,unlink-early EXEC:$home/bin/fake-dockerd-conn \
		</dev/null >/dev/null 2>&1 &
	echo \$! >"\$state/dockerd.pid"
	sleep 0.3 ;;
stop)
	alive && kill "\$(cat "\$state/dockerd.pid")"
	rm -f "\$state/dockerd.pid" ;;
esac
EOF
chmod 755 "$home/bin/limactl" "$home/bin/fake-dockerd-conn" "$home/bin/vmcost"
cp "$units/vmcost-autostop@.socket" "$units/vmcost-autostop@.service" "$home/.config/systemd/user/"
# What the README's `systemctl --user edit` step does: say where limactl (and here vmcost) are.
mkdir -p "$home/.config/systemd/user/vmcost-autostop@.service.d"
cat >"$home/.config/systemd/user/vmcost-autostop@.service.d/test.conf" <<EOF
[Service]
Environment=PATH=$home/bin:/usr/bin:/bin
StandardOutput=append:$home/autostop.log
StandardError=append:$home/autostop.log
EOF
chown -R "$uid:$gid" "$home"

# As nobody, in the manager's mount namespace (systemctl too checks for /run/systemd/system).
as_user() {
	nsenter -t "$(cat "$tmp/manager.pid")" -m setpriv --reuid="$uid" --regid="$gid" \
		--clear-groups env -i HOME="$home" XDG_RUNTIME_DIR="$home/run" \
		PATH="$home/bin:/usr/bin:/bin" "$@"
}

cleanup() {
	if [ -f "$tmp/manager.pid" ]; then
		kill "$(cat "$tmp/manager.pid")" 2>/dev/null
		i=0
		while kill -0 "$(cat "$tmp/manager.pid")" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	if [ -f "$home/state/dockerd.pid" ]; then
		vm=$(cat "$home/state/dockerd.pid")
		kill "$vm" 2>/dev/null
		i=0
		while kill -0 "$vm" 2>/dev/null && [ $i -lt 50 ]; do
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

# The manager: moved into its delegated cgroup, then started as nobody in a mount namespace
# where /run/systemd/system exists (systemd --user refuses to run without it).
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
	state=$(as_user systemctl --user is-system-running 2>/dev/null)
	case $state in running | degraded) running=$state; break ;; esac
	sleep 0.2
	i=$((i + 1))
done
if [ -z "$running" ]; then
	fail "a systemd user manager runs as nobody: $(tail -5 "$tmp/manager.log")"
	suite_summary
	exit $?
fi
ok "a systemd user manager runs as nobody in a cgroup of its own ($running)"

if as_user systemctl --user enable --now vmcost-autostop@dev.socket >"$tmp/out" 2>&1; then
	ok "systemctl --user enable --now vmcost-autostop@dev.socket"
else
	fail "enable the socket: $(cat "$tmp/out")"
fi
mode=$(stat -c %A "$sock" 2>/dev/null)
if [ "$mode" = srw------- ]; then ok "systemd made $sock, mode 0600"; else
	fail "socket $sock: mode \"$mode\""
fi
active=$(as_user systemctl --user is-active vmcost-autostop@dev.service)
if [ "$active" = inactive ]; then ok "the service waits for a client (inactive)"; else
	fail "the service is $active before any client"
fi

answer=$(as_user curl -s --max-time 60 --unix-socket "$sock" http://localhost/_ping)
if [ "$answer" = OK ]; then
	ok "the first client started the service, which started the VM: /_ping answered"
else
	fail "first client: \"$answer\"; log: $(cat "$home/autostop.log" 2>/dev/null)"
fi
if grep -q "listening on $sock (socket activation)" "$home/autostop.log" 2>/dev/null; then
	ok "vmcost took the socket systemd passed (socket activation)"
else
	fail "no socket activation in the log: $(cat "$home/autostop.log" 2>/dev/null)"
fi
starts=$(grep -c '^start' "$home/state/calls" 2>/dev/null)
if [ "$starts" = 1 ]; then ok "one limactl start"; else fail "limactl start ran ${starts:-0} times"; fi
# Docker may answer before `limactl start` has returned (the fake one sleeps 0.3 s after its
# dockerd is up): the start ends, and the state leaves "starting", only when both have happened.
for _ in 1 2 3 4 5 6 7 8 9 10; do
	status=$(as_user vmcost autostop dev --status 2>&1)
	case $status in "dev: starting"*) sleep 0.2 ;; *) break ;; esac
done
case $status in
"dev: running"* | "dev: checking"*) ok "vmcost autostop dev --status reaches the service: ${status%%
*}" ;;
*) fail "--status: $status" ;;
esac

# (systemctl warns that the socket can start it again: that is the point.)
as_user systemctl --user stop vmcost-autostop@dev.service 2>/dev/null
main=$(as_user systemctl --user show -p ExecMainCode -p ExecMainStatus vmcost-autostop@dev.service |
	tr '\n' ' ')
# ExecMainCode 1 is CLD_EXITED: it exited by itself on SIGTERM, with status 0.
case $main in
*ExecMainCode=1*ExecMainStatus=0* | *ExecMainStatus=0*ExecMainCode=1*)
	ok "systemctl stop: SIGTERM, and vmcost exited 0 ($main)" ;;
*) fail "after systemctl stop: $main" ;;
esac
if [ -f "$home/state/dockerd.pid" ] && kill -0 "$(cat "$home/state/dockerd.pid")" 2>/dev/null; then
	ok "the VM was left running"
else
	fail "the VM is gone after stopping the service"
fi
if [ -S "$sock" ] && [ "$(as_user systemctl --user is-active vmcost-autostop@dev.socket)" = active ]; then
	ok "systemd kept the socket"
else
	fail "the socket is gone after stopping the service"
fi
answer=$(as_user curl -s --max-time 60 --unix-socket "$sock" http://localhost/_ping)
starts=$(grep -c '^start' "$home/state/calls" 2>/dev/null)
if [ "$answer" = OK ] && [ "$starts" = 1 ]; then
	ok "the next client started the service again; the running VM was not started twice"
else
	fail "second client: \"$answer\", limactl start ran ${starts:-0} times"
fi
as_user systemctl --user disable --now vmcost-autostop@dev.socket vmcost-autostop@dev.service \
	>/dev/null 2>&1
if [ ! -e "$sock" ]; then ok "disabling the socket removes it (RemoveOnStop)"; else
	fail "$sock is still there after disable --now"
fi
suite_summary
