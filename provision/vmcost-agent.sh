#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot): build vmcost-agent from the sources this
# template embeds (`mode: data` entries under /usr/local/src/vmcost, written by Lima before any
# system script runs), install it, and run it as the `cache-trim` OpenRC service.
# The build runs only when the embedded sources change (first boot); build dependencies are an apk
# virtual package removed right after, so they cost nothing later. The binary lives in
# /usr/local/bin, which persists on the alpine-lima ISO too.
# Idempotent: a second run changes no file. VMCOST_ROOT (tests only) prefixes every path.
set -eu
root=${VMCOST_ROOT:-}
# Lima renders this template field with the instance's user name.
user="{{.User}}"
src=/usr/local/src/vmcost
bin=/usr/local/bin/vmcost-agent
stamp=/usr/local/lib/vmcost/agent-sources.sha256
socket=/run/vmcost-agent.sock
runtime_deps="yaml jansson libmicrohttpd"
build_deps="build-base pkgconf linux-headers yaml-dev jansson-dev libmicrohttpd-dev"

say() { echo "vmcost agent: $*"; }
die() {
	echo "vmcost agent: $*" >&2
	exit 1
}

sources_digest() {
	(cd "$root$src" && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2 | sha256sum) |
		cut -d' ' -f1
}

build() {
	# shellcheck disable=SC2086 # lists of package names
	apk add $runtime_deps
	# shellcheck disable=SC2086
	apk add --virtual .vmcost-agent-build $build_deps
	rc=0
	sh "$root$src/build.sh" "$root$src" "$root$bin.new" || rc=$?
	apk del .vmcost-agent-build
	if [ "$rc" -ne 0 ]; then
		rm -f "$root$bin.new"
		die "building vmcost-agent failed (exit $rc); the log above has the compiler's message"
	fi
	mv -f "$root$bin.new" "$root$bin"
}

[ -f "$root$src/build.sh" ] || die "$src/build.sh is missing: the template's embedded sources were not written"
digest=$(sources_digest)
if [ ! -x "$root$bin" ] || [ "$(cat "$root$stamp" 2>/dev/null)" != "$digest" ]; then
	mkdir -p "$root${bin%/*}" "$root${stamp%/*}"
	build
	echo "$digest" >"$root$stamp"
	say "built $bin ($("$root$bin" --version 2>/dev/null || echo "version unknown"))"
	rc-service --ifstarted cache-trim restart
fi
# The lab and the service scripts may call it by either path.
[ -L "$root/usr/bin/vmcost-agent" ] || ln -sf "$bin" "$root/usr/bin/vmcost-agent"

[ -e "$root/etc/init.d/cache-trim" ] || die "/etc/init.d/cache-trim is missing: the template's data entry was not written"
[ -e "$root/etc/runlevels/default/cache-trim" ] || rc-update add cache-trim default
rc-service --ifstopped cache-trim start

# As for docker.sock: Lima's SSH login predates this boot's group changes, so the forwarded API
# socket is handed to the user until the agent recreates it (root:docker 0660) at its next start.
i=0
while [ ! -e "$root$socket" ] && [ "$i" -lt 30 ]; do
	sleep 1
	i=$((i + 1))
done
[ -e "$root$socket" ] || die "vmcost-agent did not create $socket within 30 s: see logread"
chown "$user" "$root$socket"
