#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost report against a lab instance: one Markdown and one JSON file in the results directory,
# with the machine, the versions, vmType and every run (selftest, doctor, idle, disk, autostop
# status; memtest when a results file is given), and nothing that points back at the person: the
# instance lives under $HOME here, so every path in the runs' output is a home path that must
# come out as ~, and the host's name must not appear at all.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

lab_start rp
out=$LIMA_HOME/out
mkdir -p "$out"
# As root the report runs in a UTS namespace of its own under a host name that cannot be missed;
# otherwise this machine's name is looked for.
host=$(hostname)
named() { "$@"; }
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 &&
	unshare --uts true 2>/dev/null; then
	host=vmcost-report-host-$$
	# shellcheck disable=SC2016 # expanded by the inner sh
	named() { unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@"; }
fi
# The instance directory is under this HOME: its paths are the home paths to hide. The given
# memtest file names the host as a results file of another tool might.
printf '{"verdict": "conclusive", "dir": "%s/rp", "note": "measured on %s"}\n' "$LIMA_HOME" "$host" \
	>"$out/memtest-given.json"
if HOME=$LIMA_HOME named vmcost report rp --duration 3s --results "$out" \
	--memtest "$out/memtest-given.json" >"$out/stdout" 2>"$out/stderr"; then
	ok "vmcost report rp: exit 0"
else
	fail "vmcost report rp: exit $?: $(tail -n 3 "$out/stderr")"
fi
md=$(find "$out" -name 'report-rp-*.md' | head -n 1)
js=$(find "$out" -name 'report-rp-*.json' | head -n 1)
check "it wrote report-rp-DATE.md and .json" test -s "${md:-/nonexistent}" -a -s "${js:-/nonexistent}"
check "it names both files" grep -q "$(basename "${md:-none}")" "$out/stdout"
js=${js:-/nonexistent}

# field NAME FILTER: the report's JSON satisfies FILTER.
field() {
	if jq -e "$2" "$js" >/dev/null 2>&1; then ok "json: $1"; else
		fail "json: $1: $(jq -c "$3" "$js" 2>&1 | head -c 600)"
	fi
}
field "kind, instance, vmType" '.kind == "vmcost-report" and .instance == "rp" and .vm_type == "qemu"' '.'
field "the machine: os, kernel, cpus, memory" \
	'.machine | (.os | length > 0) and (.kernel | length > 0) and .cpus > 0 and .memory > 0' '.machine'
field "versions of vmcost and Lima" '(.vmcost_version | length > 0) and (.lima_version | length > 0)' '.'
# The report carries selftest's own verdicts; as in tests/sh/selftest.sh, only the host free
# memory reading may fail here, where the other lane's guest moves host free memory meanwhile.
# shellcheck disable=SC2016 # $s and $failed are jq's
field "selftest ran, its verdicts carried (only a noisy host free memory may fail)" \
	'.runs.selftest as $s | [$s.result.results[] | select(.verdict == "fail") | .reading] as $failed |
	 ($s.result.results | length >= 5) and
	 (($s.exit == 0 and $failed == []) or ($s.exit == 1 and $failed == ["host free memory"]))' \
	'.runs.selftest'
selftest_exit=$(jq -r '.runs.selftest.exit' "$js" 2>/dev/null)
field "doctor ran through the agent" '.runs.doctor.result != null and (.runs.doctor.exit | type) == "number"' \
	'.runs.doctor'
field "idle measured the VM" '.runs.idle.exit == 0 and .runs.idle.result != null' '.runs.idle'
field "disk measured the VM" '.runs.disk.exit == 0 and .runs.disk.result != null' '.runs.disk'
field "autostop status: no daemon here, said so" \
	'.runs.autostop.exit != 0 and (.runs.autostop.message | length > 0)' '.runs.autostop'
shown_host="<host>"
[ "${#host}" -ge 3 ] || shown_host=$host # two letters would hit words: left as they are
field "the given memtest is included, its host name as $shown_host" \
	".runs.memtest.result.verdict == \"conclusive\" and .runs.memtest.result.note == \"measured on $shown_host\"" \
	'.runs.memtest'
field "home paths were there and start from ~" '[.. | strings | select(startswith("~/"))] | length > 0' \
	'[.. | strings] | .[0:20]'

for f in "$md" "$js"; do
	[ -f "${f:-}" ] || continue
	if grep -qF "$LIMA_HOME" "$f"; then
		fail "$(basename "$f") holds the home path $LIMA_HOME: $(grep -F "$LIMA_HOME" "$f" | head -n 2)"
	else
		ok "$(basename "$f"): no path under the home directory"
	fi
	if [ "${#host}" -lt 3 ]; then
		skip "$(basename "$f"): this host's name ($host) is too short to look for"
	elif grep -qiwF "$host" "$f"; then
		fail "$(basename "$f") names the host $host: $(grep -iwF "$host" "$f" | head -n 2)"
	else
		ok "$(basename "$f"): the host's name ($host) is not in it"
	fi
done
check "the page starts with the instance and its vmType" grep -q '^# vmcost report: rp (qemu)$' "${md:-/nonexistent}"
# shellcheck disable=SC2016 # backquotes are Markdown here
check "the page has the table of runs, with selftest's exit" \
	grep -q "^| selftest | \`vmcost selftest --json\` | ${selftest_exit:-none} |" "${md:-/nonexistent}"

# A results directory that cannot be made: refused before anything is measured.
started=$(date +%s)
HOME=$LIMA_HOME vmcost report rp --results /proc/nope >/dev/null 2>"$out/err2"
rc=$?
took=$(($(date +%s) - started))
if [ "$rc" -ne 0 ] && [ "$took" -le 5 ] && grep -q '/proc/nope' "$out/err2"; then
	ok "an unusable --results is refused at once (exit $rc, $took s)"
else
	fail "--results /proc/nope: exit $rc after $took s: $(cat "$out/err2")"
fi
summary
