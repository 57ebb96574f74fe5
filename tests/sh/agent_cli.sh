#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# vmcost-agent run, without a VM: exit codes and messages for bad flags and bad configs, and the
# daemon's life on this machine (socket mode, API answers, SIGTERM/SIGINT remove the socket, a
# second agent is refused, a stale socket is replaced). AGENT_BIN selects the binary.
set -u
cd "$(dirname "$0")/../.." || exit 1
agent=${AGENT_BIN:-guest-agent/vmcost-agent}
# shellcheck source=tests/suite.sh
. tests/suite.sh
tmp=$(mktemp -d)
daemon_pid=

cleanup() {
	[ -z "$daemon_pid" ] || kill -9 "$daemon_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM


config() { # file, then YAML lines
	file=$1
	shift
	printf '%s\n' "$@" >"$file"
}

# wait_for TEST-EXPRESSION...: up to 5 s.
wait_for() {
	i=0
	while [ $i -lt 50 ]; do
		"$@" && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# start_daemon CONFIG: runs the agent in the background, sets daemon_pid.
start_daemon() {
	"$agent" run --config "$1" >"$tmp/daemon.out" 2>"$tmp/daemon.err" &
	daemon_pid=$!
}

# stop_daemon SIGNAL: returns the daemon's exit status (124 if it did not exit in 5 s).
stop_daemon() {
	kill "-$1" "$daemon_pid"
	i=0
	while kill -0 "$daemon_pid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if kill -0 "$daemon_pid" 2>/dev/null; then
		kill -9 "$daemon_pid"
		wait "$daemon_pid" 2>/dev/null
		daemon_pid=
		return 124
	fi
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	return "$rc"
}

http_status() { # METHOD PATH -> prints the status code
	curl -s -o "$tmp/body" -w '%{http_code}' --unix-socket "$sock" -X "$1" "http://localhost$2"
}

if [ ! -x "$agent" ]; then
	echo "agent_cli: $agent is not built (make agent, or AGENT_BIN=...)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

# ---- bad command lines and configs ------------------------------------------------------------
expect_stderr "unknown run option is a usage error" 2 "unknown option" "$agent" run --bogus
expect_stderr "--config without a file is a usage error" 2 "--config needs a file" "$agent" run --config
expect_stderr "a missing --config file is a usage error" 2 "cannot read (check the --config path): No such file or directory" \
	"$agent" run --config "$tmp/absent.yaml"
config "$tmp/unknown.yaml" "interval: 10m" "# comment" "flor: 1G"
expect_stderr "an unknown key names file, line and key" 8 "unknown.yaml:3: key \"flor\": unknown key" \
	"$agent" run --config "$tmp/unknown.yaml"
config "$tmp/value.yaml" "socket-mode: 0999"
expect_stderr "a bad value names file, line and key" 8 "value.yaml:1: key \"socket-mode\"" \
	"$agent" run --config "$tmp/value.yaml"
config "$tmp/syntax.yaml" "interval: [10m"
expect_stderr "a YAML syntax error names the file" 8 "syntax.yaml: line" \
	"$agent" run --config "$tmp/syntax.yaml"
config "$tmp/nodir.yaml" "socket: $tmp/no/such/dir/agent.sock" "socket-group: root"
expect_stderr "a socket in a missing directory fails to start" 1 "its directory does not exist" \
	"$agent" run --config "$tmp/nodir.yaml"
if [ -e "$tmp/no" ]; then fail "nothing created for the missing directory"; else ok "nothing created for the missing directory"; fi
mkdir "$tmp/open" && chmod 1777 "$tmp/open"
config "$tmp/open.yaml" "socket: $tmp/open/agent.sock" "socket-group: root"
expect_stderr "a socket in a directory others can write to is refused" 1 "lets others write there" \
	"$agent" run --config "$tmp/open.yaml"
if [ -z "$(ls -A "$tmp/open")" ]; then ok "nothing created in that directory"; else fail "nothing created in that directory ($(ls -A "$tmp/open"))"; fi

# ---- the daemon's life -------------------------------------------------------------------------
sock=$tmp/agent.sock
config "$tmp/agent.yaml" "socket: $sock" "socket-owner: 4242" "socket-group: root" "socket-mode: 0640" "interval: 1h"
start_daemon "$tmp/agent.yaml"
if wait_for test -S "$sock"; then ok "the daemon creates its socket"; else fail "the daemon creates its socket ($(cat "$tmp/daemon.err"))"; fi
mode=$(stat -c '%a %u %g' "$sock" 2>/dev/null)
if [ "$(id -u)" -ne 0 ]; then
	skip "socket owner from the config (giving the socket to another user needs root)"
elif [ "$mode" = "640 4242 0" ]; then ok "socket mode, owner and group from the config"; else fail "socket mode, owner and group from the config (got $mode)"; fi
if command -v curl >/dev/null 2>&1; then
	code=$(http_status GET /v1/version)
	if [ "$code" = 200 ] && grep -q '"api": 1' "$tmp/body"; then ok "GET /v1/version answers"; else fail "GET /v1/version answers ($code: $(cat "$tmp/body"))"; fi
	code=$(http_status POST /v1/status)
	if [ "$code" = 405 ] && grep -q '"error"' "$tmp/body"; then ok "a wrong method is a JSON 405"; else fail "a wrong method is a JSON 405 ($code)"; fi
else
	fail "curl is needed for the API checks (apt-get install curl)"
fi
expect_stderr "a second agent on the same socket is refused" 1 "another process is serving" \
	"$agent" run --config "$tmp/agent.yaml"
if [ -S "$sock" ] && kill -0 "$daemon_pid" 2>/dev/null; then ok "the first agent keeps its socket"; else fail "the first agent keeps its socket"; fi
# A request still running at SIGTERM gets the 2 s grace, not the idle timer's slack (60 s with
# interval: 1h, which the shutdown's short waits used to inherit).
curl -s -o /dev/null --max-time 20 --unix-socket "$sock" "http://localhost/v1/wakeups?seconds=15" &
curl_pid=$!
sleep 0.5
stop_daemon TERM
rc=$?
if [ "$rc" -eq 0 ]; then ok "SIGTERM with a request running: exit 0 within the grace"; else fail "SIGTERM with a request running: exit 0 within the grace (got $rc; 124: still running after 5 s)"; fi
kill "$curl_pid" 2>/dev/null
wait "$curl_pid" 2>/dev/null
if [ ! -e "$sock" ]; then ok "SIGTERM removes the socket"; else fail "SIGTERM removes the socket"; fi

# A killed agent leaves its socket behind; the next one replaces it.
start_daemon "$tmp/agent.yaml"
wait_for test -S "$sock"
kill -9 "$daemon_pid"
wait "$daemon_pid" 2>/dev/null
daemon_pid=
if [ -S "$sock" ]; then ok "SIGKILL leaves a stale socket"; else fail "SIGKILL leaves a stale socket"; fi
start_daemon "$tmp/agent.yaml"
if wait_for sh -c "kill -0 $daemon_pid && curl -sf -o /dev/null --unix-socket '$sock' http://localhost/v1/version"; then
	ok "a stale socket is replaced"
else
	fail "a stale socket is replaced ($(cat "$tmp/daemon.err"))"
fi
stop_daemon INT
rc=$?
if [ "$rc" -eq 0 ] && [ ! -e "$sock" ]; then ok "SIGINT: exit 0, socket removed"; else fail "SIGINT: exit 0, socket removed (exit $rc)"; fi

# A regular file at the socket path is somebody's data: refuse, keep it.
echo precious >"$sock"
expect_stderr "a regular file at the socket path is refused" 1 "exists and is not a socket" \
	"$agent" run --config "$tmp/agent.yaml"
if [ "$(cat "$sock")" = precious ]; then ok "the file is kept"; else fail "the file is kept"; fi

suite_summary
