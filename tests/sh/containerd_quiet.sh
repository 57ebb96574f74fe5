#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# provision/containerd-quiet.sh on fake Debian roots (docker.io's containerd.service and
# config.toml, a containerd that prints its version), systemctl stubbed
# (tests/sh/provision-stubs): which plugins it disables, by containerd's major version (1.x and
# 2.x ids, an upgrade between them), and when it leaves containerd alone (a kubelet, nerdctl, a
# unit that names its own config, a version it cannot tell, no containerd.service), and that a
# second run changes nothing and restarts nothing.
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# containerd --version as the package prints it (Debian 12's docker.io by default).
containerd_says() { # root, version line
	printf '#!/bin/sh\necho "%s"\n' "$2" >"$1/usr/bin/containerd"
	chmod +x "$1/usr/bin/containerd"
}

debian_root() { # dir: containerd.service and config.toml as docker.io installs them
	rm -rf "$1"
	mkdir -p "$1/lib/systemd/system" "$1/etc/containerd" "$1/usr/bin"
	printf '[Service]\nExecStartPre=-/sbin/modprobe overlay\nExecStart=/usr/bin/containerd\n' \
		>"$1/lib/systemd/system/containerd.service"
	printf 'version = 2\n[plugins]\n  [plugins."io.containerd.grpc.v1.cri"]\n' \
		>"$1/etc/containerd/config.toml"
	containerd_says "$1" "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3"
}

run() { # root: runs the script there, systemctl calls in $1.log
	: >"$1.log"
	VMCOST_ROOT=$1 STUB_LOG=$1.log PATH="$repo/tests/sh/provision-stubs:/usr/bin:/bin" \
		sh provision/containerd-quiet.sh >"$1.out" 2>&1
}

r=$tmp/debian
debian_root "$r"
check "runs on docker.io's containerd" run "$r"
conf=$r/etc/containerd/vmcost-quiet.toml
check "CRI and the restart monitor are disabled" grep -qx \
	'disabled_plugins = \["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.restart"\]' "$conf"
check "containerd 1.x: a version 2 configuration" grep -qx 'version = 2' "$conf"
check "Debian's config.toml is imported, not edited" grep -qx 'imports = \["/etc/containerd/config.toml"\]' "$conf"
check "config.toml is untouched" grep -qx '  \[plugins."io.containerd.grpc.v1.cri"\]' "$r/etc/containerd/config.toml"
dropin=$r/etc/systemd/system/containerd.service.d/vmcost-quiet.conf
check "the drop-in clears ExecStart" grep -qx 'ExecStart=' "$dropin"
check "the drop-in starts containerd with the config" grep -qx \
	'ExecStart=/usr/bin/containerd --config /etc/containerd/vmcost-quiet.toml' "$dropin"
check "systemd reloaded and containerd restarted if running" sh -c \
	"grep -qx 'systemctl daemon-reload' '$r.log' && grep -qx 'systemctl try-restart containerd.service' '$r.log'"
run "$r"
check "second run: no systemctl call" test ! -s "$r.log"
check "second run says so" grep -q 'already quiet' "$r.out"

debian_root "$r"
printf '#!/bin/sh\n' >"$r/usr/bin/kubelet"
chmod +x "$r/usr/bin/kubelet"
run "$r"
check "with a kubelet: CRI stays on, the monitor goes" grep -qx \
	'disabled_plugins = \["io.containerd.internal.v1.restart"\]' "$conf"

debian_root "$r"
printf '#!/bin/sh\n' >"$r/usr/bin/nerdctl"
chmod +x "$r/usr/bin/nerdctl"
run "$r"
check "with nerdctl: the monitor stays on, CRI goes" grep -qx \
	'disabled_plugins = \["io.containerd.grpc.v1.cri"\]' "$conf"
printf '#!/bin/sh\n' >"$r/usr/bin/kubelet"
chmod +x "$r/usr/bin/kubelet"
rm -f "$conf"
run "$r"
check "with both: nothing written" test ! -e "$conf"

debian_root "$r"
sed -i 's|^ExecStart=.*|ExecStart=/usr/bin/containerd --config /etc/mine.toml|' \
	"$r/lib/systemd/system/containerd.service"
run "$r"
check "a unit with its own config: left alone" sh -c "test ! -e '$conf' && grep -q 'left alone' '$r.out'"

# containerd 2.x (Ubuntu 25.04's, containerd.io's): its own plugin ids and config version.
debian_root "$r"
containerd_says "$r" "containerd containerd.io v2.1.4 75cb2b7193e4e490e9fbdc236c0e811ccaba3376"
run "$r"
check "containerd 2.x: CRI's plugins and the 2.x restart monitor are disabled" grep -qx \
	'disabled_plugins = \["io.containerd.grpc.v1.cri", "io.containerd.cri.v1.images", "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.monitor.container.v1.restart"\]' "$conf"
check "containerd 2.x: a version 3 configuration, still importing Debian's" sh -c \
	"grep -qx 'version = 3' '$conf' && grep -qx 'imports = \[\"/etc/containerd/config.toml\"\]' '$conf'"
check "containerd 2.x: ... and no 1.x id" sh -c "! grep -q 'internal.v1.restart' '$conf'"
run "$r"
check "containerd 2.x: second run: no systemctl call" test ! -s "$r.log"
# Upgraded from 1.x to 2.x: the configuration follows, and containerd restarts with it.
debian_root "$r"
run "$r"
containerd_says "$r" "containerd github.com/containerd/containerd/v2 v2.0.0 207ad711eabd375a01713109a8a197d197ff6542"
run "$r"
check "an upgrade to 2.x rewrites the configuration and restarts containerd" sh -c \
	"grep -qx 'version = 3' '$conf' && grep -qx 'systemctl try-restart containerd.service' '$r.log'"

# A version that cannot be told: its ids are unknown, nothing is written.
debian_root "$r"
containerd_says "$r" "containerd: unknown flag --version"
run "$r"
check "an unknown containerd version: left alone, saying so" sh -c \
	"test ! -e '$conf' && test ! -e '$dropin' && grep -q 'cannot tell the version' '$r.out' && test ! -s '$r.log'"
debian_root "$r"
sed -i 's|^ExecStart=.*|ExecStart=-/usr/bin/containerd|' "$r/lib/systemd/system/containerd.service"
run "$r"
check "an ExecStart with systemd's '-' prefix: the program is still found" grep -qx 'version = 2' "$conf"

rm -rf "$r"
mkdir -p "$r/etc"
VMCOST_ROOT=$r PATH="$repo/tests/sh/provision-stubs:/usr/bin:/bin" sh provision/containerd-quiet.sh >"$r.out" 2>&1
check "no containerd.service: exits 0 and writes nothing" sh -c \
	"grep -q 'nothing to do' '$r.out' && test ! -e '$r/etc/containerd'"
suite_summary
