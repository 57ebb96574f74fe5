#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot): a real Docker Engine under OpenRC on
# /var/run/docker.sock, so testcontainers, docker compose and werf work unchanged.
#   cloud image: Alpine's docker package.
#   alpine-lima ISO: the root is tmpfs rebuilt at every boot and only /etc /home /root /tmp
#   /usr/local /var/lib persist, so the static bundle from download.docker.com goes to
#   /usr/local/bin (version: param dockerVersion) with an OpenRC service in /etc/init.d.
# Idempotent: a second run changes no file. VMCOST_ROOT (tests only) prefixes every path.
set -eu
root=${VMCOST_ROOT:-}
# Lima renders this template field with the instance's user name.
user="{{.User}}"
static_version=${PARAM_dockerVersion:-}

say() { echo "vmcost docker: $*"; }
die() {
	echo "vmcost docker: $*" >&2
	exit 1
}

update_file() { # file, new-content-file; true if it changed
	if [ -f "$1" ] && cmp -s "$1" "$2"; then
		rm -f "$2"
		return 1
	fi
	cat "$2" >"$1"
	rm -f "$2"
}

root_is_tmpfs() {
	[ "$(awk '$2 == "/" { t = $3 } END { print t }' "$root/proc/mounts")" = tmpfs ]
}

install_from_apk() {
	[ -x "$root/usr/bin/dockerd" ] && return 0
	apk add docker docker-openrc
	say "installed Alpine's docker package"
}

write_static_service() {
	new=$(mktemp)
	cat >"$new" <<'EOF'
#!/sbin/openrc-run
# Written by vmcost's docker provisioning: dockerd from the static bundle in /usr/local/bin.
supervisor=supervise-daemon
name="Docker Engine"
command=/usr/local/bin/dockerd
command_args="${DOCKER_OPTS:-}"
supervise_daemon_args="--stdout /var/log/docker.log --stderr /var/log/docker.log"
# dockerd starts its containerd, runc and docker-init from the same bundle.
export PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

depend() {
	need localmount net
	after cgroups firewall
}
EOF
	if update_file "$root/etc/init.d/docker" "$new"; then
		chmod 0755 "$root/etc/init.d/docker"
		say "wrote /etc/init.d/docker for the static dockerd"
	fi
}

install_static() {
	[ -n "$static_version" ] || die "param dockerVersion is empty: the ISO needs the static Docker bundle's version"
	have=$("$root/usr/local/bin/dockerd" --version 2>/dev/null |
		sed -n 's/^Docker version \([^,]*\),.*/\1/p') || true
	if [ "$have" != "$static_version" ]; then
		arch=$(uname -m)
		url=https://download.docker.com/linux/static/stable/$arch/docker-$static_version.tgz
		tmp=$(mktemp -d)
		if ! wget -q -O "$tmp/docker.tgz" "$url"; then
			rm -rf "$tmp"
			die "cannot download $url: check the network and the version (limactl edit --set '.param.dockerVersion=\"...\"')"
		fi
		tar -xzf "$tmp/docker.tgz" -C "$tmp"
		mkdir -p "$root/usr/local/bin"
		for f in "$tmp"/docker/*; do
			install -m 0755 "$f" "$root/usr/local/bin/${f##*/}.new"
			mv -f "$root/usr/local/bin/${f##*/}.new" "$root/usr/local/bin/${f##*/}"
		done
		rm -rf "$tmp"
		say "installed the static Docker $static_version bundle in /usr/local/bin"
	fi
	grep -q '^docker:' "$root/etc/group" || addgroup -S docker
	write_static_service
}

# Log rotation and build-cache GC: the write-up saw /var/lib/docker at 11.2 of 11.8 GB; these
# limits matter more than any OS trimming. The user's own daemon.json wins: it is written only
# when absent (delete it to get these defaults back).
write_daemon_json() {
	f=$root/etc/docker/daemon.json
	[ -e "$f" ] && return 0
	mkdir -p "$root/etc/docker"
	cat >"$f" <<'EOF'
{
  "log-driver": "json-file",
  "log-opts": {
    "max-size": "10m",
    "max-file": "3"
  },
  "builder": {
    "gc": {
      "enabled": true,
      "defaultKeepStorage": "10GB"
    }
  }
}
EOF
	say "wrote /etc/docker/daemon.json (log rotation 3 x 10 MB, build cache GC at 10 GB)"
}

in_group() { # group, user
	awk -F: -v g="$1" -v u="$2" '
		$1 == g { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) found = 1 }
		END { exit !found }' "$root/etc/group"
}

if root_is_tmpfs; then
	install_static
else
	install_from_apk
fi
write_daemon_json

# The user runs docker without sudo (and so does the host, through Lima's socket forward). On the
# cloud image a boot script (provision/boot-docker-group.sh) has done this before the user's
# first login; the ISO has no boot scripts, so it happens here.
if ! in_group docker "$user"; then
	addgroup "$user" docker
	say "added $user to the docker group"
fi

[ -e "$root/etc/runlevels/default/docker" ] || rc-update add docker default
rc-service --ifstopped docker start

sock=$root/var/run/docker.sock
i=0
while [ ! -e "$sock" ] && [ "$i" -lt 60 ]; do
	sleep 1
	i=$((i + 1))
done
[ -e "$sock" ] || die "dockerd did not create /var/run/docker.sock within 60 s: see /var/log/docker.log"

# Lima's SSH master connection, which carries the socket forward, logged in before the boot's
# `system` scripts. On the ISO's first boot the group change above came after that login, so the
# socket is handed to the user for this boot, as Lima's docker-rootful template does with
# SocketUser; from the next boot on every login has the group (the template's message asks for
# one restart). On the cloud image the login has the group already: nothing to hand over.
if root_is_tmpfs; then
	chown "$user" "$sock"
fi
