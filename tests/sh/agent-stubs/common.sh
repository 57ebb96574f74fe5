# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Shared by the agent installer's stubs (tests/sh/templates_agent.sh), on top of
# tests/sh/provision-stubs: the fake root, the call log, and the kill that stands for the VM going
# down while the first boot provisions.
# A stub may be called through a symlink (a PATH without curl): find the real directory.
# shellcheck source=tests/sh/provision-stubs/common.sh
. "$(dirname "$(readlink -f "$0")")/../provision-stubs/common.sh"
# stub_kill_here POINT: when STUB_KILL_AT names POINT, kill every process of the run (the test
# starts it in a process group of its own), this stub included, as the shutdown's SIGKILL would.
stub_kill_here() {
	[ "${STUB_KILL_AT:-}" = "$1" ] || return 0
	stub_log "killed at $1"
	kill -KILL 0
}
