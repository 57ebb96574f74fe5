#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Help that cannot drift (issue 13): tests/check-manuals passes on the repository, and fails,
# naming the page and the item, on each kind of mismatch planted in a copy of the files it reads
# or in the help of a wrapped program: an option --help lists that the manual lacks and the
# reverse, a command without a page, a page without a command, a changed usage line or summary,
# README's exit codes against the enum, README's table of commands, the agent's commands and
# options, its config keys and defaults, its HTTP routes (in the manuals and in
# docs/agent-api.md). tests/man-lint is shown to fail on a page with a bad macro.
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
repo=$(pwd)
checker=$repo/tests/check-manuals
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

for bin in host/vmcost guest-agent/vmcost-agent; do
	if [ ! -x "$bin" ]; then
		fail "$bin is not built (run make)"
		suite_summary
		exit 1
	fi
done

# passes NAME DIR: the checker accepts DIR.
passes() {
	if "$checker" "$2" >"$tmp/out" 2>&1; then ok "$1"; else
		fail "$1: $(head -c 800 "$tmp/out")"
	fi
}
# rejects NAME DIR TEXT: the checker fails on DIR and says TEXT. It runs once per DIR, so several
# independent plants in one copy cost one run; each plant has its own message to find.
rejects() {
	if [ ! -f "$2.out" ]; then
		"$checker" "$2" >"$2.out" 2>&1
		echo $? >"$2.rc"
	fi
	if [ "$(cat "$2.rc")" = 0 ]; then
		fail "$1: accepted"
	elif grep -qF -- "$3" "$2.out"; then
		ok "$1"
	else
		fail "$1: no \"$3\" in: $(head -c 800 "$2.out")"
	fi
}

# copy NAME: a fresh copy of what the checker reads, with the real programs; echoes its path.
copy() {
	dir=$tmp/$1
	mkdir -p "$dir/lib" "$dir/guest-agent" "$dir/provision" "$dir/host" "$dir/docs"
	cp -R docs/man "$dir/docs/"
	cp docs/agent-api.md "$dir/docs/"
	cp README.md "$dir/"
	cp lib/log.h "$dir/lib/"
	cp guest-agent/server_route.c "$dir/guest-agent/"
	cp provision/vmcost-agent.yaml "$dir/provision/"
	ln -s "$repo/host/vmcost" "$dir/host/vmcost"
	ln -s "$repo/guest-agent/vmcost-agent" "$dir/guest-agent/vmcost-agent"
	echo "$dir"
}

# wrap DIR PROGRAM SED-SCRIPT: DIR's PROGRAM becomes the real one with its output edited.
wrap() {
	rm -f "$1/$2"
	cat >"$1/$2" <<EOF
#!/bin/sh
"$repo/$2" "\$@" 2>&1 | sed '$3'
EOF
	chmod +x "$1/$2"
}

# edit FILE CMD...: rewrite FILE in place through a filter command.
edit() {
	f=$1
	shift
	"$@" "$f" >"$f.new" && mv "$f.new" "$f"
}
# drop_entry FILE LINE: remove an scdoc entry (its line and the indented line after it).
drop_entry() {
	# shellcheck disable=SC2016 # awk's $0, not the shell's
	edit "$1" awk -v e="$2" '$0 == e { skip = 2 } skip { skip--; next } 1'
}

passes "the manuals agree with the programs, README and the config file" "$repo"
passes "an unchanged copy passes" "$(copy same)"

# --- the programs changed, the manuals not
d=$(copy programs)
wrap "$d" host/vmcost '/--pid PID  *measure this process/a\
  --frobnicate  a new option nobody documented
/^  load /a\
  frobnicate new command'
