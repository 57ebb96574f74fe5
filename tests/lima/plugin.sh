#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `limactl vmcost …` with the real limactl 2.2.0: `make install` adds the limactl-vmcost link,
# and Lima 2.x runs an executable named limactl-NAME found on PATH (or beside limactl) as
# `limactl NAME`, passing its arguments and exit status through.
set -u
# shellcheck source=tests/lima/lib.sh
. "$(dirname "$0")/lib.sh"
lima_init
lima_up any

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"; lima_cleanup' EXIT
chmod 755 "$prefix"
if make -s -C "$LIMA_TEST_REPO" install DESTDIR="$prefix" PREFIX=/usr >"$prefix.log" 2>&1; then
	ok "make install DESTDIR=… PREFIX=/usr"
else
	fail "make install: $(tail -n 5 "$prefix.log")"
fi
rm -f "$prefix.log"
bin=$prefix/usr/bin
check "make install made limactl-vmcost, a link to vmcost" \
	test "$(readlink "$bin/limactl-vmcost")" = vmcost
chmod -R a+rX "$prefix"

# Installed vmcost first on PATH, the staged copy out of the way: only the link can answer.
plugin() {
	as_lima env PATH="$bin:$(dirname "$(as_lima sh -c 'command -v limactl')"):/usr/bin:/bin" "$@"
}

out=$(plugin limactl --help 2>&1)
case $out in
*vmcost*) ok "limactl --help lists the vmcost plugin" ;;
*) fail "limactl --help does not list vmcost: $(echo "$out" | tail -n 15)" ;;
esac
v_direct=$(plugin vmcost --version 2>&1)
v_plugin=$(plugin limactl vmcost --version 2>&1)
check "limactl vmcost --version = vmcost --version ($v_plugin)" test "$v_plugin" = "$v_direct"

direct=$(plugin vmcost list --json | jq -c "[.instances[] | {name, status, pid}]")
via=$(plugin limactl vmcost list --json | jq -c "[.instances[] | {name, status, pid}]")
echo "  vmcost list: $direct; limactl vmcost list: $via"
check "limactl vmcost list --json = vmcost list --json" test -n "$via" -a "$via" = "$direct"
out=$(plugin limactl vmcost footprint "$LIMA_INSTANCE" --json)
check "limactl vmcost footprint: the real qemu.pid" \
	test "$(printf '%s' "$out" | jq .process.pid)" = "$(lima_qemu_pid)"
plugin limactl vmcost footprint ghost >/dev/null 2>&1
status=$?
check "limactl vmcost footprint ghost: vmcost's exit code 3 comes through" test "$status" -eq 3
plugin limactl vmcost no-such-command >/dev/null 2>&1
status=$?
check "limactl vmcost no-such-command: usage, exit 2" test "$status" -eq 2
summary
