# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Shared by the provision stubs: stand-ins for Alpine's apk, OpenRC and friends that act on the fake
# root in $VMCOST_ROOT the way the real commands act on /, and log every call to $STUB_LOG.
root=${VMCOST_ROOT:?the provision stubs only work on a fake root (VMCOST_ROOT)}
stub_log() {
	[ -n "${STUB_LOG:-}" ] && printf '%s\n' "$*" >>"$STUB_LOG"
	return 0
}
# Paths the scripts pass already carry the fake root; strip it to get the guest path.
guest_path() {
	case $1 in
	"$root"/*) printf '%s\n' "${1#"$root"}" ;;
	"$root") printf '/\n' ;;
	*) printf '%s\n' "$1" ;;
	esac
}
# Kill points, for the test that kills a provision script partway (as the first boot's shutdown
# does) and runs it again. With STUB_KILL_COUNT (a counter file) set, every call counts; the call
# that reaches STUB_KILL_AT kills the process group whose id is in STUB_KILL_GROUP (the script
# started with setsid), with SIGKILL, as init's killprocs does. A pid that leads no group makes
# the kill fail instead of reaching anything else.
killpoint() {
	[ -n "${STUB_KILL_COUNT:-}" ] || return 0
	kp_n=0
	[ ! -f "$STUB_KILL_COUNT" ] || read -r kp_n <"$STUB_KILL_COUNT"
	kp_n=$((kp_n + 1))
	echo "$kp_n" >"$STUB_KILL_COUNT"
	[ "$kp_n" = "${STUB_KILL_AT:-}" ] || return 0
	read -r kp_group <"$STUB_KILL_GROUP"
	kill -s KILL -- "-$kp_group"
	echo "killpoint: cannot kill process group $kp_group" >&2
	exit 1
}
# Every stub call is a kill point, before it acts.
killpoint
