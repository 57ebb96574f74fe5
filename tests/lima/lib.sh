# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh disable=SC2034
# tests/lima/lib.sh: the harness for suites that run against the real Lima (make lima-check).
#
# What it gives a suite (tests/lima/NAME.sh, executable, POSIX sh):
#
#   . "$(dirname "$0")/lib.sh"
#   lima_init                  # limactl from `make lima` (fails the suite if it is missing),
#                              # the unprivileged test user, the staged files; sets the trap
#   lima_up [fpr|plain|any]    # the shared instance, running: boots it if it is not (default
#                              # fpr), restarts it when its balloon differs from the one asked for
#   as_lima CMD...             # CMD as the test user: HOME, LIMA_HOME, PATH with limactl and vmcost
#   lima_ctl ARGS...           # the real limactl (as_lima limactl ARGS...)
#   lima_vmcost ARGS...        # this tree's vmcost, as the test user
#   lima_shell CMD...          # limactl shell in the instance (workdir /)
#   lima_dir                   # prints the instance directory ($LIMA_HOME/$LIMA_INSTANCE)
#   lima_qemu_pid, lima_ha_pid # pids from the instance directory
#   lima_stop, lima_delete     # limactl stop / delete -f
#   check MSG CMD..., ok, fail, skip, summary   (tests/suite.sh; summary exits)
#
# Variables: LIMA_INSTANCE (the instance name), LIMA_HOME, LIMA_TEST_USER, LIMA_TEST_STAGE
# (a copy of templates/, provision/, guest-agent/, lib/ the test user can read, and the instance
# YAML), LIMA_TEST_REPO, LIMACTL_VERSION_LINE.
#
# One instance for the whole of `make lima-check`: tests/lima/run-all boots it once (2 vCPUs,
# 2 GiB, the Debian image from `make lima`, TCG through lab/lima/qemu-tcg, free-page reporting
# as the README's Linux-host recipe adds it) and exports VMCOST_LIMA_SHARED=1, so suites leave it
# running for the next one. A suite run on its own (tests/run-suite build/logs lima/X
# tests/lima/X.sh) boots the instance itself and deletes it when it exits.
# Suites run in name order; one whose header has the line "# lima-check: last" (it stops or
# restarts the instance) runs after all the others.
#
# The instance is made from the templates the way a user makes theirs: its YAML takes
# templates/vmcost-agent.yaml (the agent fragment) with `base:` when that file exists, and the
# portForwards of templates/minimal-docker.yaml (docker.sock, vmcost-agent.sock) are read out of
# the template at test time with Lima's own yq, never copied by hand.
#
# Running as root (CI): limactl refuses root, so the suites create the user vmcost-test (or
# $VMCOST_LIMA_USER) and run limactl, vmcost and everything that talks to the instance as that
# user, with HOME and LIMA_HOME under its home. The cache of `make lima` may sit where that user
# cannot read (/root/.cache), so the pieces it needs are hard-linked (or copied) into its home.
# Run as another user, the suites use the cache directly and LIMA_HOME=$VMCOST_LIMA_CACHE/home.
# Each run stages its files in a directory of its own; the instance and LIMA_HOME are the test
# user's: on a machine shared by several checkouts give each its own VMCOST_LIMA_USER (or
# VMCOST_LIMA_INSTANCE), or their lima-checks delete each other's instance.
set -u

LIMA_TEST_REPO=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/suite.sh
. "$LIMA_TEST_REPO/tests/suite.sh"
# shellcheck source=lab/lima/lib.sh
. "$LIMA_TEST_REPO/lab/lima/lib.sh"

LIMA_INSTANCE=${VMCOST_LIMA_INSTANCE:-vmc}
LIMA_TEST_USER=${VMCOST_LIMA_USER:-vmcost-test}
LIMA_TEST_OWNS_INSTANCE=0
LIMA_BOOT_TIMEOUT=${VMCOST_LIMA_BOOT_TIMEOUT:-40m}


lima_log() {
	echo "lima: $*" >&2
}

# ---- the test user and what it may read ------------------------------------------------------

lima_ensure_user() {
	if ! id "$LIMA_TEST_USER" >/dev/null 2>&1; then
		useradd --create-home --shell /bin/sh --comment "vmcost real-Lima tests" \
			"$LIMA_TEST_USER" || return 1
	fi
	LIMA_TEST_HOME=$(getent passwd "$LIMA_TEST_USER" | cut -d: -f6)
	[ -d "$LIMA_TEST_HOME" ] || return 1
}

# link_or_copy SRC DEST: a hard link when possible (no copy of a 1 GB image), else a copy;
# nothing when DEST already is SRC (another suite may be using it right now).
link_or_copy() {
	[ "$1" -ef "$2" ] && return 0
	ln -f "$1" "$2.new" 2>/dev/null || cp --sparse=always "$1" "$2.new"
	mv -f "$2.new" "$2"
}

