#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lima-check: last
# vmcost autostop on real Lima 2.2.0 (issue 12, acceptance 6 and the end-to-end run): the
# daemon relays to Lima's own forwarded docker.sock and drives the real limactl. A testcontainers
# session with Ryuk goes through the relay (runs a container, reads its published port on the
# host, ends, Ryuk cleans up); after the idle period the daemon stops the instance with
# `limactl stop`; polls are answered from its snapshot while it stays stopped (curl and the
# docker CLI); `docker run` then starts it with `limactl start` and gets Docker's answer; the
# docker CLI's attached run works through it; SIGTERM leaves the VM running. It stops and
# starts the instance, so it runs last.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=docker-lib.sh
. "$(dirname "$0")/docker-lib.sh"
lima_init
lima_up any
IDLE=30
docker=/usr/bin/docker
dir=$(lima_dir)
relay=$dir/sock/docker-autostop.sock
images=$LIMA_TEST_STAGE/images
log=$LIMA_TEST_STAGE/autostop.log
if [ ! -x "$docker" ]; then
	fail "Debian's docker CLI is missing (make deps: docker.io)"
	summary
fi
{ lima_docker_access "$dir/sock/docker.sock" && lima_docker_apparmor; } || {
	fail "the Lima user cannot reach /var/run/docker.sock in the guest"
	summary
}
lima_busybox_tar "$images/busybox.tar"
as_lima env DOCKER_HOST="unix://$dir/sock/docker.sock" "$docker" import "$images/busybox.tar" \
	vmcost-busybox:latest >/dev/null
if ! tc=$(lima_testcontainers "$images"); then
	fail "testcontainers client and Ryuk could not be built (tests/lima/testcontainers-build)"
	summary
fi

# The daemon runs as the test user (its instance, its socket); as_lima keeps it in the
# foreground of a background job. Its own pid comes from its status.
# The daemon's limactl start boots QEMU as lima_boot does (the TCG wrapper, and the balloon the
# instance has): QEMU_SYSTEM_X86_64 is in its environment, as the README's Linux-host recipe
# puts it in the user's. TCG on a shared machine: a restart can take many minutes, and held
# clients wait that long.
qemu=$LIMA_WRAPPER
[ "$(lima_balloon)" = fpr ] && qemu="$qemu -device virtio-balloon-pci,free-page-reporting=on"
as_lima env QEMU_SYSTEM_X86_64="$qemu" vmcost autostop "$LIMA_INSTANCE" --idle "${IDLE}s" \
	--start-timeout 40m >"$log" 2>&1 &
daemon_pid() { lima_vmcost autostop "$LIMA_INSTANCE" --status --json 2>/dev/null | jq -r .pid; }
listening() { [ -S "$relay" ] && [ -n "$(daemon_pid)" ]; }
check "vmcost autostop listens on $relay" lima_wait 60 listening
pid=$(daemon_pid)
stop_daemon() { kill -TERM "$pid" 2>/dev/null; }
trap 'stop_daemon; lima_cleanup' EXIT
log_has() { grep -qF -- "$1" "$log"; }
as_relay() { as_lima env DOCKER_HOST="unix://$relay" "$@"; }

# Attached session through the relay and Lima's forward.
out=$(echo stdin-through-the-relay | as_relay "$docker" run --rm -i vmcost-busybox cat 2>&1)
check "docker run -i through the relay: \"$out\"" test "$out" = stdin-through-the-relay

# Acceptance 6: testcontainers with Ryuk through the relay, in the environment vmcost env
# gives while the daemon serves the instance.
env_json=$(lima_vmcost env "$LIMA_INSTANCE" --json)
tc_env=$(echo "$env_json" | jq -r '.env | to_entries[] | "\(.key)=\(.value)"')
check "vmcost env names the relay: $(echo "$env_json" | jq -r .env.DOCKER_HOST)" \
	test "$(echo "$env_json" | jq -r .env.DOCKER_HOST)" = "unix://$relay"
# shellcheck disable=SC2086 # one NAME=VALUE word a line
out=$(lima_tc_run "$tc" $tc_env 2>&1)
echo "$out" | sed 's/^/  /'
check "testcontainers through the relay ran a container and read its published port" \
	sh -c "echo '$out' | grep -q 'answered: hello from vmcost'"
left_id=$(echo "$out" | sed -n 's/^container \([0-9a-f]*\) left for Ryuk$/\1/p')
gone() { ! as_relay "$docker" inspect "$left_id" >/dev/null 2>&1; }
check "Ryuk removed what the session left" lima_wait 180 gone

# ... and then the VM is stopped after the idle period.
stopped() { log_has "stopped $LIMA_INSTANCE in"; }
check "stopped after the idle period ($IDLE s)" lima_wait $((IDLE * 3 + 600)) stopped
check "limactl says Stopped" test "$(lima_status)" = Stopped
grep -F "stopped $LIMA_INSTANCE in" "$log" | sed 's/^/  /'

# While it is stopped, polls are answered from the snapshot taken just before the stop, marked,
# and the VM stays stopped: curl's GET /version, and the docker CLI's version, ps -a and images
# (issue 22 item 3).
headers=$(as_lima curl -s -m 30 -D - -o /dev/null --unix-socket "$relay" http://localhost/version)
check "GET /version while stopped is answered from the snapshot (X-Vmcost-Snapshot)" \
	sh -c "printf '%s\n' \"\$1\" | grep -qi '^X-Vmcost-Snapshot: '" sh "$headers"
for cmd in version "ps -a" images; do
	# shellcheck disable=SC2086 # the subcommand and its flag
	out=$(as_relay timeout 60 "$docker" $cmd 2>&1)
	check "docker $cmd answered while stopped" test $? = 0
	printf '%s\n' "$out" | head -n 4 | sed 's/^/  /'
done
check "the polls left it Stopped" test "$(lima_status)" = Stopped
check "no limactl start for them" sh -c "! grep -q 'limactl start' '$log'"

# A request that is not a poll starts it with the real limactl start: docker run.
t0=$(date +%s)
answer=$(as_relay "$docker" run --rm vmcost-busybox echo woken-by-run 2>&1)
t1=$(date +%s)
case $answer in
woken-by-run) ok "docker run through the relay started it and ran: $((t1 - t0)) s" ;;
*) fail "docker run through the relay: \"$answer\"; $(tail -n 3 "$log")" ;;
esac
grep -F "answers /_ping" "$log" | sed 's/^/  /'
check "limactl says Running" test "$(lima_status)" = Running

out=$(lima_vmcost autostop "$LIMA_INSTANCE" --status 2>&1)
echo "$out" | sed 's/^/  /'
check "--status shows the last start and what the last stop gave back" \
	sh -c "echo '$out' | grep -q 'last stop:   host free memory'"

stop_daemon
stopped_daemon() { ! kill -0 "$pid" 2>/dev/null; }
check "SIGTERM: the daemon exits" lima_wait 20 stopped_daemon
check "and leaves the VM running" test "$(lima_status)" = Running
echo "---- decisions"
sed 's/^/  /' "$log"
summary
