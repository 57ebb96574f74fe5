#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Docker lab guest (issue 2, acceptance 3): GET /version through $LIMA_HOME/NAME/sock/docker.sock
# with curl --unix-socket, then a container through the Engine API and through limactl shell.
# The guest cannot pull from Docker Hub, so the image is imported from the lab's busybox.
# Then deep idle (issue 21), dockerd in openrc.docker as OpenRC runs it: a freeze refused while a
# container runs; a client on docker.sock answered while frozen; 200 freeze/thaw cycles under a
# client loop; the agent killed with SIGKILL while the engine is frozen, then started again;
# limactl stop of the frozen guest, timed against a running one.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
lab_init

lab_start d1 --docker
sock=$LIMA_HOME/d1/sock/docker.sock
check "sock/docker.sock is a socket" test -S "$sock"
api() { # method path [curl args...]
	m=$1 p=$2
	shift 2
	curl -sS --unix-socket "$sock" -X "$m" "$@" "http://localhost$p"
}
version=$(api GET /version)
echo "GET /version: $(echo "$version" | jq -c '{Version, ApiVersion, KernelVersion}')"
check "GET /version has a Version" sh -c "echo '$version' | jq -e '.Version | type == \"string\"' >/dev/null"
check "the daemon runs the lab kernel" sh -c "echo '$version' | jq -e '.KernelVersion | startswith(\"6.\")' >/dev/null"

work=$(mktemp -d)
mkdir -p "$work/root/bin"
cache=${VMCOST_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vmcost-lab}
cp "$cache/busybox" "$work/root/bin/busybox"
tar -C "$work/root" -cf "$work/bb.tar" bin
imported=$(api POST '/images/create?fromSrc=-&repo=lab-busybox&tag=latest' \
	-H 'Content-Type: application/x-tar' --data-binary "@$work/bb.tar")
check "image imported through the API" sh -c "echo '$imported' | grep -q sha256:"
rm -rf "$work"

created=$(api POST /containers/create -H 'Content-Type: application/json' \
	-d '{"Image":"lab-busybox","Cmd":["/bin/busybox","echo","hello-through-the-api"]}')
id=$(echo "$created" | jq -r '.Id // empty')
check "container created" test -n "$id"
check "container started" sh -c "test \"\$(curl -s -o /dev/null -w '%{http_code}' --unix-socket '$sock' -X POST http://localhost/containers/$id/start)\" = 204"
waited=$(api POST "/containers/$id/wait" -m 120)
check "container exited 0" sh -c "echo '$waited' | jq -e '.StatusCode == 0' >/dev/null"
check "container output through the API" sh -c "curl -s --unix-socket '$sock' 'http://localhost/containers/$id/logs?stdout=1' | grep -q hello-through-the-api"
api DELETE "/containers/$id" >/dev/null
check "docker run through limactl shell" sh -c \
	'limactl shell d1 docker run --rm lab-busybox /bin/busybox echo hello-from-run | grep -qx hello-from-run'
check "vmcost-agent socket is forwarded in the Docker guest too" test -S "$LIMA_HOME/d1/sock/vmcost-agent.sock"

