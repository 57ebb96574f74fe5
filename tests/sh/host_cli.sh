#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The vmcost binary itself, without a VM: command dispatch, --help and --version, exit codes of
# bad command lines, JSON on stdout (errors included), no colour when not on a terminal, and a
# closed stdout pipe. Instances are fake directories in a private LIMA_HOME. HOST_BIN selects
# the binary.
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
mkdir -p "$tmp/bin" "$LIMA_HOME"
# No limactl: the instance directories are read directly.
PATH="$tmp/bin:/usr/bin:/bin"
command -v limactl >/dev/null 2>&1 && PATH="$tmp/bin"
export PATH

expect "vmcost --version" 0 "$vmcost" --version
has "--version names vmcost" "$tmp/out" "vmcost "
expect "vmcost with no command" 2 "$vmcost"
expect "unknown command" 2 "$vmcost" frobnicate
has "unknown command says how to get help" "$tmp/err" "vmcost --help"
expect "vmcost --help" 0 "$vmcost" --help
commands="list footprint idle disk wakeups doctor trim balloon env memtest load autostop"
for c in $commands; do
	has "--help lists $c" "$tmp/out" "  $c "
done
for c in $commands; do
	expect "vmcost $c --help" 0 "$vmcost" "$c" --help
	has "$c --help has a usage line" "$tmp/out" "usage: vmcost $c"
done

# json_usage_error NAME ARGS...: exit 2, the usage line on stderr, and with --json the error
# document {"error": {"code": 2, ...}} on stdout, like every other error.
json_usage_error() {
	name=$1
	shift
	expect "$name" 2 "$vmcost" "$@" --json
	if json_true "$tmp/out" '.error.code == 2 and (.error.message | length > 0)'; then
		ok "$name: the JSON error document on stdout"
	else
		fail "$name: no JSON error document on stdout: $(head -c 200 "$tmp/out")"
	fi
	has "$name: the usage line on stderr" "$tmp/err" "usage: vmcost $1 "
}
for c in $commands; do
	json_usage_error "$c with an unknown option" "$c" dev --no-such-option
done
json_usage_error "memtest --size that is no size" memtest dev --size lots
json_usage_error "memtest --workload that does not exist" memtest dev --workload nope
json_usage_error "memtest --size with pgbench" memtest dev --workload pgbench --size 1G
json_usage_error "memtest --hold without a value" memtest dev --hold
json_usage_error "memtest with two names" memtest dev other
json_usage_error "load --clients 0" load dev --clients 0
json_usage_error "load --interval longer than --idle" load dev --idle 10 --interval 20
json_usage_error "load --duration that is no duration" load dev --duration soon
json_usage_error "autostop --idle that is no duration" autostop dev --idle soon
json_usage_error "env --direct=yes" env dev --direct=yes

expect "list with no instances" 0 "$vmcost" list
has "list says where it looked" "$tmp/out" "No instances in $LIMA_HOME"
expect "list --json with no instances" 0 "$vmcost" list --json
if json_true "$tmp/out" '.instances == []'; then ok "list --json: empty array"; else fail "list --json: $(cat "$tmp/out")"; fi

# A running instance whose "VM process" is a sleeping child of this shell.
sleep 300 &
child=$!
mkdir -p "$LIMA_HOME/dev"
printf 'vmType: qemu\nmemory: 2GiB\ncpus: 2\n' >"$LIMA_HOME/dev/lima.yaml"
echo $$ >"$LIMA_HOME/dev/ha.pid"
echo "$child" >"$LIMA_HOME/dev/qemu.pid"
mkdir -p "$LIMA_HOME/off"
printf 'vmType: qemu\n' >"$LIMA_HOME/off/lima.yaml"

expect "footprint dev" 0 "$vmcost" footprint dev
has "footprint names the process and the method" "$tmp/out" "chosen by qemu.pid"
if grep -q "$(printf '\033')" "$tmp/out"; then fail "no colour when stdout is not a terminal"; else
	ok "no colour when stdout is not a terminal"
fi
expect "footprint dev --json" 0 "$vmcost" footprint dev --json
if json_true "$tmp/out" ".process.pid == $child and .process.footprint > 0"; then
	ok "footprint --json: the pid from qemu.pid, a footprint"
else
	fail "footprint --json: $(head -c 300 "$tmp/out")"
fi
expect "footprint of an unknown instance" 3 "$vmcost" footprint ghost --json
if json_true "$tmp/out" '.error.code == 3'; then ok "the error is JSON on stdout too"; else
	fail "error JSON: $(cat "$tmp/out")"
fi
expect "footprint of a stopped instance" 4 "$vmcost" footprint off
has "stopped says how to start it" "$tmp/err" "start it with limactl start off"
# An error keeps the reason the system gave (here: lima.yaml is a directory), on stderr and in
# the JSON error document.
mkdir -p "$LIMA_HOME/odd/lima.yaml"
expect "footprint of an instance whose lima.yaml is a directory" 1 "$vmcost" footprint odd --json
has "the message says why lima.yaml cannot be read" "$tmp/err" "odd/lima.yaml: Is a directory"
if json_true "$tmp/out" '.error.code == 1 and (.error.message | endswith("lima.yaml: Is a directory"))'; then
	ok "the JSON error keeps the reason"
else
	fail "JSON error without the reason: $(cat "$tmp/out")"
fi
rm -r "$LIMA_HOME/odd"
expect "idle with a bad DURATION" 2 "$vmcost" idle dev soon
expect "idle dev 0.4 0.2" 0 "$vmcost" idle dev 0.4 0.2 --json
if json_true "$tmp/out" '(.samples | length) == 2'; then ok "idle: 2 intervals"; else
	fail "idle: $(head -c 300 "$tmp/out")"
fi
expect "trim without an agent" 5 "$vmcost" trim dev
expect "--pid of a dead process" 6 "$vmcost" footprint dev --pid 999999
expect "env dev" 0 "$vmcost" env dev
has "env exports DOCKER_HOST" "$tmp/out" "export DOCKER_HOST='unix://$LIMA_HOME/dev/sock/docker.sock'"
# A reader that goes away early: vmcost notices the closed pipe and exits 1, it is not killed by
# SIGPIPE (exit 141) and does not run on forever.
{
	timeout 20 "$vmcost" footprint dev --watch 0.1 --json 2>/dev/null
	echo $? >"$tmp/rc"
} | head -n 1 >/dev/null
rc=$(cat "$tmp/rc")
if [ "$rc" -eq 1 ]; then ok "a closed stdout ends footprint --watch with exit 1"; else
	fail "a closed stdout: exit $rc, expected 1"
fi
suite_summary
