# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Helpers for lab test suites (tests/lab/*.sh). Source it, call lab_init, use lab_start, check,
# ok, fail and skip, and end with summary (prints "N passed, N failed, N skipped" and exits with
# the status).
set -u

LAB_TEST_REPO=$(cd "$(dirname "$0")/../.." && pwd)
LAB_TEST_INSTANCES=""
# shellcheck source=tests/suite.sh
. "$LAB_TEST_REPO/tests/suite.sh"

# lab_tree PID: the process and everything below it, parents first.
lab_tree() {
	echo "$1"
	for child in $(pgrep -P "$1" 2>/dev/null); do lab_tree "$child"; done
}

# lab_kill_tree PID: stops a process and all it started (a daemon's `limactl start` with its
# hostagent and QEMU), the parent first so it cannot start anything new meanwhile.
lab_kill_tree() {
	for p in $(lab_tree "$1"); do kill "$p" 2>/dev/null; done
	return 0
}

# What still runs for this suite's instances once they were stopped: a start still in progress
# (a hostagent or QEMU whose command line names $LIMA_HOME) must not outlive the suite.
lab_leftovers() {
	# Only a private LIMA_HOME such as /tmp/vmcost-lab.XXXXXX: never a pattern that is "/".
	case ${LIMA_HOME:-} in /?*/?*) ;; *) return 0 ;; esac
	pgrep -f -- "$LIMA_HOME/" 2>/dev/null | grep -vx "$$"
}

lab_cleanup() {
	for n in $LAB_TEST_INSTANCES; do
		"$LAB_TEST_REPO/lab/vm" stop -f "$n" >/dev/null 2>&1 || true
	done
	i=0
	while [ -n "$(lab_leftovers)" ] && [ $i -lt 20 ]; do
		signal=TERM
		[ $i -lt 10 ] || signal=KILL
		for p in $(lab_leftovers); do kill -s "$signal" "$p" 2>/dev/null; done
		sleep 0.5
		i=$((i + 1))
	done
	[ -z "$(lab_leftovers)" ] || echo "lab: still running for $LIMA_HOME: $(lab_leftovers | tr '\n' ' ')"
	if [ -n "${LAB_TEST_KEEP:-}" ]; then
		echo "kept $LIMA_HOME"
	else
		rm -rf "$LIMA_HOME"
	fi
}

# A private LIMA_HOME (short: unix socket paths must stay under 108 bytes), lab/bin first on
# PATH so `limactl` is the lab stand-in, and the freshly built binaries.
lab_init() {
	LIMA_HOME=$(mktemp -d /tmp/vmcost-lab.XXXXXX)
	export LIMA_HOME
	PATH="$LAB_TEST_REPO/lab/bin:$LAB_TEST_REPO/host:$LAB_TEST_REPO/guest-agent:$PATH"
	export PATH
	trap lab_cleanup EXIT
	trap 'exit 130' INT TERM
}

# lab_start NAME ARGS...: boots an instance; on failure the suite records it and exits.
lab_start() {
	LAB_TEST_INSTANCES="$LAB_TEST_INSTANCES $1"
	if ! LAB_START_OUTPUT=$("$LAB_TEST_REPO/lab/vm" start "$@" 2>&1); then
		echo "$LAB_START_OUTPUT"
		fail "lab/vm start $*"
		summary
	fi
	echo "$LAB_START_OUTPUT" | tail -n 1
}

lab_qemu_pid() {
	cat "$LIMA_HOME/$1/qemu.pid"
}

# Resident set of the QEMU process in KiB.
lab_qemu_rss_kb() {
	awk '/^VmRSS:/ {print $2}' "/proc/$(lab_qemu_pid "$1")/status"
}

# lab_wait_until SECONDS CMD...: polls every 0.5 s; true as soon as CMD succeeds.
lab_wait_until() {
	limit=$1
	shift
	end=$(($(date +%s) + limit))
	while :; do
		"$@" && return 0
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.5
	done
}
