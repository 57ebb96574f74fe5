#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A krunkit instance (Lima's vmType: krunkit, libkrun) on fake instance directories: vmcost finds
# the VMM through krunkit.pid, and footprint and list say that the footprint overstates the cost
# there (libkrun MADV_FREEs the pages the guest reports free; they count until pressure), in the
# table and in --json; a qemu instance beside it says nothing of the kind. HOST_BIN selects the
# binary.
set -u
cd "$(dirname "$0")/../.." || exit 1
vmcost=$(pwd)/${HOST_BIN:-host/vmcost}
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
child=
cleanup() {
	[ -z "$child" ] || kill "$child" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

export LIMA_HOME="$tmp/lima"
# No limactl: the instance directories are read as Lima lays them out.
mkdir -p "$tmp/bin"
PATH="$tmp/bin:/usr/bin:/bin"
export PATH
# The "VMM" of both instances is a sleeping child of this shell.
sleep 300 &
child=$!
for name in kr qe; do
	mkdir -p "$LIMA_HOME/$name"
	echo $$ >"$LIMA_HOME/$name/ha.pid"
done
printf 'vmType: krunkit\nmemory: 4GiB\ncpus: 2\narch: aarch64\n' >"$LIMA_HOME/kr/lima.yaml"
echo "$child" >"$LIMA_HOME/kr/krunkit.pid"
printf 'vmType: qemu\nmemory: 2GiB\n' >"$LIMA_HOME/qe/lima.yaml"
echo "$child" >"$LIMA_HOME/qe/qemu.pid"

# lacks NAME TEXT: $tmp/out does not contain TEXT.
lacks() {
	if grep -qF -- "$2" "$tmp/out"; then fail "$1: \"$2\" in $(head -c 600 "$tmp/out")"; else ok "$1"; fi
}

expect "footprint kr" 0 "$vmcost" footprint kr
has "krunkit: the process is krunkit.pid's" "$tmp/out" "chosen by krunkit.pid"
has "krunkit: the footprint says it overstates the cost" "$tmp/out" \
	"note       on krunkit the footprint overstates the cost: libkrun hands back the pages the guest reports free with MADV_FREE"
has "krunkit: and how to see the real return" "$tmp/out" "(vmcost memtest NAME shows what pressure takes back)"
expect "footprint kr --json" 0 "$vmcost" footprint kr --json
json "krunkit --json: footprint_overstates, with the reason" "$tmp/out" \
	'.vm_type == "krunkit" and .footprint_overstates == true and (.footprint_note | test("MADV_FREE"))'
expect "footprint qe" 0 "$vmcost" footprint qe
lacks "qemu: no such note" "overstates"
expect "footprint qe --json" 0 "$vmcost" footprint qe --json
json "qemu --json: footprint_overstates false, no note" "$tmp/out" \
	'.footprint_overstates == false and .footprint_note == null'

expect "list" 0 "$vmcost" list
if grep -E '^kr +Running +krunkit .*[0-9] [KMG]?i?B\* ' "$tmp/out" >/dev/null ||
	grep -E '^kr +Running +krunkit .*B\*' "$tmp/out" >/dev/null; then
	ok "list: kr's footprint carries the mark"
else
	fail "list: no marked footprint on kr's row: $(cat "$tmp/out")"
fi
if grep -E '^qe ' "$tmp/out" | grep -qF '*'; then fail "list: qe's row is marked"; else
	ok "list: qe's row is not marked"
fi
has "list: the mark is explained under the table" "$tmp/out" "* on krunkit the footprint overstates the cost"
expect "list --json" 0 "$vmcost" list --json
json "list --json: the flag per instance" "$tmp/out" \
	'(.instances | map({(.name): .footprint_overstates}) | add) == {"kr": true, "qe": false}'
suite_summary
