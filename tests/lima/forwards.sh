#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Lima's forwarded host sockets on real Lima 2.2.0 (issue 22, forwards that heal): Lima forwards
# docker.sock and vmcost-agent.sock once over its SSH master and never again. With docker.sock's
# forward cancelled, vmcost doctor fails naming it and printing the command that heals it; a
# /_ping through vmcost autostop is answered within 10 s by re-creating the forward, with no
# limactl start; afterwards the forwarded docker.sock answers directly. With vmcost-agent.sock's
# forward cancelled on its own, doctor names it (docker.sock still fine) and --heal brings it
# back. With the SSH master killed (both forwards die with it), vmcost doctor --heal brings both
# back.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=docker-lib.sh
. "$(dirname "$0")/docker-lib.sh"
lima_init
lima_up any
dir=$(lima_dir)
docker_sock=$dir/sock/docker.sock
relay=$dir/sock/docker-autostop.sock
log=$LIMA_TEST_STAGE/forwards-autostop.log
host=lima-$LIMA_INSTANCE
ssh_lima() { as_lima ssh -F "$dir/ssh.config" "$@"; }
ping_direct() { as_lima curl -s -m 5 --unix-socket "$docker_sock" http://localhost/_ping; }
out=$LIMA_TEST_STAGE/forwards-doctor.out
# doctor_says TEXT: the last doctor output has a line starting with TEXT.
doctor_says() { grep -q "^$1" "$out"; }
has_fixed() { grep -qF -- "$1" "$out"; }
doctor() { lima_vmcost doctor "$LIMA_INSTANCE" "$@" >"$out" 2>&1; }

{ lima_docker_access "$docker_sock" && lima_docker_apparmor; } || {
	fail "the Lima user cannot reach /var/run/docker.sock in the guest"
	summary
}
answers() { [ "$(ping_direct)" = OK ]; }
check "docker.sock answers before anything is done" lima_wait 300 answers
doctor
grep "Host socket" "$out" | sed 's/^/  /'
check "doctor: docker.sock answers" doctor_says "ok    Host socket docker.sock"
check "doctor: vmcost-agent.sock answers" doctor_says "ok    Host socket vmcost-agent.sock"

# ---- docker.sock's forward cancelled, as after host sleep ---------------------------------------
ssh_lima -O cancel -L "$docker_sock:/var/run/docker.sock" "$host" 2>/dev/null
check "the forward is cancelled: docker.sock no longer answers" test "$(ping_direct)" != OK
doctor
rc=$?
grep -A2 "Host socket docker.sock" "$out" | sed 's/^/  /'
check "doctor exits non-zero ($rc)" test "$rc" != 0
check "doctor names docker.sock as dead" doctor_says "fail  Host socket docker.sock: dead"
check "doctor gives the command that heals it" has_fixed \
	"fix: rm -f $docker_sock && ssh -F $dir/ssh.config -O forward -L $docker_sock:/var/run/docker.sock $host"

# Deep idle off: this suite is about the forward, not about a frozen engine.
as_lima vmcost autostop "$LIMA_INSTANCE" --idle 1h --freeze-after 0 >"$log" 2>&1 &
daemon_pid() { lima_vmcost autostop "$LIMA_INSTANCE" --status --json 2>/dev/null | jq -r .pid; }
listening() { [ -S "$relay" ] && [ -n "$(daemon_pid)" ]; }
check "vmcost autostop listens" lima_wait 60 listening
pid=$(daemon_pid)
trap 'kill -TERM "$pid" 2>/dev/null; lima_cleanup' EXIT
t0=$(date +%s)
answer=$(as_lima curl -s -m 30 --unix-socket "$relay" http://localhost/_ping)
took=$(($(date +%s) - t0))
check "a /_ping through autostop is answered (\"$answer\")" test "$answer" = OK
check "within 10 s ($took s)" test "$took" -le 10
no_start() { ! grep -q 'limactl start' "$log"; }
check "no limactl start ran" no_start
grep -v "^vmcost: warning" "$log" | cut -d' ' -f2- | sed 's/^/  /'
check "afterwards the forwarded docker.sock answers directly" test "$(ping_direct)" = OK
kill -TERM "$pid" 2>/dev/null

# ---- vmcost-agent.sock's forward cancelled on its own --------------------------------------------
agent_sock=$dir/sock/vmcost-agent.sock
agent_answers() {
	as_lima curl -s -m 5 -o /dev/null -w '%{http_code}' --unix-socket "$agent_sock" \
		http://localhost/v1/status | grep -qx 200
}
ssh_lima -O cancel -L "$agent_sock:/run/vmcost-agent.sock" "$host" 2>/dev/null
agent_dead() { ! agent_answers; }
check "the agent's forward is cancelled: vmcost-agent.sock no longer answers" agent_dead
doctor
rc=$?
grep -A2 "Host socket vmcost-agent.sock" "$out" | sed 's/^/  /'
check "doctor exits non-zero with the agent's forward gone ($rc)" test "$rc" != 0
check "doctor names vmcost-agent.sock as dead" doctor_says "fail  Host socket vmcost-agent.sock: dead"
check "doctor still finds docker.sock alive" doctor_says "ok    Host socket docker.sock"
doctor --heal
rc=$?
grep "Host socket" "$out" | sed 's/^/  /'
check "doctor --heal exits 0 ($rc)" test "$rc" = 0
check "doctor --heal healed vmcost-agent.sock" doctor_says "ok    Host socket vmcost-agent.sock: was dead"
check "the forwarded vmcost-agent.sock answers directly again" agent_answers

# ---- the SSH master killed: both forwards die with it ------------------------------------------
ssh_lima -O exit "$host" 2>/dev/null
sleep 1
doctor
rc=$?
check "doctor fails with the master gone ($rc)" test "$rc" != 0
doctor --heal
rc=$?
grep "Host socket" "$out" | sed 's/^/  /'
check "doctor --heal exits 0 ($rc)" test "$rc" = 0
check "doctor --heal healed docker.sock" doctor_says "ok    Host socket docker.sock: was dead"
check "doctor --heal healed vmcost-agent.sock" doctor_says "ok    Host socket vmcost-agent.sock: was dead"
check "docker.sock answers directly again" test "$(ping_direct)" = OK
summary
