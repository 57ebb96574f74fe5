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

# result NAME CMD...: runs CMD, keeps stdout in $tmp/out; a pass needs exit 0.
result() {
	name=$1
	shift
	if "$@" >"$tmp/out" 2>"$tmp/err"; then ok "$name: exit 0"; else
		fail "$name: exit $?: $(head -c 300 "$tmp/err")"
	fi
}
has() { # NAME TEXT: $tmp/out contains TEXT
	if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else fail "$1: no \"$2\" in $(head -c 600 "$tmp/out")"; fi
}
lacks() { # NAME TEXT: $tmp/out does not contain TEXT
	if grep -qF -- "$2" "$tmp/out"; then fail "$1: \"$2\" in $(head -c 600 "$tmp/out")"; else ok "$1"; fi
}
json() { # NAME FILTER: $tmp/out is JSON for which FILTER holds (and not empty)
	if [ -s "$tmp/out" ] && jq -e "$2" "$tmp/out" >/dev/null 2>&1; then ok "$1"; else
		fail "$1: $(head -c 600 "$tmp/out")"
	fi
}

result "footprint kr" "$vmcost" footprint kr
has "krunkit: the process is krunkit.pid's" "chosen by krunkit.pid"
has "krunkit: the footprint says it overstates the cost" \
	"note       on krunkit the footprint overstates the cost: libkrun hands back the pages the guest reports free with MADV_FREE"
has "krunkit: and how to see the real return" "(vmcost memtest NAME shows what pressure takes back)"
result "footprint kr --json" "$vmcost" footprint kr --json
json "krunkit --json: footprint_overstates, with the reason" \
	'.vm_type == "krunkit" and .footprint_overstates == true and (.footprint_note | test("MADV_FREE"))'
result "footprint qe" "$vmcost" footprint qe
lacks "qemu: no such note" "overstates"
result "footprint qe --json" "$vmcost" footprint qe --json
json "qemu --json: footprint_overstates false, no note" \
	'.footprint_overstates == false and .footprint_note == null'

result "list" "$vmcost" list
if grep -E '^kr +Running +krunkit .*[0-9] [KMG]?i?B\* ' "$tmp/out" >/dev/null ||
	grep -E '^kr +Running +krunkit .*B\*' "$tmp/out" >/dev/null; then
	ok "list: kr's footprint carries the mark"
else
	fail "list: no marked footprint on kr's row: $(cat "$tmp/out")"
fi
if grep -E '^qe ' "$tmp/out" | grep -qF '*'; then fail "list: qe's row is marked"; else
	ok "list: qe's row is not marked"
fi
has "list: the mark is explained under the table" "* on krunkit the footprint overstates the cost"
result "list --json" "$vmcost" list --json
json "list --json: the flag per instance" \
	'(.instances | map({(.name): .footprint_overstates}) | add) == {"kr": true, "qe": false}'
suite_summary