# The staged runtime: PREFIX/bin/limactl with PREFIX/share/lima (Lima finds its guest agent and
# templates from its own path), the wrapper and the image, owned by root, readable by the user.
lima_stage_runtime() {
	rt=$LIMA_TEST_HOME/runtime
	mkdir -p "$rt/bin" "$rt/share/lima" "$rt/image"
	link_or_copy "$LIMACTL" "$rt/bin/limactl"
	link_or_copy "$LIMA_GUESTAGENT" "$rt/share/lima/$(basename "$LIMA_GUESTAGENT")"
	link_or_copy "$LIMA_QEMU_WRAPPER" "$rt/bin/qemu-tcg"
	# Lima's templates: replaced only when make lima installed others.
	recipe=$LIMA_PREFIX/share/lima/templates.recipe
	if ! cmp -s "$recipe" "$rt/share/lima/templates.recipe"; then
		rm -rf "$rt/share/lima/templates"
		cp -R "$LIMA_PREFIX/share/lima/templates" "$rt/share/lima/templates"
		cp "$recipe" "$rt/share/lima/templates.recipe"
	fi
	for f in disk.qcow2 vmlinuz initrd.img; do
		[ -f "$LIMA_IMAGE_DIR/$f" ] && link_or_copy "$LIMA_IMAGE_DIR/$f" "$rt/image/$f"
	done
	chmod -R a+rX "$rt"
	LIMA_RT_BIN=$rt/bin
	LIMA_RT_IMAGE=$rt/image
}

# The repository files Lima reads (templates and the files they embed), and vmcost itself, in a
# directory of this run's own: suites of several checkouts may run at once on one machine.
lima_stage_repo() {
	st=$LIMA_TEST_STAGE
	mkdir -p "$st/bin"
	(cd "$LIMA_TEST_REPO" && tar -cf - templates provision guest-agent lib) | tar -xf - -C "$st"
	[ -x "$LIMA_TEST_REPO/host/vmcost" ] && cp "$LIMA_TEST_REPO/host/vmcost" "$st/bin/vmcost"
	ln -s "$LIMA_RT_BIN/limactl" "$st/bin/yq"
	chmod -R a+rX "$st"
	# The test user writes there too (schemas, generated YAML).
	[ "$(id -u)" = 0 ] && chown -R "$LIMA_TEST_USER:" "$st"
	return 0
}

lima_init() {
	trap lima_cleanup EXIT
	trap 'exit 130' INT TERM
	if [ ! -x "$LIMACTL" ]; then
		fail "real limactl $LIMA_VERSION is not built ($LIMACTL): run make lima"
		summary
	fi
	if [ "$(id -u)" = 0 ]; then
		if ! lima_ensure_user; then
			fail "cannot create the test user $LIMA_TEST_USER (limactl refuses root)"
			summary
		fi
		lima_stage_runtime
		LIMA_TEST_STAGE=$(mktemp -d "$LIMA_TEST_HOME/stage.XXXXXX")
		LIMA_HOME=$LIMA_TEST_HOME/lima
	else
		LIMA_TEST_HOME=$HOME
		LIMA_RT_BIN=$LIMA_PREFIX/bin
		LIMA_RT_IMAGE=$LIMA_IMAGE_DIR
		mkdir -p "$LIMA_CACHE/run"
		LIMA_TEST_STAGE=$(mktemp -d "$LIMA_CACHE/run/stage.XXXXXX")
		LIMA_HOME=$LIMA_CACHE/home
	fi
	LIMA_WRAPPER=$LIMA_QEMU_WRAPPER
	[ "$(id -u)" = 0 ] && LIMA_WRAPPER=$LIMA_RT_BIN/qemu-tcg
	lima_stage_repo
	as_lima mkdir -p "$LIMA_HOME"
	export LIMA_HOME LIMA_INSTANCE
	LIMACTL_VERSION_LINE=$(lima_ctl --version 2>&1)
}

# as_lima CMD...: runs CMD as the test user (or as oneself when not root) in a clean
# environment. QEMU_SYSTEM_X86_64 is set only for limactl start (lima_boot).
as_lima() {
	set -- env -i HOME="$LIMA_TEST_HOME" LIMA_HOME="$LIMA_HOME" USER="$LIMA_TEST_USER" \
		LOGNAME="$LIMA_TEST_USER" LANG=C.UTF-8 NO_COLOR=1 TERM=dumb \
		PATH="$LIMA_TEST_STAGE/bin:$LIMA_RT_BIN:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin" "$@"
	if [ "$(id -u)" = 0 ]; then
		(cd / && runuser -u "$LIMA_TEST_USER" -- "$@")
	else
		(cd / && env USER="$(id -un)" LOGNAME="$(id -un)" "$@")
	fi
}

