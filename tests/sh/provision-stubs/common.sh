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
