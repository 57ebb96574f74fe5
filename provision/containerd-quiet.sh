#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost provision, systemd guests with a standalone containerd.service (Debian's and Ubuntu's
# docker.io; run by the template fragment's installer, provision/install-vmcost-agent.sh, at
# every boot): a quieter containerd. Debian's docker.io runs dockerd against a containerd.service of its own
# (dockerd --containerd=/run/containerd/containerd.sock), with the CRI plugin on, and the
# restart monitor lists namespaces and containers every 10 s even with none. dockerd uses
# neither: it starts its own containerd with CRI disabled when it manages one, and restarts its
# containers itself (restart policies are dockerd's, not containerd's labels).
# Alpine's dockerd starts its own containerd, so this has nothing to do there.
#
# Measured on the development host (Debian 12, 2 cores, busy: load 15 to 20), docker.io's
# containerd 1.6.20~ds1-1+deb12u3 importing Debian's /etc/containerd/config.toml, three idle
# instances started side by side, voluntary context switches of all their threads per second:
#   run 1 (148 s, then 128 s): as shipped 18.2 / 18.4, CRI off 2.0 / 1.5, CRI + restart off 5.7 / 5.2
#   run 2 (3 x 100 s after 3 min): as shipped 21.1 / 20.8 / 20.9, CRI off 24.0 / 24.3 / 23.7,
#                                  CRI + restart off 10.0 / 9.8 / 9.7
# Both off: about half of stock or less in both runs. CRI off alone: no consistent effect (run 1
# -90 %, run 2 +15 %), so both go. tests/lab/measure/containerd-quiet repeats it in the lab guest.
#
# The plugin ids and the config version follow the installed containerd's major version
# (containerd --version):
#   1.x: io.containerd.grpc.v1.cri (the CRI plugin, its tickers inside it) and
#        io.containerd.internal.v1.restart; config version 2. Measured above (1.6).
#   2.x: CRI is split into plugins. io.containerd.grpc.v1.cri (the 1 s event backoff ticker, and
#        from 2.3 a 1 s stats collector, even with no container); io.containerd.cri.v1.images,
#        which starts its 10 s snapshots syncer whether or not the CRI service runs;
#        io.containerd.podsandbox.controller.v1.podsandbox, which needs the images plugin and
#        would only fail to load without it. The restart monitor is
#        io.containerd.monitor.container.v1.restart (same 10 s reconcile). Config version 3.
#        Their effect on 2.x was not measured (no 2.x guest here).
# An id that a version does not know would match nothing, so the wrong list would leave the
# plugins on: a version that cannot be told leaves containerd alone.
#
# It leaves alone: a plugin something here uses (CRI with a kubelet, the restart monitor with
# nerdctl, which sets containerd's restart labels), a containerd.service whose ExecStart already
# names a config. Debian's config.toml (a conffile) is not edited: a config of our own imports it
# and adds disabled_plugins (containerd appends lists when it merges an import), and a drop-in
# points containerd.service at it. Idempotent: a second run changes no file and restarts nothing.
# VMCOST_ROOT (tests only) prefixes every path so the script can run on a fake root.
set -eu
root=${VMCOST_ROOT:-}
conf=/etc/containerd/vmcost-quiet.toml
main=/etc/containerd/config.toml
dropin=/etc/systemd/system/containerd.service.d/vmcost-quiet.conf

say() { echo "vmcost containerd-quiet: $*"; }

# Replaces file with the content of new only when it differs; true if it changed.
update_file() { # file, new-content-file
	if [ -f "$1" ] && cmp -s "$1" "$2"; then
		rm -f "$2"
		return 1
	fi
	mkdir -p "${1%/*}"
	cat "$2" >"$1"
	rm -f "$2"
}

has_program() { # name: on PATH, or where Debian's packages put it
	command -v "$1" >/dev/null 2>&1 || [ -x "$root/usr/bin/$1" ] || [ -x "$root/usr/local/bin/$1" ]
}

unit=""
for dir in /etc/systemd/system /lib/systemd/system /usr/lib/systemd/system; do
	if [ -z "$unit" ] && [ -f "$root$dir/containerd.service" ]; then
		unit=$dir/containerd.service
	fi
done
if [ -z "$unit" ]; then
	say "no containerd.service: dockerd runs its own containerd, with CRI off; nothing to do"
	exit 0
fi
exec_start=$(sed -n 's/^ExecStart=\(..*\)$/\1/p' "$root$unit" | tail -n 1)
# The program, without systemd's prefixes ("-/usr/bin/containerd").
binary=$(printf '%s\n' "${exec_start%% *}" | sed 's/^[-@+!:]*//')
case " $exec_start " in
*" --config"* | *" -c "*)
	say "$unit already names a containerd config ($exec_start): left alone"
	exit 0
	;;
"  ")
	say "$unit has no ExecStart: left alone"
	exit 0
	;;
esac

# "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3",
# "containerd containerd.io v2.1.4 75cb2b71...": the major version, or nothing.
major=$("$root$binary" --version 2>/dev/null | awk '{ v = $3; sub(/^v/, "", v); split(v, p, "."); if (p[1] ~ /^[0-9]+$/) print p[1] }') || true
case $major in
1)
	config_version=2
	cri_plugins="\"io.containerd.grpc.v1.cri\""
	restart_plugin="\"io.containerd.internal.v1.restart\""
	;;
2)
	config_version=3
	cri_plugins="\"io.containerd.grpc.v1.cri\", \"io.containerd.cri.v1.images\", \"io.containerd.podsandbox.controller.v1.podsandbox\""
	restart_plugin="\"io.containerd.monitor.container.v1.restart\""
	;;
*)
	say "cannot tell the version of $binary (${major:-no version}): its plugin ids are unknown, left alone"
	exit 0
	;;
esac

plugins=""
if has_program kubelet || [ -d "$root/etc/kubernetes" ]; then
	say "a kubelet is installed: the CRI plugin stays on"
else
	plugins=$cri_plugins
fi
if has_program nerdctl; then
	say "nerdctl is installed (its --restart uses containerd's restart monitor): the monitor stays on"
else
	plugins="${plugins:+$plugins, }$restart_plugin"
fi
if [ -z "$plugins" ]; then
	say "nothing to disable"
	exit 0
fi

new=$(mktemp)
{
	echo "# Written by vmcost (provision/containerd-quiet.sh): plugins Docker does not use, off"
	echo "# (containerd $major.x)."
	echo "version = $config_version"
	echo "disabled_plugins = [$plugins]"
	[ ! -f "$root$main" ] || echo "imports = [\"$main\"]"
} >"$new"
changed=""
update_file "$root$conf" "$new" && changed=1
new=$(mktemp)
{
	echo "# Written by vmcost (provision/containerd-quiet.sh): containerd with $conf."
	echo "[Service]"
	echo "ExecStart="
	echo "ExecStart=$exec_start --config $conf"
} >"$new"
update_file "$root$dropin" "$new" && changed=1
if [ -n "$changed" ]; then
	systemctl daemon-reload
	# dockerd reconnects to a restarted containerd; running containers keep their shims.
	systemctl try-restart containerd.service
	say "disabled $plugins ($conf, $dropin)"
else
	say "already quiet ($plugins disabled)"
fi