wrap "$d" guest-agent/vmcost-agent 's/^  balloon \[--order N\]   /  balloon [--order N] [--x]/
s/(known keys: /(known keys: frobnicate, /'
rejects "an option vmcost footprint --help lists but its manual lacks" "$d" \
	'docs/man/vmcost-footprint.1.scd: option "--frobnicate" is in vmcost footprint --help but not in its OPTIONS'
rejects "a command --help lists that has no page" "$d" \
	'docs/man/vmcost-frobnicate.1.scd: missing: vmcost --help lists "frobnicate"'
rejects "... and that vmcost(1) does not list" "$d" \
	'command "frobnicate" is in vmcost --help but not in vmcost(1) COMMANDS'
rejects "an agent option in --help but not in vmcost-agent(8)" "$d" \
	'"balloon: --order --x" is in vmcost-agent --help but not in vmcost-agent(8) COMMANDS'
rejects "a config key the parser knows that vmcost-agent.yaml(5) lacks" "$d" \
	'docs/man/vmcost-agent.yaml.5.scd: key "frobnicate" is in the config parser'
rejects "... nor provision/vmcost-agent.yaml" "$d" \
	'provision/vmcost-agent.yaml: key "frobnicate" is in the config parser'
rejects "... nor docs/agent-api.md's configuration table" "$d" \
	"docs/agent-api.md: key \"frobnicate\" is in the config parser's keys but not in docs/agent-api.md's configuration table"

# --- the manuals, README and the config file changed, the programs not (independent plants,
# each with its own message)
d=$(copy docs)
m=$d/docs/man
drop_entry "$m/vmcost-footprint.1.scd" '*--watch* _SECONDS_'
edit "$m/vmcost-idle.1.scd" awk \
	'/^# OPTIONS$/ { print; print ""; print "*--frobnicate*"; print "\tNot an option."; next } 1'
rm "$m/vmcost-env.1.scd"
cp docs/man/vmcost-list.1.scd "$m/vmcost-gone.1.scd"
edit "$m/vmcost-disk.1.scd" sed 's/^\*vmcost disk\* _NAME_ \[_DURATION_\]/*vmcost disk* _NAME_ [_SECONDS_]/'
edit "$m/vmcost.1.scd" sed 's/^\tquery or set the balloon target (qemu)$/\tthe balloon/'
drop_entry "$m/vmcost.1.scd" '*-v*'
edit "$d/README.md" sed 's/^| 11 | inconclusive/| 12 | inconclusive/
s/^| 4 | instance exists but is stopped/| 4 | instance is paused/'
edit "$m/vmcost-agent.8.scd" sed 's/^\*trim\* \[\*--dry-run\*\] \[\*--force\*\]/*trim* [*--dry-run*]/'
drop_entry "$m/vmcost-agent.8.scd" '*--version*'
edit "$m/vmcost-agent.yaml.5.scd" awk '/^\*max-request:\*/ { skip = 2 } skip { skip--; next } 1'
edit "$m/vmcost-agent.yaml.5.scd" sed 's/^\*floor:\* _size_, default \*128MiB\*/*floor:* _size_, default *256MiB*/'
edit "$d/provision/vmcost-agent.yaml" grep -v '^log-level:'
printf '/* planted */ {"/v1/frobnicate", "DELETE", NULL},\n' >>"$d/guest-agent/server_route.c"
edit "$d/README.md" grep -v '(docs/man/vmcost-trim.1.scd)'
# shellcheck disable=SC2016 # Markdown backquotes, not command substitution
edit "$d/docs/agent-api.md" grep -v '^| GET | `/v1/checks` |'
# shellcheck disable=SC2016 # Markdown backquotes, not command substitution
edit "$d/docs/agent-api.md" sed 's/^| `idle-load1` | `0.2` |/| `idle-load1` | `0.3` |/'

rejects "an option missing from the manual" "$d" \
	'docs/man/vmcost-footprint.1.scd: option "--watch" is in vmcost footprint --help but not in its OPTIONS'
rejects "an option the manual lists but --help does not" "$d" \
	'docs/man/vmcost-idle.1.scd: option "--frobnicate" is in its OPTIONS but not in vmcost idle --help'
rejects "a command without a manual page" "$d" "docs/man/vmcost-env.1.scd: missing"
rejects "a page for a command vmcost does not have" "$d" \
	'docs/man/vmcost-gone.1.scd: a manual for "vmcost gone"'
rejects "a SYNOPSIS that differs from the usage line" "$d" \
	"docs/man/vmcost-disk.1.scd: SYNOPSIS says \"vmcost disk NAME [SECONDS]"
rejects "a command summary in vmcost(1) that differs from vmcost --help" "$d" \
	'the summary of balloon is "the balloon" in vmcost(1)'
rejects "a global option missing from vmcost(1)" "$d" \
	'option "-v" is in the usage line of vmcost --help but not in vmcost(1) OPTIONS'
rejects "README's exit-code table without a code of the enum" "$d" \
	'README.md: exit code "11" is in lib/log.h (enum vmc_exit) but not in README'
rejects "... and with a code the enum does not have" "$d" \
	"README.md: exit code \"12\" is in README's table but not in lib/log.h"
rejects "an exit code that means something else in README than in vmcost(1)" "$d" \
	'exit code 4 means "instance exists but is stopped: limactl start NAME" in vmcost(1) but "instance is paused'
rejects "an agent command's option missing from vmcost-agent(8)" "$d" \
	'command and its options "trim: --dry-run --force --config" is in vmcost-agent --help'
rejects "a global agent option missing from vmcost-agent(8)" "$d" \
	'option "--version" is in the options of vmcost-agent --help but not in vmcost-agent(8) OPTIONS'
rejects "a config key the parser knows but vmcost-agent.yaml(5) lacks" "$d" \
	"docs/man/vmcost-agent.yaml.5.scd: key \"max-request\" is in the config parser's keys"
rejects "a default in vmcost-agent.yaml(5) that the default file does not give" "$d" \
	'the default of floor is "256MiB" here but "128MiB" in provision/vmcost-agent.yaml'
rejects "a key missing from provision/vmcost-agent.yaml" "$d" \
	"provision/vmcost-agent.yaml: key \"log-level\" is in the config parser's keys"
rejects "an HTTP route the agent serves but vmcost-agent(8) does not list" "$d" \
	'route "DELETE /v1/frobnicate" is in guest-agent/server_route.c but not in vmcost-agent(8)'
rejects "... nor docs/agent-api.md" "$d" \
	"docs/agent-api.md: route \"DELETE /v1/frobnicate\" is in guest-agent/server_route.c but not in docs/agent-api.md's endpoint table"
rejects "a route docs/agent-api.md's table lost" "$d" \
	"docs/agent-api.md: route \"GET /v1/checks\" is in guest-agent/server_route.c"
rejects "a default in docs/agent-api.md's configuration table that the default file does not give" "$d" \
	'docs/agent-api.md: the default of idle-load1 is "0.3" here but "0.2" in provision/vmcost-agent.yaml'
rejects "a command README's table of commands does not link" "$d" \
	'README.md: the table of commands has no row linking docs/man/vmcost-trim.1.scd (vmcost trim)'

# --- a new exit code in the source only
d=$(copy enum)
edit "$d/lib/log.h" sed 's/^\(\tVMC_EXIT_INTERRUPTED = 130,\)/\tVMC_EXIT_NEW = 12,\n\1/'
rejects "a new code in enum vmc_exit that README does not document" "$d" \
	'README.md: exit code "12" is in lib/log.h (enum vmc_exit) but not in README'
rejects "... nor vmcost(1)" "$d" \
	'docs/man/vmcost.1.scd: exit code "12" is in lib/log.h (enum vmc_exit) but not in vmcost(1)'

# --- man-lint
if command -v groff >/dev/null 2>&1 || command -v mandoc >/dev/null 2>&1; then
	printf '.TH X 1\n.SH NAME\nx \\- y\n.XX bad macro\n' >"$tmp/bad.1"
	if tests/man-lint "$tmp/bad.1" >"$tmp/out" 2>&1; then
		fail "tests/man-lint accepts a page with an unknown macro"
	else
		ok "tests/man-lint fails on a page with an unknown macro"
	fi
else
	skip "tests/man-lint on a bad page: neither groff nor mandoc installed"
fi

suite_summary
