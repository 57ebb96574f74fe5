#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The agent as templates/vmcost-agent.yaml delivers it, on fake guest roots (Alpine: apk, OpenRC;
# Debian: apt, systemd; Fedora: dnf) with the package managers, the init systems, the download
# and the compiler stubbed (tests/sh/provision-stubs, tests/sh/agent-stubs): the inlined installer
# (provision/vmcost-agent.sh) fetches the tarball the fragment pins, checks its sha256, or copies a
# checkout's sources (param vmcostAgentSrc), and the tarball's install.sh builds and runs the
# agent. A second run changes nothing; a run killed at any point (the first boot's provisioning
# runs while the VM goes down) and run again ends as a clean run does, the build tools gone
# (issue 19 item 4). On every guest the installer applies the idle sysctls, and for the engine
# the agent freezes (issue 21): a thaw before a stop of docker or containerd (the systemd unit,
# the OpenRC conf.d lines) and, for Debian's standalone containerd, the quieter configuration.
# tests/unit/lib_templates builds the agent from the same script with the real compiler.
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$(pwd)
stubs=$repo/tests/sh/agent-stubs:$repo/tests/sh/provision-stubs
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# util-linux's setsid (busybox's has no -w): each run in a process group of its own.
setsid=$(command -v setsid) || {
	echo "FAIL setsid (util-linux) is missing"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

# Alpine runs the scripts with busybox's applets: put them on PATH when busybox is here (the lab's
# static busybox serves when the host has none). The shell stays /bin/sh.
path=$stubs:$PATH
busybox=$(command -v busybox || true)
lab_busybox=${VMCOST_LAB_CACHE:-$HOME/.cache/vmcost-lab}/busybox
[ -n "$busybox" ] || [ ! -x "$lab_busybox" ] || busybox=$lab_busybox
if [ -n "$busybox" ]; then
	mkdir "$tmp/busybox"
	for applet in $("$busybox" --list); do
		case $applet in sh | ash | hush) continue ;; esac
		[ -e "$repo/tests/sh/provision-stubs/$applet" ] || [ -e "$repo/tests/sh/agent-stubs/$applet" ] ||
			ln -s "$busybox" "$tmp/busybox/$applet"
	done
	path=$stubs:$tmp/busybox:$PATH
	echo "note: the scripts run with busybox's applets ($busybox)"
else
	skip "the scripts with busybox's applets (as on Alpine): busybox is missing (make deps); they run with the host's tools"
fi
for cmd in apk curl wget rc-update rc-service apt-get apt-mark dpkg dpkg-query rpm dnf systemctl; do
	case $(PATH=$path /bin/sh -c "command -v $cmd") in
	"$repo"/tests/sh/agent-stubs/"$cmd" | "$repo"/tests/sh/provision-stubs/"$cmd") ;;
	*)
		echo "FAIL refusing to run: $cmd would not be the stub"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
		;;
	esac
done

# The tarball and its pin, as the fragment names them (--check fails when the pin is stale).
if ! templates/update-embedded --check --out "$tmp/dist" >"$tmp/dist.out" 2>&1; then
	fail "templates/update-embedded --check: the fragment pins this tree's tarball"
	sed 's/^/    /' "$tmp/dist.out"
	suite_summary
	exit $?
fi
ok "templates/update-embedded --check: the fragment pins this tree's tarball"
param() { sed -n "s/^  $1: \"\\(.*\\)\"\$/\\1/p" templates/vmcost-agent.yaml; }
sha=$(param vmcostAgentSha256)
url=$(param vmcostAgentURL)
tarball=$tmp/dist/vmcost-agent-src-$sha.tar.gz
check "the pinned sha256 is the tarball's" test "$(sha256sum <"$tarball" | cut -d' ' -f1)" = "$sha"
check "the URL names the tarball by its sha256" sh -c "case '$url' in https://*/vmcost-agent-src-$sha.tar.gz) exit 0 ;; esac; exit 1"
served=file://$tarball

