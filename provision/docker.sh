#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, Lima `mode: system` (every boot): a real Docker Engine under OpenRC on
# /var/run/docker.sock, so testcontainers, docker compose and werf work unchanged.
#   cloud image: Alpine's docker package.
#   alpine-lima ISO: the root is tmpfs rebuilt at every boot and only /etc /home /root /tmp
#   /usr/local /var/lib persist, so the static bundle from download.docker.com goes to
#   /usr/local/bin (version: param dockerVersion) with an OpenRC service in /etc/init.d.
# Idempotent: a second run changes no file. Killed anywhere (a shutdown or crash while it runs),
# the next run ends as a clean one would. VMCOST_ROOT (tests only)
# prefixes every path.
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

# Replaces file with the content of new when it differs; true if it changed. A shutdown can kill
# this script anywhere, so the new content goes to a file beside the old one, with its mode and
# owner, which is then renamed over it: a kill leaves the old file or the new one, never a
# half-written one.
update_file() { # file, new-content-file
    if [ -f "$1" ] && cmp -s "$1" "$2"; then
        rm -f "$2" "$1.vmcost-new"
        return 1
    fi
    [ ! -e "$1" ] || cp -p "$1" "$1.vmcost-new"
    cat "$2" >"$1.vmcost-new"
    mv -f "$1.vmcost-new" "$1"
    rm -f "$2"
}

root_is_tmpfs() {
    [ "$(awk '$2 == "/" { t = $3 } END { print t }' "$root/proc/mounts")" = tmpfs ]
}

# apk's database decides, not a file on disk: a boot killed while apk extracted the packages
# leaves dockerd in place without the service (docker-openrc), and apk records packages only once
# their files are in place. `apk add` of installed packages would be a no-op too, but this way
# later boots need no network and log nothing.
install_from_apk() {
    if apk info -e docker >/dev/null && apk info -e docker-openrc >/dev/null; then
        return 0
    fi
    apk add docker docker-openrc
    say "installed Alpine's docker package"
}

# Alpine's docker service pipes dockerd's output through log_proxy, which rotates it at 100 MiB by
# default (keeping 5); /var/log is a 64 MiB tmpfs on the cloud image (boot-quiet-disk.sh), so
# dockerd's log would fill it before the first rotation and every log write would then fail.
# 8 MiB x (1 + 3 rotated) is at most half of it. A value the user set in /etc/conf.d/docker stays.
write_docker_conf() {
    conf=$root/etc/conf.d/docker
    new=$(mktemp)
    [ ! -f "$conf" ] || cat "$conf" >"$new"
    for kv in LOGPROXY_ROTATION_SIZE=8388608 LOGPROXY_ROTATED_FILES=3; do
        grep -q "^[[:space:]]*${kv%%=*}=" "$new" || {
            echo "# vmcost: dockerd's log in the 64 MiB /var/log tmpfs (provision/docker.sh)"
            echo "$kv"
        } >>"$new"
    done
    if update_file "$conf" "$new"; then
        say "dockerd's log rotates at 8 MiB, 3 kept (/etc/conf.d/docker; from dockerd's next start)"
    fi
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
# As Alpine's docker package: containers inherit these limits (1024 open files would break
# databases and search engines), and a stop gives dockerd 60 s to stop its containers.
rc_ulimit="${DOCKER_ULIMIT:--c unlimited -n 1048576 -u unlimited}"
retry="${DOCKER_RETRY:-TERM/60/KILL/10}"
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

install_binary() { # file: into /usr/local/bin, replacing the old one whole
    install -m 0755 "$1" "$root/usr/local/bin/${1##*/}.new"
    mv -f "$root/usr/local/bin/${1##*/}.new" "$root/usr/local/bin/${1##*/}"
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
        # dockerd last: its version is what the next boot checks, so a boot killed halfway
        # through the bundle installs all of it again.
        for f in "$tmp"/docker/*; do
            [ "${f##*/}" = dockerd ] || install_binary "$f"
        done
        install_binary "$tmp/docker/dockerd"
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
    # Written beside and renamed: a half-written file would be kept as the user's own.
    cat >"$f.vmcost-new" <<'EOF'
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
    mv -f "$f.vmcost-new" "$f"
    say "wrote /etc/docker/daemon.json (log rotation 3 x 10 MB, build cache GC at 10 GB)"
}

# A frozen dockerd ignores SIGTERM: `rc-service docker stop` while vmcost-agent has the engine
# frozen would wait out the 60 s retry and end in SIGKILL. openrc-run reads /etc/conf.d/docker
# before it runs the stop, so the thaw is a top-level line there, not a stop_pre(): OpenRC 0.63
# moves the stopping shell into /sys/fs/cgroup/openrc.docker, frozen with the engine, before it
# calls stop_pre(). The same lines as the template fragment's installer writes (whichever comes
# first), so that the boot that installs docker has them too.
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

in_group() { # group, user
    awk -F: -v g="$1" -v u="$2" '
        $1 == g { n = split($4, m, ","); for (i = 1; i <= n; i++) if (m[i] == u) found = 1 }
        END { exit !found }' "$root/etc/group"
}

if root_is_tmpfs; then
    install_static
else
    install_from_apk
    write_docker_conf
fi
write_daemon_json

# The user runs docker without sudo (and so does the host, through Lima's socket forward). On the
# cloud image a boot script (provision/boot-docker-group.sh) has done this before the user's
# first login; the ISO has no boot scripts, so it happens here.
if ! in_group docker "$user"; then
    addgroup "$user" docker
    say "added $user to the docker group"
fi

if add_thaw_hook "$root/etc/conf.d/docker"; then
    say "/etc/conf.d/docker thaws the engine before docker stops"
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