# ---- deep idle ------------------------------------------------------------------------------
asock=$LIMA_HOME/d1/sock/vmcost-agent.sock
agent_post() { # path: the HTTP status, the body in $work_body
	curl -sS -m 60 --unix-socket "$asock" -X POST -o "$work_body" -w '%{http_code}' \
		"http://localhost$1"
}
guest() { limactl shell d1 sh -c "$1"; }
frozen_now() { guest 'cat /sys/fs/cgroup/openrc.docker/cgroup.events' | sed -n 's/^frozen //p'; }
ping_docker() { curl -s -m 10 --unix-socket "$sock" http://localhost/_ping; }
guards() { guest 'pidof vmcost-agent' | wc -w; } # the daemon, and a guard while frozen
work_body=$(mktemp)
check "dockerd runs in /sys/fs/cgroup/openrc.docker" sh -c \
	"limactl shell d1 sh -c 'cat /proc/\$(pidof dockerd)/cgroup' | grep -qx '0::/openrc.docker'"

guest 'docker run -d --name sleeper lab-busybox /bin/busybox sleep 600' >/dev/null
code=$(agent_post /v1/engine/freeze)
echo "freeze with a container running: $code $(jq -c . "$work_body")"
check "freeze refused (409) while a container runs" test "$code" = 409
check "the refusal names the container" grep -q 'is running' "$work_body"
check "the engine still runs" test "$(frozen_now)" = 0
guest 'docker rm -f sleeper' >/dev/null

code=$(agent_post /v1/engine/freeze)
echo "freeze: $code $(jq -c '{state, action, took_ms, socket_guarded}' "$work_body")"
check "freeze answered 200" test "$code" = 200
check "cgroup.events says frozen 1" test "$(frozen_now)" = 1
start=$(date +%s%N)
pong=$(ping_docker)
took=$((($(date +%s%N) - start) / 1000000))
echo "GET /_ping on docker.sock while frozen: \"$pong\" in $took ms"
check "a client on docker.sock while frozen is answered" test "$pong" = OK
check "... and the engine runs again" test "$(frozen_now)" = 0

lost=$(mktemp)
stop_loop=$(mktemp -u)
(
	n=0
	while [ ! -e "$stop_loop" ]; do
		[ "$(ping_docker)" = OK ] || echo "lost $n" >>"$lost"
		n=$((n + 1))
	done
	echo "$n" >"$stop_loop.count"
) &
loop=$!
bad_cycles=0
i=0
while [ $i -lt 200 ]; do
	c1=$(agent_post /v1/engine/freeze)
	c2=$(agent_post /v1/engine/thaw)
	[ "$c1" = 200 ] && [ "$c2" = 200 ] || bad_cycles=$((bad_cycles + 1))
	i=$((i + 1))
done
: >"$stop_loop"
wait "$loop"
sent=$(cat "$stop_loop.count")
echo "200 freeze/thaw cycles: $bad_cycles not answered 200; client loop: $sent requests, $(wc -l <"$lost") lost"
check "200 freeze/thaw cycles all answered 200" test "$bad_cycles" = 0
check "the client loop ran during the cycles" test "$sent" -gt 0
check "the client loop lost no request" test ! -s "$lost"
check "nothing is left frozen" sh -c \
	"! limactl shell d1 sh -c 'grep -l \"^frozen 1\" /sys/fs/cgroup/*/cgroup.events /sys/fs/cgroup/*/*/cgroup.events 2>/dev/null' | grep -q ."
check "docker.sock is dockerd's again (no set-aside socket)" sh -c \
	"! limactl shell d1 sh -c 'ls /var/run/docker.sock.vmcost-frozen 2>/dev/null' | grep -q ."
check "no guard is left after the cycles" test "$(guards)" -eq 1
rm -f "$lost" "$stop_loop" "$stop_loop.count"

code=$(agent_post /v1/engine/freeze)
check "freeze before the kill answered 200" test "$code" = 200
# shellcheck disable=SC2016 # expands in the guest
guest 'kill -9 $(cat /run/vmcost-agent.pid)'
check "killed agent: the engine is still frozen" test "$(frozen_now)" = 1
# shellcheck disable=SC2016 # expands in the guest
guest 'PATH=/opt/lab:/usr/sbin:$PATH lab-agent start'
check "restarted agent: the engine runs" test "$(frozen_now)" = 0
check "restarted agent: the freeze record is gone" sh -c \
	"! limactl shell d1 sh -c 'ls /run/vmcost-agent/engine.json 2>/dev/null' | grep -q ."
# The guard relays nothing and exits on the restarted agent's SIGTERM; give it 10 s under TCG.
i=0
while [ "$(guards)" -gt 1 ] && [ $i -lt 20 ]; do
	sleep 0.5
	i=$((i + 1))
done
# shellcheck disable=SC2016 # expands in the guest
[ "$(guards)" -eq 1 ] || guest 'for p in $(pidof vmcost-agent); do echo "$p: $(tr "\0" " " </proc/$p/cmdline) $(grep ^State /proc/$p/status)"; done'
check "restarted agent: the guard is gone" test "$(guards)" -eq 1
check "restarted agent: docker.sock answers" test "$(ping_docker)" = OK
rm -f "$work_body"

# limactl stop of a frozen guest takes no longer than of a running one (+5 s for this machine's
# noise): a frozen dockerd ignores SIGTERM until it is thawed.
timed_stop() {
	t=$(date +%s)
	limactl stop d1 >/dev/null 2>&1
	echo $(($(date +%s) - t))
}
code=$(agent_post /v1/engine/freeze)
check "frozen before limactl stop (HTTP $code)" test "$code" = 200
frozen_s=$(timed_stop)
limactl start d1 >/dev/null 2>&1
docker_answers() { [ "$(ping_docker)" = OK ]; }
check "started again: docker.sock answers" lab_wait_until 120 docker_answers
running_s=$(timed_stop)
echo "limactl stop: $frozen_s s frozen, $running_s s running"
check "stopping frozen ($frozen_s s) takes no longer than running ($running_s s, +5 s)" \
	test "$frozen_s" -le $((running_s + 5))
summary
