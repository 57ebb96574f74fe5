#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot), from templates/vmcost-agent.yaml: build
# vmcost-agent from the sources the template embeds (one `mode: data` entry, the text bundle
# /usr/local/src/vmcost.bundle, written by Lima before any system script runs; unpacked into
# /usr/local/src/vmcost), install it in /usr/local/bin and run it as the `cache-trim` service.
#   Alpine (apk, OpenRC): build tools are an apk virtual package removed right after the build.
#   Debian, Ubuntu (apt, systemd): build tools installed by this script are purged after the build;
#   the libraries the agent links stay.
#   Fedora (dnf, systemd): build tools installed by this script stay installed.
# Packages are installed only when missing (an image that has them needs no network). The build
# runs only when the bundle changes (first boot, or a template with another agent version).
# /usr/local persists on the alpine-lima ISO too. Idempotent: a second run changes no file. VMCOST_ROOT (tests only) prefixes every path.
set -eu
root=${VMCOST_ROOT:-}
# Lima renders this template field with the instance's user name.
user="{{.User}}"
src=/usr/local/src/vmcost
bundle=/usr/local/src/vmcost.bundle
bin=/usr/local/bin/vmcost-agent
stamp=/usr/local/lib/vmcost/agent-sources.sha256
socket=/run/vmcost-agent.sock
openrc_service=/etc/init.d/cache-trim
systemd_unit=/etc/systemd/system/cache-trim.service

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

# The build tools this run installed go again (apk: a virtual package; apt: purged, after the
# libraries the agent links are marked as wanted so --auto-remove keeps them).
remove_build_packages() { # manager package...
	manager=$1
	shift
	[ $# -gt 0 ] || return 0
	case $manager in
	apk) apk del .vmcost-agent-build ;;
	apt)
		libs=$(linked_packages)
		# shellcheck disable=SC2086
		[ -z "$libs" ] || apt-mark manual $libs
		DEBIAN_FRONTEND=noninteractive apt-get purge -y --auto-remove "$@"
		;;
	dnf) say "build tools stay installed: $*" ;;
	esac
}

# Debian packages of the shared libraries the new binary links.
linked_packages() {
	[ -x "$root$bin.new" ] || return 0
	ldd "$root$bin.new" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
		while read -r lib; do dpkg -S "$lib" 2>/dev/null || true; done |
		cut -d: -f1 | LC_ALL=C sort -u | tr '\n' ' '
}

# ---- build ---------------------------------------------------------------------------------------
# The bundle (templates/update-embedded writes it): "@ SIZE PATH" starts a file, each of its lines
# follows with "|" in front. Unpacked into a new directory that replaces $src once every file
# has the size the bundle names, so a damaged bundle leaves the previous sources in place.
unpack() {
	new=$root$src.new
	rm -rf "$new"
	mkdir -p "$new"
	if ! awk '/^@ / { if ($3 ~ /(^|\/)\.\.(\/|$)/ || $3 ~ /^\//) exit 1; d = $3
			if (sub(/\/[^\/]*$/, "", d)) print d }' "$root$bundle" >"$new.dirs"; then
		rm -rf "$new" "$new.dirs"
		die "$bundle names a path outside $src: the template's bundle is damaged"
	fi
	LC_ALL=C sort -u "$new.dirs" | while read -r d; do mkdir -p "$new/$d"; done
	rm -f "$new.dirs"
	if ! awk -v dir="$new" '
		/^@ / { if (out != "") close(out); out = dir "/" $3; printf "" >out; next }
		/^\|/ && out != "" { print substr($0, 2) >out; next }
		/^#/ && out == "" { next }
		{ exit 1 }' "$root$bundle"; then
		rm -rf "$new"
		die "$bundle is not a vmcost-agent bundle: the template's data entry was damaged"
	fi
	awk '/^@ / { print $2, $3 }' "$root$bundle" | while read -r size path; do
		if [ "$(wc -c <"$new/$path" | tr -d ' ')" != "$size" ]; then
			echo "$path"
		fi
	done >"$new.short"
	if [ -s "$new.short" ]; then
		bad=$(tr '\n' ' ' <"$new.short" | sed 's/ $//')
		rm -rf "$new" "$new.short"
		die "$bundle: $bad do not have the size the bundle names: the template's data entry was damaged"
	fi
	rm -f "$new.short"
	rm -rf "$root$src"
	mv "$new" "$root$src"
}

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

# ---- main ----------------------------------------------------------------------------------------
[ -f "$root$bundle" ] || die "$bundle is missing: the template's embedded sources were not written"
restart=0
digest=$(sha256sum <"$root$bundle" | cut -d' ' -f1)
if [ ! -x "$root$bin" ] || [ ! -f "$root$src/build.sh" ] ||
	[ "$(cat "$root$stamp" 2>/dev/null)" != "$digest" ]; then
	mkdir -p "$root${bin%/*}" "$root${stamp%/*}"
	unpack
	build
	echo "$digest" >"$root$stamp"
	say "built $bin ($("$root$bin" --version 2>/dev/null || echo "version unknown"))"
	restart=1
fi
# The lab and the service scripts may call it by either path.
[ -L "$root/usr/bin/vmcost-agent" ] || ln -sf "$bin" "$root/usr/bin/vmcost-agent"

case $(init_system) in
openrc) run_openrc_service "$restart" ;;
systemd) run_systemd_service "$restart" ;;
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
