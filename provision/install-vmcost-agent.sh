#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# install.sh, in the agent's source tarball (provision/install-vmcost-agent.sh in the repository):
# builds vmcost-agent from the sources beside it (/usr/local/src/vmcost, where the template
# fragment's installer, provision/vmcost-agent.sh, unpacked them), installs it in /usr/local/bin
# and runs it as the `cache-trim` service. Run at every boot; builds only when the sources differ
# from the ones the installed binary was built from.
#   Alpine (apk, OpenRC): build tools are the apk virtual package .vmcost-agent-build, removed
#   after the build, and at any later run that finds it still installed (a run killed between
#   `apk add` and `apk del`, as on the first boot that goes down while it provisions).
#   Debian, Ubuntu (apt, systemd): build tools installed by this script are purged after the build;
#   the libraries the agent links stay.
#   Fedora (dnf, systemd): build tools installed by this script stay installed.
# Packages are installed only when missing (an image that has them needs no network).
# On every guest it also applies the idle sysctls (idle-sysctls.sh), and for the engine that
# vmcost-agent can freeze: a thaw before a hand-run stop of docker or containerd (systemd: the
# unit systemd/vmcost-engine-thaw.service; OpenRC: a line in /etc/conf.d/docker and
# /etc/conf.d/containerd), and on systemd a quieter standalone containerd (containerd-quiet.sh).
# Idempotent: a second run changes no file. VMCOST_USER: the Lima user (the installer passes it);
# VMCOST_ROOT (tests only) prefixes every path.
set -eu
root=${VMCOST_ROOT:-}
user=${VMCOST_USER:-USER}
src=/usr/local/src/vmcost
bin=/usr/local/bin/vmcost-agent
stamp=/usr/local/lib/vmcost/agent-sources.sha256
socket=/run/vmcost-agent.sock
openrc_service=/etc/init.d/cache-trim
systemd_unit=/etc/systemd/system/cache-trim.service
thaw_unit=/etc/systemd/system/vmcost-engine-thaw.service

say() { echo "vmcost agent: $*"; }
die() {
	echo "vmcost agent: $*" >&2
	exit 1
}

# ---- packages ------------------------------------------------------------------------------------
# The package manager comes from the guest's release file, not from PATH.
package_manager() {
	if [ -e "$root/etc/alpine-release" ]; then
		echo apk
	elif [ -e "$root/etc/debian_version" ]; then
		echo apt
	elif [ -e "$root/etc/fedora-release" ] || [ -e "$root/etc/redhat-release" ]; then
		echo dnf
	else
		echo unknown
	fi
}

# What the build needs, per package manager: runtime libraries (kept) and build tools.
runtime_packages() {
	case $1 in
	apk) echo "yaml jansson libmicrohttpd" ;;
	*) echo "" ;; # apt and dnf: the -dev packages pull the libraries in
	esac
}
build_packages() {
	case $1 in
	apk) echo "build-base pkgconf linux-headers yaml-dev jansson-dev libmicrohttpd-dev" ;;
	apt) echo "gcc libc6-dev pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev" ;;
	dnf) echo "gcc pkgconf-pkg-config libyaml-devel jansson-devel libmicrohttpd-devel" ;;
	esac
}

installed() { # manager package
	case $1 in
	apk) apk info -e "$2" >/dev/null 2>&1 ;;
	apt) [ "$(dpkg-query -W -f='${db:Status-Status}' "$2" 2>/dev/null)" = installed ] ;;
	dnf) rpm -q "$2" >/dev/null 2>&1 ;;
	*) return 1 ;;
	esac
}

missing() { # manager package... -> the packages not installed
	manager=$1
	shift
	out=""
	for pkg in "$@"; do
		installed "$manager" "$pkg" || out="$out $pkg"
	done
	echo "${out# }"
}

# shellcheck disable=SC2086 # lists of package names throughout
install_packages() { # manager package...
	manager=$1
	shift
	[ $# -gt 0 ] || return 0
	case $manager in
	apk) apk add "$@" ;;
	apt)
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
		;;
	dnf) dnf install -y "$@" ;;
	esac
}

# The build tools go again (apk: the virtual package, whoever installed it; apt: the packages this
# run installed, purged after the libraries the agent links are marked as wanted so --auto-remove
# keeps them).
remove_build_packages() { # manager package...
	manager=$1
	shift
	if [ "$manager" = apk ]; then
		remove_apk_build_packages
		return 0
	fi
	[ $# -gt 0 ] || return 0
	case $manager in
	apt)
		libs=$(linked_packages)
		# shellcheck disable=SC2086
		[ -z "$libs" ] || apt-mark manual $libs
		DEBIAN_FRONTEND=noninteractive apt-get purge -y --auto-remove "$@"
		;;
	dnf) say "build tools stay installed: $*" ;;
	esac
}

