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


if [ ! -x "$agent" ]; then
	fail "$agent is not built (make agent)"
	suite_summary
	exit 1
fi

# ---- usage ----------------------------------------------------------------------------------
expect "no command" 2 "$agent"
has "no command prints the usage" "$tmp/err" "usage: vmcost-agent"
expect "--help" 0 "$agent" --help
has "--help lists every command" "$tmp/out" "wakeups [SECONDS]"
expect "--version" 0 "$agent" --version
has "--version names the program" "$tmp/out" "vmcost-agent "
expect "unknown command" 2 "$agent" frobnicate
has "unknown command says what to do" "$tmp/err" 'unknown command "frobnicate": see vmcost-agent --help'
expect "unknown option" 2 "$agent" --frob status
expect "status takes no arguments" 2 "$agent" status extra
expect "trim: unknown option" 2 "$agent" trim --now
expect "trim: --config without a file" 2 "$agent" trim --config
expect "wakeups: not a duration" 2 "$agent" wakeups soon
has "wakeups: the message gives examples" "$tmp/err" "such as 30, 500ms, 2m"
expect "wakeups: zero" 2 "$agent" wakeups 0
expect "wakeups: two arguments" 2 "$agent" wakeups 1 2
expect "balloon: order out of range" 2 "$agent" balloon --order 11
has "balloon: the range is named" "$tmp/err" "--order takes 0..10"
expect "balloon: order not a number" 2 "$agent" balloon --order nine
expect "balloon: --order without a value" 2 "$agent" balloon --order
expect "run --json is refused" 2 "$agent" --json run
# Config read failures: each its own exit code (README table), each with its reason.
expect "trim: missing config file" 2 "$agent" trim --dry-run --config "$tmp/nope.yaml"
has "missing config: the reason" "$tmp/err" "nope.yaml: cannot read (check the --config path): No such file or directory"
expect "trim: a directory as config" 2 "$agent" trim --dry-run --config "$tmp"
has "directory as config: the reason, not EIO" "$tmp/err" "cannot read (check the --config path): Is a directory"
printf 'flor: 1GiB\n' >"$tmp/bad.yaml"
expect "trim: bad config" 8 "$agent" trim --dry-run --config "$tmp/bad.yaml"
has "bad config names file, line and key" "$tmp/err" "bad.yaml:1: key \"flor\""

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
	expect "trim: unreadable config" 7 as_user "$agent" trim --dry-run --config "$tmp/locked.yaml"
	has "unreadable config: the reason" "$tmp/err" "locked.yaml: cannot read (run as root): Permission denied"
	printf 'floor: 0\n' >"$tmp/floor0.yaml"
	chmod 644 "$tmp/floor0.yaml"
	expect "trim by an unprivileged user" 7 as_user "$agent" trim --force --config "$tmp/floor0.yaml"
	has "unprivileged trim says what to do" "$tmp/err" "run as root"
	chmod 700 "$tmp"
else
	skip "unprivileged trim and config (needs setpriv to become nobody)"
	skip "unprivileged trim and config: the reasons"
fi

# ---- the read-only commands on this machine ------------------------------------------------------
expect "status" 0 "$agent" status
has "status: memory line" "$tmp/out" "memory        total "
expect "status --json" 0 "$agent" status --json
json "status --json: memory, reporting, trim history" "$tmp/out" \
	'.memory.total > 0 and (.page_reporting.active | type == "boolean") and (.trim | has("history"))'
expect "check" 0 "$agent" check
has "check: table header" "$tmp/out" "STATUS CHECK"
has "check: summary line" "$tmp/out" " ok, "
expect "check --json" 0 "$agent" --json check
json "check --json: 21 checks with id, status, why" "$tmp/out" \
	'(.checks | length) == 21 and all(.checks[]; (.id | length) > 0 and
	 (.status | IN("ok", "warn", "fail", "n/a")) and (.why | length) > 0)'
json "check --json: every warn and fail has a fix" "$tmp/out" \
	'all(.checks[] | select(.status == "warn" or .status == "fail"); .fix != null)'
json "check --json: summary adds up" "$tmp/out" \
	'(.summary | .ok + .warn + .fail + ."n/a") == (.checks | length)'
expect "wakeups 1" 0 "$agent" wakeups 1
has "wakeups: totals in the last line" "$tmp/out" "total: "
expect "wakeups 500ms --json" 0 "$agent" wakeups 500ms --json
json "wakeups --json: rates and the agent's share" "$tmp/out" \
	'.seconds >= 0.5 and (.totals.context_switches_per_s >= 0) and (.totals.agent.pid > 0) and
	 (.threads | length) <= 10'
expect "balloon" 0 "$agent" balloon
has "balloon: reporting line" "$tmp/out" "free-page reporting "
expect "balloon --json" 0 "$agent" balloon --json
json "balloon --json: device, features, order" "$tmp/out" \
	'has("present") and (.features | has("reporting")) and (.page_reporting_order | has("meaning"))'
# A forced dry run computes the plan on this machine's real memory and writes nothing.
expect "trim --dry-run --force --json" 0 "$agent" trim --dry-run --force --json
json "trim dry run: nothing ran" "$tmp/out" '.ran == false and .dry_run == true and .forced == true'

suite_summary
