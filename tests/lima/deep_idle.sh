#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lima-check: last
# Deep idle on real Lima 2.2.0 (the Debian 12 instance, docker.io under systemd, the agent of the
# fragment): the agent freezes the engine's cgroups (docker.service and containerd.service) and
# thaws them, through Lima's forwarded sockets as autostop and a user reach them.
#   - a freeze is refused, with the reason, while a container runs;
#   - while frozen, a client straight on the forwarded docker.sock (not through autostop) is
#     answered: its connection thaws the engine;
#   - CYCLES freeze/thaw cycles (default 200, as issue 21 asks; VMCOST_DEEP_IDLE_CYCLES) under
#     a client loop on docker.sock lose no request and leave no cgroup frozen and no guard;
#   - the agent killed with SIGKILL while the engine is frozen, started again: the engine runs;
#   - `limactl stop` of a frozen instance takes no longer than of a running one (plus 10 s for
#     the noise of this machine): the engine is thawed before the services stop.
# It stops the instance (so it runs after the suites that need it running) and leaves it stopped.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=docker-lib.sh
. "$(dirname "$0")/docker-lib.sh"
lima_init
lima_up any
CYCLES=${VMCOST_DEEP_IDLE_CYCLES:-200}
docker=/usr/bin/docker
dir=$(lima_dir)
sock=$dir/sock/docker.sock
agent=$dir/sock/vmcost-agent.sock
tmp=$LIMA_TEST_STAGE/deep-idle
mkdir -p "$tmp"
[ "$(id -u)" = 0 ] && chown "$LIMA_TEST_USER:" "$tmp"
{ lima_docker_access "$sock" && lima_docker_apparmor; } || {
	fail "the Lima user cannot reach /var/run/docker.sock in the guest"
	summary
}
as_docker() { as_lima env DOCKER_HOST="unix://$sock" "$@"; }
# api METHOD PATH: the agent's answer through Lima's forward; the HTTP code in $tmp/code.
api() {
	as_lima curl -s -m 30 -o "$tmp/body" -w '%{http_code}' -X "$1" --unix-socket "$agent" \
		"http://agent$2" >"$tmp/code" 2>/dev/null
	cat "$tmp/body" 2>/dev/null
}
engine_state() { api GET /v1/engine | jq -r '.state // "unknown"'; }
is_state() { [ "$(engine_state)" = "$1" ]; }
ping_ms() { # on a new connection to docker.sock: milliseconds, or nothing
	as_lima curl -s -m 20 -o /dev/null -w '%{http_code} %{time_total}\n' --unix-socket "$sock" \
		http://localhost/_ping | awk '$1 == 200 { printf "%d\n", $2 * 1000 }'
}
# Frozen cgroups and guard processes left in the guest, one a line.
leftovers() {
	# shellcheck disable=SC2016 # for the guest's shell
	lima_shell sudo sh -c 'grep -l "^1" $(find /sys/fs/cgroup -name cgroup.freeze) 2>/dev/null;
		pgrep -f "[v]mcost-agent engine guard" 2>/dev/null; true'
}

check "the engine runs and the agent can freeze it" lima_wait 60 is_state running

# ---- refused while a container runs ---------------------------------------------------------
lima_busybox_tar "$tmp/busybox.tar"
as_docker "$docker" import "$tmp/busybox.tar" vmcost-busybox:latest >/dev/null
as_docker "$docker" rm -f deepidle >/dev/null 2>&1
as_docker "$docker" run -d --name deepidle vmcost-busybox sleep 600 >/dev/null
body=$(api POST /v1/engine/freeze)
check "a freeze while a container runs is refused (HTTP $(cat "$tmp/code"))" test "$(cat "$tmp/code")" = 409
check "... saying why: $(echo "$body" | jq -r 'if (.error | type) == "object" then .error.message else (.error // .refusal // .) end' | cut -c1-120)" \
	sh -c "echo '$body' | grep -qi 'container'"
check "... and the engine still runs" is_state running
as_docker "$docker" rm -f deepidle >/dev/null