# The virtual package goes whenever it is installed: a run killed after `apk add --virtual` left it,
# and the next run finds nothing missing, so it cannot go by what that run installed.
remove_apk_build_packages() {
	if apk info -e .vmcost-agent-build >/dev/null 2>&1; then
		apk del .vmcost-agent-build
	fi
}

# Debian packages of the shared libraries the new binary links.
linked_packages() {
	[ -x "$root$bin.new" ] || return 0
	ldd "$root$bin.new" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		while read -r lib; do dpkg -S "$lib" 2>/dev/null || true; done |
		cut -d: -f1 | LC_ALL=C sort -u | tr '\n' ' '
}

# ---- build ---------------------------------------------------------------------------------------
build() {
	manager=$(package_manager)
	[ "$manager" != unknown ] || die "no apk, apt or dnf guest (/etc/alpine-release, /etc/debian_version, /etc/fedora-release): install a C compiler, pkg-config and the libyaml, jansson and libmicrohttpd development files, then run $src/build.sh $src $bin"
	# shellcheck disable=SC2046 # lists of package names
	install_packages "$manager" $(missing "$manager" $(runtime_packages "$manager"))
	# shellcheck disable=SC2046
	set -- $(missing "$manager" $(build_packages "$manager"))
	if [ $# -gt 0 ]; then
		if [ "$manager" = apk ]; then
			apk add --virtual .vmcost-agent-build "$@"
		else
			install_packages "$manager" "$@"
		fi
	fi
	rc=0
	sh "$root$src/build.sh" "$root$src" "$root$bin.new" || rc=$?
	remove_build_packages "$manager" "$@"
	if [ "$rc" -ne 0 ]; then
		rm -f "$root$bin.new"
		die "building vmcost-agent failed (exit $rc); the log above has the compiler's message"
	fi
	mv -f "$root$bin.new" "$root$bin"
}

# ---- service -------------------------------------------------------------------------------------
init_system() {
	if [ -d "$root/run/systemd/system" ]; then
		echo systemd
	elif [ -e "$root/sbin/openrc-run" ]; then
		echo openrc
	else
		echo unknown
	fi
}

# Copies file to dest when it differs; true if it changed.
install_file() { # source dest mode
	if [ -f "$root$2" ] && cmp -s "$root$1" "$root$2"; then
		return 1
	fi
	mkdir -p "$root${2%/*}"
	cat "$root$1" >"$root$2.new"
	chmod "$3" "$root$2.new"
	mv -f "$root$2.new" "$root$2"
}

run_openrc_service() { # restart (1: the binary or the script changed)
	if install_file "$src/init.d/cache-trim" "$openrc_service" 0755; then
		say "installed $openrc_service"
		set -- 1
	fi
	[ -e "$root/etc/runlevels/default/cache-trim" ] || rc-update add cache-trim default
	[ "$1" = 0 ] || rc-service --ifstarted cache-trim restart
	rc-service --ifstopped cache-trim start
}

run_systemd_service() { # restart
	if install_file "$src/systemd/cache-trim.service" "$systemd_unit" 0644; then
		say "installed $systemd_unit"
		systemctl daemon-reload
		set -- 1
	fi
	systemctl is-enabled --quiet cache-trim.service || systemctl enable cache-trim.service
	if [ "$1" = 1 ]; then
		systemctl try-restart cache-trim.service
	fi
	systemctl start cache-trim.service
}

# ---- the engine: thawed before a stop, quieter ---------------------------------------------------
# A frozen dockerd ignores SIGTERM: a `systemctl stop docker` or `rc-service docker stop` run by
# hand while vmcost-agent has the engine frozen would wait out the stop timeout and end in
# SIGKILL. The agent's own service thaws when it stops, and stops first at shutdown; these cover
# a stop of the engine's services alone.

# systemd: a unit of its own (its comments say why not a drop-in for docker.service), enabled
# for docker.service and containerd.service (WantedBy=) and started. Then containerd-quiet.sh,
# which leaves everything but a standalone containerd.service alone.
systemd_engine() {
	if install_file "$src/systemd/vmcost-engine-thaw.service" "$thaw_unit" 0644; then
		say "installed $thaw_unit"
		systemctl daemon-reload
	fi
	systemctl is-enabled --quiet vmcost-engine-thaw.service || systemctl enable vmcost-engine-thaw.service
	systemctl start vmcost-engine-thaw.service
	sh "$root$src/containerd-quiet.sh" || say "warning: containerd-quiet.sh failed (above); containerd is left as it was"
}

# OpenRC: openrc-run reads /etc/conf.d/SERVICE before it runs the service's stop. The thaw is
# a top-level line there, not a stop_pre() (which an init script's own stop_pre() would replace):
# OpenRC 0.63 moves the stopping shell into /sys/fs/cgroup/openrc.SERVICE, frozen with the
# engine, before it calls stop_pre(), and the stop would freeze with it. provision/docker.sh
# (the vmcost templates) writes the same lines for the docker it installs.
thaw_marker="# vmcost: thaw the engine before this service stops"
add_thaw_hook() { # conf.d file: true if it changed
	if [ -f "$1" ] && grep -qxF "$thaw_marker" "$1"; then
		return 1
	fi
	mkdir -p "${1%/*}"
	[ ! -e "$1" ] || cp -p "$1" "$1.vmcost-new"
	{
		[ ! -f "$1" ] || cat "$1"
		echo "$thaw_marker"
		echo "# (vmcost-agent engine thaw). A frozen dockerd ignores SIGTERM, and OpenRC 0.63 moves the"
		echo "# stopping shell into this service's frozen cgroup before stop_pre(): so here, at the top."
		# shellcheck disable=SC2016 # expanded by openrc-run, not here
		echo 'case ${RC_CMD:-} in stop | restart) [ ! -x /usr/local/bin/vmcost-agent ] || /usr/local/bin/vmcost-agent engine thaw >/dev/null 2>&1 || true ;; esac'
	} >"$1.vmcost-new"
	mv -f "$1.vmcost-new" "$1"
}

openrc_engine() {
	for svc in docker containerd; do
		[ -e "$root/etc/init.d/$svc" ] || continue
		if add_thaw_hook "$root/etc/conf.d/$svc"; then
			say "/etc/conf.d/$svc thaws the engine before $svc stops"
		fi
	done
}

# ---- main ----------------------------------------------------------------------------------------
# The sources' digest names exactly what the binary was built from (file names and contents).
sources_digest() {
	(cd "$root$src" && find . -type f | LC_ALL=C sort | while read -r f; do
		printf '%s\n' "$f"
		sha256sum <"$f"
	done) | sha256sum | cut -d' ' -f1
}

[ -f "$root$src/build.sh" ] || die "$src/build.sh is missing: the agent's sources were not unpacked"
# First, so that a failing build cannot leave an idle guest without them.
sh "$root$src/idle-sysctls.sh" || say "warning: idle-sysctls.sh failed (above)"
restart=0
digest=$(sources_digest)
if [ ! -x "$root$bin" ] || [ "$(cat "$root$stamp" 2>/dev/null)" != "$digest" ]; then
	mkdir -p "$root${bin%/*}" "$root${stamp%/*}"
	build
	echo "$digest" >"$root$stamp.new"
	mv -f "$root$stamp.new" "$root$stamp"
	say "built $bin ($("$root$bin" --version 2>/dev/null || echo "version unknown"))"
	restart=1
elif [ "$(package_manager)" = apk ]; then
	remove_apk_build_packages
fi
# The lab and the service scripts may call it by either path.
[ -L "$root/usr/bin/vmcost-agent" ] || ln -sf "$bin" "$root/usr/bin/vmcost-agent"

case $(init_system) in
openrc)
	run_openrc_service "$restart"
	openrc_engine
	;;
systemd)
	run_systemd_service "$restart"
	systemd_engine
	;;
*) die "neither OpenRC (/sbin/openrc-run) nor systemd (/run/systemd/system): start '$bin run --config /etc/vmcost/agent.yaml' yourself" ;;
esac

# Lima's socket forward runs as the Lima user: the configuration must give it the socket, or the
# host loses access the first time the agent re-creates it. A configuration written before the
# fragment set socket-owner is kept as it is (it is the user's), so say what to add.
config=/etc/vmcost/agent.yaml
if [ -f "$root$config" ] && ! grep -q '^socket-owner:' "$root$config"; then
	say "warning: $config sets no socket-owner, so the socket forwarded to the host is root's: add the line 'socket-owner: $user' and restart cache-trim"
fi
i=0
while [ ! -e "$root$socket" ] && [ "$i" -lt 30 ]; do
	sleep 1
	i=$((i + 1))
done
[ -e "$root$socket" ] || die "vmcost-agent did not create $socket within 30 s: see logread or journalctl -t vmcost-agent"