lima_ctl() {
	as_lima limactl "$@"
}

lima_vmcost() {
	as_lima vmcost "$@"
}

lima_shell() {
	as_lima limactl shell --workdir / "$LIMA_INSTANCE" "$@"
}

lima_dir() {
	echo "$LIMA_HOME/$LIMA_INSTANCE"
}

lima_qemu_pid() {
	cat "$(lima_dir)/qemu.pid" 2>/dev/null
}

lima_ha_pid() {
	cat "$(lima_dir)/ha.pid" 2>/dev/null
}

# Status as limactl reports it: Running, Stopped, Broken, or "" when there is no instance.
lima_status() {
	lima_ctl list --format '{{.Status}}' "$LIMA_INSTANCE" 2>/dev/null | head -n 1
}

# The balloon QEMU runs with: fpr, plain (a balloon without reporting) or none.
lima_balloon() {
	pid=$(lima_qemu_pid) || return 1
	args=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
	case $args in
	*free-page-reporting=on*) echo fpr ;;
	*virtio-balloon*) echo plain ;;
	*) echo none ;;
	esac
}

# ---- the instance ----------------------------------------------------------------------------

# yq is Lima's own (limactl runs as yq when called by that name; lima_stage_repo links it), so
# the templates are read exactly as Lima reads YAML.
lima_yq() {
	as_lima yq "$@"
}

# The template's own portForwards, minus those the agent fragment already brings.
lima_port_forwards() {
	tmpl=$LIMA_TEST_STAGE/templates/minimal-docker.yaml
	fragment=$LIMA_TEST_STAGE/templates/vmcost-agent.yaml
	taken='[]'
	if [ -f "$fragment" ]; then
		taken=$(lima_yq -o=json -I=0 '[.portForwards[].guestSocket]' "$fragment") || return 1
	fi
	lima_yq "{\"portForwards\": [.portForwards[] | select(.guestSocket as \$s | $taken | contains([\$s]) | not)]}" "$tmpl"
}

# The instance's YAML: the Debian image of `make lima`, booted from its kernel and initrd.
lima_instance_yaml() {
	out=$LIMA_TEST_STAGE/instance.yaml
	fwd=$(lima_port_forwards) || return 1
	{
		echo "# vmcost's real-Lima test instance (tests/lima/lib.sh), generated at test time."
		if [ -f "$LIMA_TEST_STAGE/templates/vmcost-agent.yaml" ]; then
			echo "base:"
			echo "- $LIMA_TEST_STAGE/templates/vmcost-agent.yaml"
		fi
		cat <<EOF
vmType: qemu
os: Linux
arch: x86_64
cpus: 2
memory: 2GiB
disk: 10GiB
images:
- location: "$LIMA_RT_IMAGE/disk.qcow2"
  arch: x86_64
  kernel:
    location: "$LIMA_RT_IMAGE/vmlinuz"
    cmdline: "root=/dev/vda rw console=ttyS0 quiet no_timer_check net.ifnames=0"
  initrd:
    location: "$LIMA_RT_IMAGE/initrd.img"
firmware:
  legacyBIOS: true
mounts: []
containerd:
  system: false
  user: false
# The template's docker.sock forward needs the Lima user to open /var/run/docker.sock: on this
# systemd guest that is Lima's own recipe (its docker-rootful template), docker.socket owned by
# the user; the chown applies it to the socket of this first boot.
provision:
- mode: yq
  path: /etc/systemd/system/docker.socket.d/override.conf
  format: ini
  expression: .Socket.SocketUser="{{.User}}"
- mode: system
  script: |
    #!/bin/sh
    systemctl daemon-reload
    chown "{{.User}}" /var/run/docker.sock
EOF
		echo "$fwd"
	} >"$out"
	chmod a+r "$out"
	echo "$out"
}

