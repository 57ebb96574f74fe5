#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost-agent's read-only commands on this machine's real /proc and /sys, without a VM: every
# command prints a table and, with --json, a document that jq parses with the documented keys;
# bad command lines exit 2 with a message that says what to do. AGENT_BIN selects the binary.
set -u
cd "$(dirname "$0")/../.." || exit 1
agent=${AGENT_BIN:-guest-agent/vmcost-agent}
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM


# run NAME CODE CMD...: exit status CODE; stdout in $tmp/out, stderr in $tmp/err.
run() {
	name=$1 code=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq "$code" ]; then ok "$name (exit $rc)"; else
		fail "$name: exit $rc, expected $code: $(head -c 300 "$tmp/err")"
	fi
}

# json NAME JQ-EXPRESSION: the last stdout parses and the expression holds.
json() {
	if [ -s "$tmp/out" ] && jq -e "$2" "$tmp/out" >/dev/null 2>&1; then ok "$1"; else
		fail "$1: $(head -c 300 "$tmp/out")"
	fi
}

# has NAME FILE TEXT: TEXT occurs in $tmp/FILE.
has() {
	if grep -qF -- "$3" "$tmp/$2"; then ok "$1"; else fail "$1: no \"$3\" in $(head -c 300 "$tmp/$2")"; fi
}

if [ ! -x "$agent" ]; then
	fail "$agent is not built (make agent)"
	suite_summary
	exit 1
fi

# ---- usage ----------------------------------------------------------------------------------
run "no command" 2 "$agent"
has "no command prints the usage" err "usage: vmcost-agent"
run "--help" 0 "$agent" --help
has "--help lists every command" out "wakeups [SECONDS]"
run "--version" 0 "$agent" --version
has "--version names the program" out "vmcost-agent "
run "unknown command" 2 "$agent" frobnicate
has "unknown command says what to do" err 'unknown command "frobnicate": see vmcost-agent --help'
run "unknown option" 2 "$agent" --frob status
run "status takes no arguments" 2 "$agent" status extra
run "trim: unknown option" 2 "$agent" trim --now
run "trim: --config without a file" 2 "$agent" trim --config
run "wakeups: not a duration" 2 "$agent" wakeups soon
has "wakeups: the message gives examples" err "such as 30, 500ms, 2m"
run "wakeups: zero" 2 "$agent" wakeups 0
run "wakeups: two arguments" 2 "$agent" wakeups 1 2
run "balloon: order out of range" 2 "$agent" balloon --order 11
has "balloon: the range is named" err "--order takes 0..10"
run "balloon: order not a number" 2 "$agent" balloon --order nine
run "balloon: --order without a value" 2 "$agent" balloon --order
run "run --json is refused" 2 "$agent" --json run
# Config read failures: each its own exit code (README table), each with its reason.
run "trim: missing config file" 2 "$agent" trim --dry-run --config "$tmp/nope.yaml"
has "missing config: the reason" err "nope.yaml: cannot read (check the --config path): No such file or directory"
run "trim: a directory as config" 2 "$agent" trim --dry-run --config "$tmp"
has "directory as config: the reason, not EIO" err "cannot read (check the --config path): Is a directory"
printf 'flor: 1GiB\n' >"$tmp/bad.yaml"
run "trim: bad config" 8 "$agent" trim --dry-run --config "$tmp/bad.yaml"
has "bad config names file, line and key" err "bad.yaml:1: key \"flor\""

# What an unprivileged user meets: exit 7 from the cause, never from the message text.
# as_user CMD...: runs CMD as nobody when we are root, as ourselves otherwise.
as_user() {
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}
if [ "$(id -u)" -ne 0 ] || command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$tmp"
	printf 'interval: 1m\n' >"$tmp/locked.yaml"
	chmod 000 "$tmp/locked.yaml"
	run "trim: unreadable config" 7 as_user "$agent" trim --dry-run --config "$tmp/locked.yaml"
	has "unreadable config: the reason" err "locked.yaml: cannot read (run as root): Permission denied"
	printf 'floor: 0\n' >"$tmp/floor0.yaml"
	chmod 644 "$tmp/floor0.yaml"
	run "trim by an unprivileged user" 7 as_user "$agent" trim --force --config "$tmp/floor0.yaml"
	has "unprivileged trim says what to do" err "run as root"
	chmod 700 "$tmp"
else
	skip "unprivileged trim and config (needs setpriv to become nobody)"
	skip "unprivileged trim and config: the reasons"
fi

# ---- the read-only commands on this machine ------------------------------------------------------
run "status" 0 "$agent" status
has "status: memory line" out "memory        total "
run "status --json" 0 "$agent" status --json
json "status --json: memory, reporting, trim history" \
	'.memory.total > 0 and (.page_reporting.active | type == "boolean") and (.trim | has("history"))'
run "check" 0 "$agent" check
has "check: table header" out "STATUS CHECK"
has "check: summary line" out " ok, "
run "check --json" 0 "$agent" --json check
json "check --json: 21 checks with id, status, why" \
	'(.checks | length) == 21 and all(.checks[]; (.id | length) > 0 and
	 (.status | IN("ok", "warn", "fail", "n/a")) and (.why | length) > 0)'
json "check --json: every warn and fail has a fix" \
	'all(.checks[] | select(.status == "warn" or .status == "fail"); .fix != null)'
json "check --json: summary adds up" \
	'(.summary | .ok + .warn + .fail + ."n/a") == (.checks | length)'
run "wakeups 1" 0 "$agent" wakeups 1
has "wakeups: totals in the last line" out "total: "
run "wakeups 500ms --json" 0 "$agent" wakeups 500ms --json
json "wakeups --json: rates and the agent's share" \
	'.seconds >= 0.5 and (.totals.context_switches_per_s >= 0) and (.totals.agent.pid > 0) and
	 (.threads | length) <= 10'
run "balloon" 0 "$agent" balloon
has "balloon: reporting line" out "free-page reporting "
run "balloon --json" 0 "$agent" balloon --json
json "balloon --json: device, features, order" \
	'has("present") and (.features | has("reporting")) and (.page_reporting_order | has("meaning"))'
# A forced dry run computes the plan on this machine's real memory and writes nothing.
run "trim --dry-run --force --json" 0 "$agent" trim --dry-run --force --json
json "trim dry run: nothing ran" '.ran == false and .dry_run == true and .forced == true'

suite_summary