# ---- a direct client while frozen -----------------------------------------------------------
api POST /v1/engine/freeze >/dev/null
check "the freeze succeeds with no container (HTTP $(cat "$tmp/code"))" test "$(cat "$tmp/code")" = 200
check "the agent says frozen" is_state frozen
ms=$(ping_ms)
check "a client on the forwarded docker.sock is answered while frozen (${ms:-no answer} ms)" test -n "$ms"
check "its connection thawed the engine" lima_wait 20 is_state running

# ---- cycles under a client loop ---------------------------------------------------------------
as_lima sh -c ": >'$tmp/loop'"
as_lima sh -c "while [ ! -f '$tmp/stop' ]; do
	c=\$(curl -s -m 20 -o /dev/null -w '%{http_code}' --unix-socket '$sock' http://localhost/_ping)
	echo \"\$c\" >>'$tmp/loop'; sleep 0.2; done" &
loop_pid=$!
refused=0
t0=$(date +%s)
i=0
while [ "$i" -lt "$CYCLES" ]; do
	i=$((i + 1))
	api POST /v1/engine/freeze >/dev/null
	# A client may thaw it between the two requests (409: nothing frozen to freeze is fine too).
	case $(cat "$tmp/code") in 200) ;; *) refused=$((refused + 1)) ;; esac
	api POST /v1/engine/thaw >/dev/null
done
took=$(($(date +%s) - t0))
touch "$tmp/stop"
wait "$loop_pid" 2>/dev/null
requests=$(wc -l <"$tmp/loop" | tr -d ' ')
lost=$(grep -vc '^200$' "$tmp/loop")
echo "  $CYCLES cycles in $took s ($refused freezes refused or raced); $requests client requests, $lost not answered 200"
check "$CYCLES freeze/thaw cycles under a client loop lose no request ($lost of $requests)" \
	test "$lost" = 0 -a "$requests" -gt 0
check "afterwards the engine runs" lima_wait 20 is_state running
left=$(leftovers)
check "no cgroup is left frozen and no guard runs${left:+: $left}" test -z "$left"

# ---- the agent killed while frozen --------------------------------------------------------------
api POST /v1/engine/freeze >/dev/null
check "frozen again before the kill" is_state frozen
# The daemon itself (systemd's main pid), not the guard process it spawned.
# shellcheck disable=SC2016 # for the guest's shell
lima_shell sudo sh -c 'kill -KILL $(systemctl show -p MainPID --value cache-trim.service)'
# systemd restarts it (Restart=); a restarted agent thaws what its record says it froze.
restarted() { lima_shell sudo systemctl is-active --quiet cache-trim.service && is_state running; }
check "the killed agent, restarted, thawed the engine" lima_wait 60 restarted
ms=$(ping_ms)
check "docker.sock answers after the restart (${ms:-no answer} ms)" test -n "$ms"

# ---- limactl stop, frozen and running -----------------------------------------------------------
timed_stop() {
	t=$(date +%s)
	lima_ctl stop "$LIMA_INSTANCE" >"$tmp/stop.log" 2>&1
	rc=$?
	echo "$(($(date +%s) - t)) $rc"
}
api POST /v1/engine/freeze >/dev/null
check "frozen before limactl stop" is_state frozen
# shellcheck disable=SC2046 # two words: seconds and exit code
set -- $(timed_stop)
frozen_s=$1
check "limactl stop of the frozen instance: exit $2 after $1 s" test "$2" = 0
check "... a clean stop (no forced kill in Lima's log)" sh -c "! grep -qi 'force' '$tmp/stop.log'"
lima_up fpr
# docker.service is socket-activated in this image: the first client starts dockerd.
ms=$(ping_ms)
check "docker.sock answers after the start (${ms:-no answer} ms)" test -n "$ms"
check "the engine runs after the start" lima_wait 120 is_state running
# shellcheck disable=SC2046
set -- $(timed_stop)
running_s=$1
check "limactl stop of the running instance: exit $2 after $1 s" test "$2" = 0
check "stopping frozen ($frozen_s s) takes no longer than running ($running_s s, +10 s of noise)" \
	test "$frozen_s" -le $((running_s + 10))
summary
