#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The agent configuration the template fragment installs keeps the API socket reachable by the
# Lima user when the agent re-creates it. Lima forwards /run/vmcost-agent.sock with
# `ssh -O forward` over its SSH master connection, so the host's requests arrive as the Lima user
# with the groups that login had; an agent respawn (crash, rebuild, `rc-service cache-trim
# restart`) makes a new socket file. Here the real agent runs as root with the fragment's
# /etc/vmcost/agent.yaml as Lima renders it (user: nobody, who is in no group of the socket),
# and curl asks for /v1/status as that user before and after the agent is killed and started
# again. Needs root (the agent hands the socket to another user).
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/suite.sh
. tests/suite.sh
fragment=templates/vmcost-agent.yaml
agent=guest-agent/vmcost-agent
user=nobody

if [ "$(id -u)" != 0 ]; then
	skip "the agent hands its socket to another user only when run as root"
	suite_summary
	exit $?
fi
if [ ! -x "$agent" ]; then
	fail "$agent is not built: run make"
	suite_summary
	exit $?
fi
tmp=$(mktemp -d)
chmod 0755 "$tmp"
pid=""
stop_agent() {
	[ -n "$pid" ] || return 0
	kill "$1" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=""
}
trap 'stop_agent -KILL; rm -rf "$tmp"' EXIT

# The data entry for /etc/vmcost/agent.yaml: its inline content (indented block) or its file.
awk -v dir=templates '
	/^- / { inentry = 0; incontent = 0 }
	/^  path: \/etc\/vmcost\/agent.yaml$/ { inentry = 1; if (file != "") { system("cat " dir "/" file); done = 1 } }
	/^- mode: data$/ { file = "" }
	/^  file: / { file = $2; if (inentry && !done) { system("cat " dir "/" file); done = 1 } }
	incontent && inentry && /^    / { sub(/^    /, ""); print; next }
	incontent && inentry && /^$/ { print; next }
	/^  content: \|/ { incontent = 1; next }
	/^  [a-z]/ { incontent = 0 }
	' "$fragment" >"$tmp/fragment-agent.yaml"
check "the fragment installs /etc/vmcost/agent.yaml" test -s "$tmp/fragment-agent.yaml"
# Lima renders {{.User}} in data content; the test points the socket and nothing else elsewhere.
sed -e 's/{{\.User}}/'"$user"'/g' -e '/^socket:/d' -e '/^trim:/d' "$tmp/fragment-agent.yaml" >"$tmp/agent.yaml"
mkdir -m 0755 "$tmp/run"
printf '\nsocket: %s/run/vmcost-agent.sock\ntrim: false\n' "$tmp" >>"$tmp/agent.yaml"
sock=$tmp/run/vmcost-agent.sock

start_agent() {
	"$agent" run --config "$tmp/agent.yaml" >>"$tmp/agent.log" 2>&1 &
	pid=$!
	i=0
	while [ ! -S "$sock" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$sock" ]
}

# What the host's request through Lima's forward is: the Lima user, with that login's groups.
status_as_user() {
	runuser -u "$user" -- curl -sf -o /dev/null --max-time 5 --unix-socket "$sock" \
		http://localhost/v1/status
}

check "the agent starts with the fragment's configuration" start_agent
check "the Lima user reaches /v1/status" status_as_user
check "... because the socket is the Lima user's" test "$(stat -c %U "$sock")" = "$user"
# A respawn after SIGTERM (the agent removes its socket) and after a crash (a stale file left).
stop_agent -TERM
check "the agent starts again (socket re-created)" start_agent
check "the Lima user still reaches /v1/status after the re-creation" status_as_user
stop_agent -KILL
check "the agent starts again after a crash (stale socket replaced)" start_agent
check "the Lima user still reaches /v1/status after a crash" status_as_user
stop_agent -TERM
if [ "${SUITE_FAILED:-0}" != 0 ]; then
	sed 's/^/    agent: /' "$tmp/agent.log"
fi
suite_summary