# lima_boot fpr|plain: limactl start, QEMU through the TCG wrapper, with the README's
# free-page-reporting device or without a balloon. Prints the time it took.
lima_boot() {
	mode=$1
	qemu=$LIMA_WRAPPER
	[ "$mode" = fpr ] && qemu="$qemu -device virtio-balloon-pci,free-page-reporting=on"
	serving=""
	if [ -d "$(lima_dir)" ]; then
		set -- "$LIMA_INSTANCE"
	else
		yaml=$(lima_instance_yaml) || return 1
		set -- --name "$LIMA_INSTANCE" "$yaml"
		if grep -q '^  vmcostAgentURL:' "$LIMA_TEST_STAGE/templates/vmcost-agent.yaml" 2>/dev/null; then
			lima_serve_agent_src || return 1
			serving=1
			set -- --param "vmcostAgentURL=$LIMA_AGENT_SRC_URL" "$@"
		fi
	fi
	t0=$(now_s)
	as_lima env QEMU_SYSTEM_X86_64="$qemu" limactl start --tty=false \
		--timeout "$LIMA_BOOT_TIMEOUT" "$@" >"$LIMA_TEST_STAGE/start.log" 2>&1
	rc=$?
	[ -z "$serving" ] || lima_stop_serving
	t=$(($(now_s) - t0))
	# QEMU's own CPU time says what the boot costs apart from how busy the machine was.
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.0f", ($12 + $13) / hz }' \
		"/proc/$(lima_qemu_pid)/stat" 2>/dev/null)
	echo "limactl start $* ($mode): exit $rc after $t s (QEMU CPU ${cpu:-?} s; load $(cut -d' ' -f1-3 /proc/loadavg))" |
		tee -a "$LIMA_TEST_HOME/boot-times.log" >&2
	LIMA_LAST_BOOT_SECONDS=$t
	if [ "$rc" != 0 ]; then
		tail -n 30 "$LIMA_TEST_STAGE/start.log" >&2
		return 1
	fi
}

now_s() {
	date +%s
}

# The agent's source tarball as a release serves it, from this machine: templates/update-embedded
# packs it (and fails when the fragment's pin is not this tree's), an HTTP server on the host's
# loopback serves it, and the guest reaches that through QEMU's user network at Lima's slirp
# gateway (192.168.5.2 is the host's 127.0.0.1 there). Sets LIMA_AGENT_SRC_URL for
# --param vmcostAgentURL; requests are logged to $LIMA_TEST_HOME/agent-src-http.log.
lima_serve_agent_src() {
	dist=$LIMA_TEST_STAGE/dist
	if ! "$LIMA_TEST_STAGE/templates/update-embedded" --check --out "$dist" >"$LIMA_TEST_STAGE/dist.log" 2>&1; then
		cat "$LIMA_TEST_STAGE/dist.log" >&2
		return 1
	fi
	agent_src_file=$(basename "$(tail -n 1 "$LIMA_TEST_STAGE/dist.log")")
	rm -f "$dist/port"
	python3 -c '
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
with open(sys.argv[2] + ".new", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(sys.argv[2] + ".new", sys.argv[2])
server.serve_forever()
' "$dist" "$dist/port" >/dev/null 2>>"$LIMA_TEST_HOME/agent-src-http.log" &
	LIMA_SERVER_PID=$!
	i=0
	while [ ! -s "$dist/port" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$dist/port" ] || return 1
	LIMA_AGENT_SRC_URL=http://192.168.5.2:$(cat "$dist/port")/$agent_src_file
}

lima_stop_serving() {
	[ -n "${LIMA_SERVER_PID:-}" ] || return 0
	kill "$LIMA_SERVER_PID" 2>/dev/null
	wait "$LIMA_SERVER_PID" 2>/dev/null
	LIMA_SERVER_PID=""
}

# lima_up [fpr|plain|any]: the instance running with that balloon.
lima_up() {
	want=${1:-any}
	status=$(lima_status)
	[ -d "$(lima_dir)" ] || status=""
	if [ "$status" = Running ]; then
		have=$(lima_balloon)
		case $want in
		any) return 0 ;;
		fpr) [ "$have" = fpr ] && return 0 ;;
		plain) [ "$have" = none ] && return 0 ;;
		esac
		lima_ctl stop "$LIMA_INSTANCE" >/dev/null 2>&1 || lima_ctl stop -f "$LIMA_INSTANCE" >/dev/null 2>&1
	elif [ "$status" = Broken ]; then
		lima_ctl stop -f "$LIMA_INSTANCE" >/dev/null 2>&1
	fi
	[ -z "$status" ] && [ "${VMCOST_LIMA_SHARED:-}" != 1 ] && LIMA_TEST_OWNS_INSTANCE=1
	[ "$want" = any ] && want=fpr
	if ! lima_boot "$want"; then
		fail "limactl start $LIMA_INSTANCE ($want)"
		summary
	fi
}

lima_stop() {
	lima_ctl stop "$LIMA_INSTANCE"
}

lima_delete() {
	lima_ctl stop -f "$LIMA_INSTANCE" >/dev/null 2>&1
	lima_ctl delete -f "$LIMA_INSTANCE" >/dev/null 2>&1
}

lima_cleanup() {
	lima_stop_serving
	if [ "$LIMA_TEST_OWNS_INSTANCE" = 1 ] && [ -z "${VMCOST_LIMA_KEEP:-}" ]; then
		lima_delete
	fi
	case ${LIMA_TEST_STAGE:-} in
	*/stage.*) rm -rf "$LIMA_TEST_STAGE" ;;
	esac
}