# Lima renders {{.User}} (and the other guest fields) in a provision script before running it.
render() { # script -> path of the rendered copy
	out=$tmp/rendered-$(basename "$1")
	sed -e 's/{{\.User}}/tester/g' "$1" >"$out"
	echo "$out"
}

# The compiler stand-in writes a program that prints the version it was given;
# STUB_KILL_AT=cc kills the run once the first object is written.
cat >"$tmp/cc" <<'EOF'
#!/bin/sh
[ -n "${CC_FAIL:-}" ] && { echo "cc: error: stub failure" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift ;;
	-DVMCOST_VERSION=*) version=${1#-DVMCOST_VERSION=} ;;
	esac
	shift
done
printf '#!/bin/sh\necho vmcost-agent %s\n' "$version" >"$out"
chmod 755 "$out"
if [ "${STUB_KILL_AT:-}" = cc ]; then echo "killed at cc" >>"$STUB_LOG"; kill -KILL 0; fi
exit 0
EOF
chmod 755 "$tmp/cc"

# run NAME ROOT [VAR=VALUE...]: the rendered installer as Lima runs it (the template's params
# as PARAM_* variables: the pinned download unless overridden), in a process group of its own
# (a kill stub ends the whole run); output in $tmp/NAME.out, stub calls in $tmp/NAME.log.
run() {
	run_name=$1 run_root=$2
	shift 2
	: >"$tmp/$run_name.log"
	[ -z "${VMCOST_TEST_TIMES:-}" ] || date "+%T $run_name" >&2
	env PATH="$path" VMCOST_ROOT="$run_root" STUB_LOG="$tmp/$run_name.log" CC="$tmp/cc" \
		PARAM_vmcostAgentURL="$served" PARAM_vmcostAgentSha256="$sha" PARAM_vmcostAgentSrc= VMCOST_SRC_WAIT=2 "$@" \
		"$setsid" -w /bin/sh "$(render provision/vmcost-agent.sh)" >"$tmp/$run_name.out" 2>&1
}

# Everything a run leaves: type, mode, size, content, link targets (no times: a clean run and a
# killed-then-repeated one happen at different times).
state() { # root
	(
		cd "$1" || exit 1
		find . -exec stat -c '%n %F %a %s' {} + | LC_ALL=C sort
		find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2
		find . -type l -exec sh -c 'for l; do echo "$l -> $(readlink "$l")"; done' sh {} +
	)
}
# With mtimes: a second run must not even rewrite a file.
snapshot() { # root
	state "$1"
	(cd "$1" && find . -exec stat -c '%n %y' {} + | LC_ALL=C sort)
}

check_idempotent() { # name root [VAR=VALUE...]
	idem_name=$1 idem_root=$2
	shift 2
	snapshot "$idem_root" >"$tmp/$idem_name.before"
	if ! run "$idem_name-again" "$idem_root" "$@"; then
		fail "$idem_name: the second run failed"
		sed 's/^/    /' "$tmp/$idem_name-again.out"
		return
	fi
	snapshot "$idem_root" >"$tmp/$idem_name.after"
	if cmp -s "$tmp/$idem_name.before" "$tmp/$idem_name.after"; then
		ok "$idem_name: a second run changes no file"
	else
		fail "$idem_name: a second run changed files:"
		diff "$tmp/$idem_name.before" "$tmp/$idem_name.after" | sed 's/^/    /' | head -20
	fi
}

# A fake root shaped like Lima's Alpine cloud image (what the agent's scripts look at), with the
# fragment's configuration as Lima writes it.
make_alpine_root() { # dir
	mkdir -p "$1/etc/runlevels/default" "$1/etc/apk" "$1/etc/init.d" "$1/run/openrc/started" \
		"$1/usr/bin" "$1/usr/local/bin" "$1/sbin" "$1/etc/vmcost" "$1/etc/conf.d" \
		"$1/proc/sys/kernel" "$1/proc/sys/vm"
	printf 'alpine-base\nopenrc\n' >"$1/etc/apk/world"
	echo 3.23.4 >"$1/etc/alpine-release"
	printf '#!/bin/sh\n' >"$1/sbin/openrc-run"
	printf 'socket-owner: "tester"\n' >"$1/etc/vmcost/agent.yaml"
	# Docker from Alpine's packages, as the templates install it.
	printf '#!/sbin/openrc-run\n' >"$1/etc/init.d/docker"
	printf '# /etc/conf.d/docker: config file for /etc/init.d/docker\nDOCKER_OPTS=""\n' >"$1/etc/conf.d/docker"
	echo 1 >"$1/proc/sys/kernel/watchdog"
	echo 20 >"$1/proc/sys/vm/compaction_proactiveness"
}

# Lima's Debian 12 / Ubuntu images: apt, systemd.
make_debian_root() { # dir [installed package...]
	r=$1
	shift
	mkdir -p "$r/etc/systemd/system" "$r/run/systemd/system" "$r/var/lib/dpkg" "$r/usr/bin" \
		"$r/usr/local/bin" "$r/etc/vmcost" "$r/proc/sys/kernel" "$r/proc/sys/vm"
	echo 12.8 >"$r/etc/debian_version"
	printf '%s\n' base-files systemd "$@" >"$r/var/lib/dpkg/installed"
	printf 'socket-owner: "tester"\n' >"$r/etc/vmcost/agent.yaml"
	echo 1 >"$r/proc/sys/kernel/watchdog"
	echo 20 >"$r/proc/sys/vm/compaction_proactiveness"
}

# Debian's docker.io: dockerd on a standalone containerd.service.
add_docker_io() { # dir
	mkdir -p "$1/lib/systemd/system" "$1/etc/containerd"
	printf '[Service]\nExecStart=/usr/bin/containerd\n' >"$1/lib/systemd/system/containerd.service"
	printf '[Service]\nExecStart=/usr/sbin/dockerd -H fd://\n' >"$1/lib/systemd/system/docker.service"
	printf 'version = 2\n' >"$1/etc/containerd/config.toml"
	printf '#!/bin/sh\necho "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u3"\n' \
		>"$1/usr/bin/containerd"
	chmod 755 "$1/usr/bin/containerd"
}

# The tarball's layout, from the repository (templates/update-embedded's list: the agent's
# sources as provision/vmcost-agent-sources.sh lists them).
expected_tree() { # dir
	mkdir -p "$1/init.d" "$1/systemd"
	sh provision/vmcost-agent-sources.sh . | while read -r f; do
		mkdir -p "$1/${f%/*}"
		cp "$f" "$1/$f"
	done
	cp provision/build-vmcost-agent.sh "$1/build.sh"
	cp provision/install-vmcost-agent.sh "$1/install.sh"
	cp provision/init.d/cache-trim "$1/init.d/cache-trim"
	cp provision/systemd/cache-trim.service "$1/systemd/cache-trim.service"
	cp provision/systemd/vmcost-engine-thaw.service "$1/systemd/vmcost-engine-thaw.service"
	cp provision/idle-sysctls.sh "$1/idle-sysctls.sh"
	cp provision/containerd-quiet.sh "$1/containerd-quiet.sh"
	cp provision/vmcost-agent.yaml "$1/agent.yaml"
}
expected_tree "$tmp/expected"

# ---- the pinned download on Alpine -------------------------------------------------------------
alpine_tests() {
	r=$tmp/alpine
	make_alpine_root "$r"
	src=$r/usr/local/src/vmcost
	if run alpine "$r"; then ok "alpine: runs"; else
		fail "alpine: runs"
		sed 's/^/    /' "$tmp/alpine.out"
	fi
	check "alpine: downloads the pinned tarball" grep -qx "curl -fsSL --retry 5 --retry-delay 2 -o $src.new/.download.tar.gz $served" "$tmp/alpine.log"
	check "alpine: built into /usr/local/bin" sh -c "'$r/usr/local/bin/vmcost-agent' | grep -qx 'vmcost-agent src-[0-9a-f]*'"
	check "alpine: the tarball unpacks to exactly the repository's sources, build script, installer, service files and documented configuration" \
		diff -r "$tmp/expected" "$src"
	for f in lib/settle.c lib/stats.c; do
		check "alpine: ... without $f, which only vmcost uses on the host" \
			sh -c "test -f '$f' && test -f '$src/lib/log.c' && test ! -e '$src/$f'"
	done
	check "alpine: ... and no download or half-made directory is left" sh -c "test ! -e '$src.new' && test ! -e '$src/.download.tar.gz'"
	check "alpine: missing build dependencies come as an apk virtual package" \
		grep -qx 'apk add --virtual .vmcost-agent-build build-base pkgconf linux-headers yaml-dev jansson-dev libmicrohttpd-dev' "$tmp/alpine.log"
	check "alpine: ... removed after the build" sh -c "grep -qx 'apk del .vmcost-agent-build' '$tmp/alpine.log' && ! grep -q vmcost-agent-build '$r/etc/apk/world'"
	check "alpine: its runtime libraries stay installed" \
		sh -c "grep -qx yaml '$r/etc/apk/world' && grep -qx jansson '$r/etc/apk/world' && grep -qx libmicrohttpd '$r/etc/apk/world'"
	check "alpine: /usr/bin/vmcost-agent points to it" test "$(readlink "$r/usr/bin/vmcost-agent")" = /usr/local/bin/vmcost-agent
	check "alpine: the OpenRC service is installed from the tarball's copy" \
		sh -c "cmp -s provision/init.d/cache-trim '$r/etc/init.d/cache-trim' && test -x '$r/etc/init.d/cache-trim'"
	check "alpine: no systemd unit on an OpenRC guest" test ! -e "$r/etc/systemd/system/cache-trim.service"
	check "alpine: cache-trim is in the default runlevel and started" \
		sh -c "test -L '$r/etc/runlevels/default/cache-trim' && test -e '$r/run/openrc/started/cache-trim'"
	check "alpine: no warning about the configuration" sh -c "! grep -q 'socket-owner' '$tmp/alpine.out'"
	check "alpine: the idle sysctls are written and applied" sh -c \
		"grep -qx 'kernel.watchdog = 0' '$r/etc/sysctl.d/60-vmcost-idle.conf' && grep -qx 'vm.compaction_proactiveness = 0' '$r/etc/sysctl.d/60-vmcost-idle.conf' && test \"\$(cat '$r/proc/sys/kernel/watchdog') \$(cat '$r/proc/sys/vm/compaction_proactiveness')\" = '0 0'"
	check "alpine: docker's conf.d thaws the engine before a stop" \
		grep -qx '# vmcost: thaw the engine before this service stops' "$r/etc/conf.d/docker"
	check "alpine: ... and keeps what was there" grep -qx 'DOCKER_OPTS=""' "$r/etc/conf.d/docker"
	check "alpine: ... the same lines as the templates' docker.sh writes" sh -c \
		"sed -n '/^# vmcost: thaw the engine/,/^case /p' '$r/etc/conf.d/docker' >'$tmp/hook.agent' && \
		 sed -n '/^thaw_marker=/,/^}/p' provision/docker.sh | expand -i -t 4 >'$tmp/hook.docker' && \
		 sed -n '/^thaw_marker=/,/^}/p' provision/install-vmcost-agent.sh | expand -i -t 4 >'$tmp/hook.install' && \
		 test -s '$tmp/hook.agent' && cmp -s '$tmp/hook.docker' '$tmp/hook.install'"
	check "alpine: no containerd service, no conf.d for it" test ! -e "$r/etc/conf.d/containerd"
	check "alpine: no systemd unit for the thaw on OpenRC" test ! -e "$r/etc/systemd/system/vmcost-engine-thaw.service"
	check_idempotent alpine "$r"
	check "alpine: the second run downloads, installs and builds nothing" \
		sh -c "! grep -Eq '^(curl|wget|apk add|apk del)' '$tmp/alpine-again.log'"
	cp -R "$r" "$tmp/alpine-clean"

	# A configuration from before the fragment set socket-owner is kept, with a warning.
	printf 'interval: 5m\n' >"$r/etc/vmcost/agent.yaml"
	run alpine-oldconf "$r"
	check "alpine: a configuration without socket-owner is kept" grep -qx 'interval: 5m' "$r/etc/vmcost/agent.yaml"
	check "alpine: ... and the warning names the line to add, with the Lima user" grep -q "add the line 'socket-owner: tester'" "$tmp/alpine-oldconf.out"
	printf 'socket-owner: "tester"\n' >"$r/etc/vmcost/agent.yaml"

	# A tarball that is not the pinned one (another URL, a damaged download): refused, the sources
	# and binary of the previous boot kept.
	before=$(cat "$r/usr/local/bin/vmcost-agent")
	printf 'not the tarball\n' >"$tmp/other.tar.gz"
	if run alpine-badsum "$r" PARAM_vmcostAgentURL="file://$tmp/other.tar.gz" PARAM_vmcostAgentSha256=0000000000000000000000000000000000000000000000000000000000000000; then
		fail "alpine: a tarball with another sha256 fails the script"
	else
		ok "alpine: a tarball with another sha256 fails the script"
	fi
	check "alpine: ... saying so, with both sums" sh -c "grep -q 'has sha256 $(sha256sum <"$tmp/other.tar.gz" | cut -d' ' -f1), not the pinned 0000' '$tmp/alpine-badsum.out'"
	check "alpine: ... keeping the previous sources and binary" sh -c \
		"diff -r '$tmp/expected' '$src' && test \"\$(cat '$r/usr/local/bin/vmcost-agent')\" = '$before'"
	# No network: the message says how to build without it.
	if run alpine-offline "$r" PARAM_vmcostAgentURL=https://example.invalid/x.tar.gz PARAM_vmcostAgentSha256=1111111111111111111111111111111111111111111111111111111111111111; then
		fail "alpine: an unreachable URL fails the script"
	else
		ok "alpine: an unreachable URL fails the script"
	fi
	check "alpine: ... naming the URL and the offline way (param vmcostAgentSrc)" \
		sh -c "grep -q 'cannot download https://example.invalid/x.tar.gz' '$tmp/alpine-offline.out' && grep -q 'vmcostAgentSrc=' '$tmp/alpine-offline.out'"
	if run alpine-noparam "$r" PARAM_vmcostAgentURL= PARAM_vmcostAgentSha256=; then
		fail "alpine: no URL and no checkout fails the script"
	else
		ok "alpine: no URL and no checkout fails the script"
	fi
	check "alpine: ... naming the params" grep -q 'params vmcostAgentURL and vmcostAgentSha256 are empty' "$tmp/alpine-noparam.out"

	# A checkout with local changes (param vmcostAgentSrc): its sources, rebuilt, the service
	# restarted; then back to the pinned download.
	mkdir -p "$tmp/checkout"
	cp -R guest-agent lib provision "$tmp/checkout/"
	echo "/* changed */" >>"$tmp/checkout/lib/log.h"
	run alpine-checkout "$r" PARAM_vmcostAgentSrc="$tmp/checkout"
	check "alpine: a checkout's sources are copied, not downloaded" \
		sh -c "grep -qx '/\\* changed \\*/' '$src/lib/log.h' && ! grep -Eq '^(curl|wget)' '$tmp/alpine-checkout.log'"
	check "alpine: ... in the tarball's layout" diff -r -x log.h "$tmp/expected" "$src"
	check "alpine: ... rebuilt" grep -q '^apk add --virtual' "$tmp/alpine-checkout.log"
	check "alpine: ... and the running service restarted" grep -qx 'rc-service --ifstarted cache-trim restart' "$tmp/alpine-checkout.log"
	check_idempotent alpine-checkout "$r" PARAM_vmcostAgentSrc="$tmp/checkout"
	# A checkout from before provision/vmcost-agent-sources.sh: all of guest-agent/ and lib/.
	cp -R "$tmp/checkout" "$tmp/oldcheckout"
	rm "$tmp/oldcheckout/provision/vmcost-agent-sources.sh"
	run alpine-oldcheckout "$r" PARAM_vmcostAgentSrc="$tmp/oldcheckout"
	check "alpine: a checkout without vmcost-agent-sources.sh gives all of guest-agent/ and lib/" \
		sh -c "test -x '$r/usr/local/bin/vmcost-agent' && cmp -s lib/stats.c '$src/lib/stats.c' && test \"\$(ls '$src/lib' | wc -l)\" -eq \"\$(ls lib/*.[ch] | wc -l)\""
	run alpine-back "$r"
	check "alpine: without the param, the pinned tarball again" sh -c "grep -q '^curl ' '$tmp/alpine-back.log' && diff -r '$tmp/expected' '$src'"
	check "alpine: ... rebuilt" grep -q '^apk add --virtual' "$tmp/alpine-back.log"
	if run alpine-nocheckout "$r" PARAM_vmcostAgentSrc="$tmp/nowhere"; then
		fail "alpine: a vmcostAgentSrc that is no checkout fails the script"
	else
		ok "alpine: a vmcostAgentSrc that is no checkout fails the script"
	fi
	check "alpine: ... saying how to give one" grep -q "vmcostAgentSrc=$tmp/nowhere: no vmcost checkout there" "$tmp/alpine-nocheckout.out"

	# A failing build: a clear error, build dependencies removed, the old binary kept.
	echo "/* changed again */" >>"$tmp/checkout/lib/log.h"
	before=$(cat "$r/usr/local/bin/vmcost-agent")
	if run alpine-fail "$r" PARAM_vmcostAgentSrc="$tmp/checkout" CC_FAIL=1; then
		fail "alpine: a failing build fails the script"
	else
		ok "alpine: a failing build fails the script"
	fi
	check "alpine: ... with a message saying so" grep -q 'building vmcost-agent failed' "$tmp/alpine-fail.out"
	check "alpine: ... still removing the build dependencies" grep -qx 'apk del .vmcost-agent-build' "$tmp/alpine-fail.log"
	check "alpine: ... keeping the working binary, no half-written one" \
		sh -c "test \"\$(cat '$r/usr/local/bin/vmcost-agent')\" = '$before' && test ! -e '$r/usr/local/bin/vmcost-agent.new'"

	# busybox wget where there is no curl (Alpine's cloud image).
	if [ -n "$busybox" ]; then
		r=$tmp/alpine-wget
		make_alpine_root "$r"
		mkdir "$tmp/nocurl"
		for s in "$repo"/tests/sh/agent-stubs/* "$repo"/tests/sh/provision-stubs/*; do
			[ "${s##*/}" = curl ] || [ -e "$tmp/nocurl/${s##*/}" ] || ln -s "$s" "$tmp/nocurl/${s##*/}"
		done
		ln -s /bin/sh "$tmp/nocurl/sh"
		ln -s "$(command -v pkg-config)" "$tmp/nocurl/pkg-config"
		saved=$path
		path=$tmp/nocurl:$tmp/busybox
		run alpine-wget "$r"
		path=$saved
		check "alpine: without curl, wget downloads the tarball" \
			sh -c "test -x '$r/usr/local/bin/vmcost-agent' && grep -q '^wget -q -O .* $served\$' '$tmp/alpine-wget.log' && diff -r '$tmp/expected' '$r/usr/local/src/vmcost'"
	fi

	# An image that has the build tools already (e.g. one made for offline use): no apk at all.
	r=$tmp/alpine-full
	make_alpine_root "$r"
	printf '%s\n' yaml jansson libmicrohttpd build-base pkgconf linux-headers yaml-dev jansson-dev \
		libmicrohttpd-dev >>"$r/etc/apk/world"
	run alpine-full "$r"
	check "alpine: packages already installed are not installed again" \
		sh -c "test -x '$r/usr/local/bin/vmcost-agent' && ! grep -Eq '^apk (add|del)' '$tmp/alpine-full.log'"
}

# ---- killed at any point, then run again (issue 19 item 4) --------------------------------------
# The first boot's system scripts run while the VM goes down (its own reboot): any point can be
# the last. The next boot runs the script again, which must end where a clean run ends: the same
# files, the agent built and running, the build tools' virtual package gone.
killed_tests() {
	for point in curl apk-add apk-add-virtual cc apk-del; do
		r=$tmp/killed-$point
		make_alpine_root "$r"
		run "killed-$point" "$r" STUB_KILL_AT="$point"
		rc=$?
		check "killed at $point: the run was killed there (exit $rc)" \
			sh -c "[ $rc -ne 0 ] && grep -qx 'killed at $point' '$tmp/killed-$point.log'"
		run "killed-$point-again" "$r"
		check "killed at $point: the next run passes" test $? = 0
		check "killed at $point: ... with the build tools' virtual package gone" \
			sh -c "! grep -q vmcost-agent-build '$r/etc/apk/world' && test ! -e '$r/etc/apk/virtual/.vmcost-agent-build'"
		state "$tmp/alpine-clean" >"$tmp/killed-$point.clean"
		state "$r" >"$tmp/killed-$point.state"
		if cmp -s "$tmp/killed-$point.clean" "$tmp/killed-$point.state"; then
			ok "killed at $point: ... ending as a clean run does"
		else
			fail "killed at $point: ... ending as a clean run does:"
			diff "$tmp/killed-$point.clean" "$tmp/killed-$point.state" | sed 's/^/    /' | head -20
		fi
	done
	# Killed after the build tools came in, on a later boot with the agent already built and its
	# sources unchanged: the virtual package still goes.
	r=$tmp/killed-late
	cp -R "$tmp/alpine-clean" "$r"
	printf '.vmcost-agent-build\n' >>"$r/etc/apk/world"
	printf '%s\n' build-base pkgconf linux-headers yaml-dev jansson-dev libmicrohttpd-dev >"$r/etc/apk/virtual/.vmcost-agent-build"
	run killed-late "$r"
	check "a virtual package left behind with the agent built: removed at the next run" \
		sh -c "grep -qx 'apk del .vmcost-agent-build' '$tmp/killed-late.log' && ! grep -q vmcost-agent-build '$r/etc/apk/world'"
	check "... without a rebuild" sh -c "! grep -q '^apk add' '$tmp/killed-late.log'"
}

# ---- apt/systemd and dnf/systemd guests ---------------------------------------------------------
debian_tests() {
	r=$tmp/deb
	make_debian_root "$r"
	if run deb "$r"; then ok "apt: runs"; else
		fail "apt: runs"
		sed 's/^/    /' "$tmp/deb.out"
	fi
	check "apt: built into /usr/local/bin" sh -c "'$r/usr/local/bin/vmcost-agent' | grep -qx 'vmcost-agent src-[0-9a-f]*'"
	check "apt: installs the missing build dependencies" \
		grep -qx 'apt-get install -y --no-install-recommends gcc libc6-dev pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev' "$tmp/deb.log"
	check "apt: ... and purges them after the build" \
		grep -qx 'apt-get purge -y --auto-remove gcc libc6-dev pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev' "$tmp/deb.log"
	check "apt: nothing else is purged" test "$(grep -c purge "$tmp/deb.log")" = 1
	check "apt: the systemd unit is installed from the tarball's copy" \
		cmp -s provision/systemd/cache-trim.service "$r/etc/systemd/system/cache-trim.service"
	check "apt: ... systemd reloads its units" grep -qx 'systemctl daemon-reload' "$tmp/deb.log"
	check "apt: ... enabled at boot" test -L "$r/etc/systemd/system/multi-user.target.wants/cache-trim.service"
	check "apt: ... and started" test -e "$r/run/systemd-stub/cache-trim.service"
	check "apt: no OpenRC script on a systemd guest" test ! -e "$r/etc/init.d/cache-trim"
	check "apt: the engine's thaw unit is installed from the tarball's copy" \
		cmp -s provision/systemd/vmcost-engine-thaw.service "$r/etc/systemd/system/vmcost-engine-thaw.service"
	check "apt: ... wanted by docker.service and containerd.service" sh -c \
		"test -L '$r/etc/systemd/system/docker.service.wants/vmcost-engine-thaw.service' && test -L '$r/etc/systemd/system/containerd.service.wants/vmcost-engine-thaw.service'"
	check "apt: ... and started" test -e "$r/run/systemd-stub/vmcost-engine-thaw.service"
	check "apt: the idle sysctls are written and applied" sh -c \
		"grep -qx 'kernel.watchdog = 0' '$r/etc/sysctl.d/60-vmcost-idle.conf' && test \"\$(cat '$r/proc/sys/vm/compaction_proactiveness')\" = 0"
	check "apt: without docker.io's containerd.service, containerd is left alone" \
		sh -c "test ! -e '$r/etc/containerd/vmcost-quiet.toml' && grep -q 'no containerd.service' '$tmp/deb.out'"
	check_idempotent deb "$r"
	check "apt: the second run downloads, installs, reloads and restarts nothing" \
		sh -c "! grep -Eq '^(curl|apt-get|systemctl (daemon-reload|try-restart|enable))' '$tmp/deb-again.log'"

	# docker.io installed later (Lima's debian image with apt-get install docker.io): the next boot
	# quiets its containerd.
	add_docker_io "$r"
	run deb-dockerio "$r"
	check "apt: with docker.io, its standalone containerd loses CRI and the restart monitor" grep -qx \
		'disabled_plugins = \["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.restart"\]' "$r/etc/containerd/vmcost-quiet.toml"
	check "apt: ... and is restarted with it" grep -qx 'systemctl try-restart containerd.service' "$tmp/deb-dockerio.log"
	check_idempotent deb-dockerio "$r"
	run deb-checkout "$r" PARAM_vmcostAgentSrc="$tmp/checkout"
	check "apt: changed sources (a checkout) restart the running service" \
		grep -qx 'systemctl try-restart cache-trim.service' "$tmp/deb-checkout.log"

	# The Lima test image has every package: no apt-get, so no package archive is needed.
	r=$tmp/deb-full
	make_debian_root "$r" gcc libc6-dev pkg-config libyaml-dev libjansson-dev libmicrohttpd-dev
	run deb-full "$r"
	check "apt: packages already installed are neither installed nor purged" \
		sh -c "test -x '$r/usr/local/bin/vmcost-agent' && ! grep -q '^apt-get' '$tmp/deb-full.log'"

	# Only what is missing is installed, and only that is purged.
	r=$tmp/deb-some
	make_debian_root "$r" gcc libc6-dev pkg-config
	run deb-some "$r"
	check "apt: installs only the missing packages" \
		grep -qx 'apt-get install -y --no-install-recommends libyaml-dev libjansson-dev libmicrohttpd-dev' "$tmp/deb-some.log"
	check "apt: ... purges only those" \
		grep -qx 'apt-get purge -y --auto-remove libyaml-dev libjansson-dev libmicrohttpd-dev' "$tmp/deb-some.log"

	# Fedora: dnf and systemd.
	r=$tmp/fedora
	make_debian_root "$r"
	rm "$r/etc/debian_version"
	echo "Fedora release 42 (Adams)" >"$r/etc/fedora-release"
	if run fedora "$r"; then ok "dnf: runs"; else
		fail "dnf: runs"
		sed 's/^/    /' "$tmp/fedora.out"
	fi
	check "dnf: installs the missing build dependencies" \
		grep -qx 'dnf install -y gcc pkgconf-pkg-config libyaml-devel jansson-devel libmicrohttpd-devel' "$tmp/fedora.log"
	check "dnf: the systemd unit is enabled and started" \
		sh -c "test -L '$r/etc/systemd/system/multi-user.target.wants/cache-trim.service' && test -e '$r/run/systemd-stub/cache-trim.service'"
	check_idempotent fedora "$r"

	# Neither: a message that says what to do.
	r=$tmp/other
	make_debian_root "$r"
	rm "$r/etc/debian_version"
	if run other "$r"; then
		fail "an unknown distribution fails"
	else
		ok "an unknown distribution fails"
	fi
	check "... naming what to install" grep -q 'install a C compiler, pkg-config' "$tmp/other.out"
}

alpine_tests
killed_tests
debian_tests
suite_summary
